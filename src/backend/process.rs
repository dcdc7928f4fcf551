//! Running a backend CLI: explicit stdin, stdout streamed as it arrives, stderr kept for error
//! messages, its own process group (so Ctrl+C and the timeout stop all of it), a deadline.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::cli::Invocation;
use super::{End, Outcome};
use crate::error::Error;
use crate::output::{MAX_REPLY, Sink, sanitize};
use crate::signal::{self, ChildGroup};
use crate::target::Cli;

/// How long output pipes may stay open after the backend itself has exited.
const LINGER: Duration = Duration::from_millis(500);

/// Keep at most this much of a child's stderr (the end of it).
const STDERR_KEEP: usize = 64 * 1024;

pub(crate) fn run(inv: &Invocation<'_>, timeout: Duration, sink: &mut dyn Sink) -> Outcome {
    let mut cmd = Command::new(&inv.program);
    cmd.args(&inv.args)
        .stdin(if inv.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    stop_with_parent(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(String::new(), spawn_error(inv, &e)),
    };
    let group = ChildGroup::register(child.id());
    // Stops the backend's whole group should `ai` die without doing it (dropped, and so stood
    // down, when this function returns).
    #[cfg(target_os = "linux")]
    let reaper = super::reaper::Reaper::watch(child.id());
    let pid = child.id() as i32;
    let timed_out = AtomicBool::new(false);
    let mut received: Vec<u8> = Vec::new();
    let mut sink_error: Option<Error> = None;
    let mut read_error: Option<std::io::Error> = None;
    // The reply is held whole (to be saved in the chat): past MAX_REPLY the backend is stopped.
    let mut too_long = false;

    let (status, stderr) = std::thread::scope(|scope| {
        if let (Some(text), Some(mut pipe)) = (inv.stdin.as_deref(), child.stdin.take()) {
            scope.spawn(move || {
                // A child that exits without reading all of it closes the pipe: not our error.
                let _ = pipe.write_all(text.as_bytes());
            });
        }
        // Each reader holds a sender; when both are done the channel disconnects.
        let (reading_tx, reading_rx) = mpsc::channel::<()>();
        let err_reader = child.stderr.take().map(|mut pipe| {
            let reading = reading_tx.clone();
            scope.spawn(move || {
                let _reading = reading;
                let mut kept = Vec::new();
                let mut buf = [0u8; 8192];
                loop {
                    match pipe.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            kept.extend_from_slice(&buf[..n]);
                            if kept.len() > 2 * STDERR_KEEP {
                                kept.drain(..kept.len() - STDERR_KEEP);
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                kept
            })
        });
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let timed_out = &timed_out;
        scope.spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(timeout) {
                timed_out.store(true, Ordering::SeqCst);
                signal::terminate_group(pid);
            }
        });
        let mut out = child.stdout.take();
        let waiter = scope.spawn(move || {
            let status = child.wait();
            // The backend is done. Something it left running in the background that still
            // holds its stdout or stderr is stopped after a grace period, not waited for.
            if let Err(mpsc::RecvTimeoutError::Timeout) = reading_rx.recv_timeout(LINGER) {
                signal::terminate_group(pid);
            }
            status
        });

        if let Some(out) = out.as_mut() {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match out.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if received.len() + n > MAX_REPLY {
                            too_long = true;
                            signal::terminate_group(pid);
                            break;
                        }
                        received.extend_from_slice(&buf[..n]);
                        if !inv.hold_stdout
                            && let Err(e) = sink.chunk(&buf[..n])
                        {
                            sink_error = Some(e);
                            signal::terminate_group(pid);
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        read_error = Some(e);
                        break;
                    }
                }
            }
        }
        drop(out);
        drop(reading_tx);
        let stderr = err_reader.and_then(|h| h.join().ok()).unwrap_or_default();
        let status = waiter
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the wait for the backend failed")));
        drop(done_tx);
        (status, stderr)
    });
    // The backend has been waited for: stand the reaper down before its group ID can be
    // reused by anyone else.
    #[cfg(target_os = "linux")]
    drop(reaper);
    drop(group);

    // The bytes themselves when they are UTF-8: no copy of a large reply.
    let text = String::from_utf8(received)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    let received = text.as_bytes();
    if let Some(e) = sink_error {
        return failed(text, e);
    }
    if too_long {
        let e = Error::backend(format!(
            "the reply of {} is longer than {} MiB, the most ai keeps; it was stopped",
            inv.name,
            MAX_REPLY >> 20
        ))
        .hint("ask for a shorter answer, or for it in parts");
        return failed(text, e);
    }
    if signal::interrupted() {
        return Outcome {
            text,
            end: End::Interrupted,
            usage: None,
        };
    }
    if timed_out.load(Ordering::SeqCst) {
        let e = Error::backend(format!(
            "{} did not finish within {}; it was stopped",
            inv.name,
            crate::fmt::human_duration(timeout)
        ))
        .hint("allow longer with --timeout SECS, or \"timeout\" (seconds) in config.json");
        return failed(text, e);
    }
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            return failed(
                text,
                Error::backend(format!("lost track of {}: {e}", inv.name)),
            );
        }
    };
    if let Some(e) = read_error {
        return failed(
            text,
            Error::backend(format!("cannot read the reply of {}: {e}", inv.name)),
        );
    }
    if !status.success() {
        let e = exit_error(inv, status, &stderr, received);
        // Held stdout of a failed CLI is its error message (claude), not a partial reply.
        return failed(if inv.hold_stdout { String::new() } else { text }, e);
    }
    if inv.hold_stdout
        && let Err(e) = sink.chunk(received)
    {
        return failed(text, e);
    }
    Outcome {
        text,
        end: End::Complete,
        usage: None,
    }
}

/// The backend has its own process group, so signals that end `ai` without its handler
/// (SIGKILL, or a crash) never reach it. On Linux the kernel tells it instead: SIGTERM when the
/// thread that started it ends. That thread is the one running [`run`], which lives until the
/// backend has exited.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn stop_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec and only makes the
    // async-signal-safe calls prctl(2), getppid(2) and _exit(2).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // ai died before the line above: nobody would send the signal.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn stop_with_parent(_cmd: &mut Command) {}

fn failed(text: String, e: Error) -> Outcome {
    Outcome {
        text,
        end: End::Failed(e),
        usage: None,
    }
}

fn spawn_error(inv: &Invocation<'_>, e: &std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            let err = Error::backend(format!(
                "{} is not installed: `{}` was not found on PATH",
                inv.name, inv.program
            ));
            match &inv.install_hint {
                Some(h) => err.hint(h.clone()),
                None => err.hint("install it, or fix \"program\" for this backend in config.json"),
            }
        }
        std::io::ErrorKind::PermissionDenied => {
            Error::backend(format!("cannot run `{}`: permission denied", inv.program))
                .hint("make it executable (chmod +x), or fix the path in config.json")
        }
        _ => Error::backend(format!("cannot start `{}`: {e}", inv.program)),
    }
}

/// The backend's own words (stderr, or stdout when stderr is empty, as claude does), its exit
/// code, and a hint where the code is known.
fn exit_error(inv: &Invocation<'_>, status: ExitStatus, stderr: &[u8], stdout: &[u8]) -> Error {
    let how = match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "an unknown status".to_owned(),
    };
    let own = last_lines(stderr).or_else(|| last_lines(stdout));
    let msg = match &own {
        Some(text) if !text.contains('\n') => format!("{} failed ({how}): {text}", inv.name),
        Some(text) => format!(
            "{} failed ({how}):\n  {}",
            inv.name,
            text.replace('\n', "\n  ")
        ),
        None => format!("{} failed ({how}) and printed nothing", inv.name),
    };
    let lower = own.unwrap_or_default().to_lowercase();
    let hint = match (inv.cli, status.code()) {
        (Some(Cli::Gemini), Some(41)) => {
            "log in: run `gemini` once, or set GEMINI_API_KEY".to_owned()
        }
        (Some(Cli::Gemini), Some(52)) => {
            "gemini's own settings are invalid: check ~/.gemini/settings.json".to_owned()
        }
        (Some(cli), _)
            if lower.contains("login") || lower.contains("log in") || lower.contains("auth") =>
        {
            format!("log in: run `{}` once in a terminal", cli.name())
        }
        (Some(Cli::Ollama), _) if lower.contains("not found") => {
            "pull the model first: ollama pull MODEL (`ollama list` shows what is there)".to_owned()
        }
        _ => "`ai --dry-run …` prints the exact command, to try it by hand".to_owned(),
    };
    Error::backend(msg).hint(hint)
}

/// The last few non-empty lines of a child's output, cleaned of control sequences.
fn last_lines(bytes: &[u8]) -> Option<String> {
    let text = sanitize(&String::from_utf8_lossy(bytes));
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let tail = &lines[lines.len().saturating_sub(12)..];
    let mut out = tail.join("\n");
    if out.len() > 4000 {
        let cut = out.len() - 4000;
        let cut = (cut..out.len())
            .find(|i| out.is_char_boundary(*i))
            .unwrap_or(0);
        out = format!("…{}", &out[cut..]);
    }
    Some(out)
}
