//! Running a backend CLI: explicit stdin, stdout streamed as it arrives, stderr kept for error
//! messages, its own process group (so Ctrl+C and the timeout stop all of it), a deadline.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::cli::Invocation;
use super::stream::{self, Decoded, Decoder, Lines};
use super::supervise::{self, LINGER, Supervised};
use super::{End, Outcome};
use crate::error::Error;
use crate::output::{MAX_REPLY, Sink, sanitize};
use crate::signal;
use crate::target::Cli;

/// Keep at most this much of a child's stderr (the end of it).
const STDERR_KEEP: usize = 64 * 1024;

pub(crate) fn run(inv: &Invocation<'_>, timeout: Duration, sink: &mut dyn Sink) -> Outcome {
    run_with(inv, timeout, sink, &mut |_| {})
}

/// Run a backend; one too old for its structured-output flags (it rejects them, says so, and
/// prints nothing else) is run again in plain text, after a one-line `notice`.
pub(crate) fn run_with(
    inv: &Invocation<'_>,
    timeout: Duration,
    sink: &mut dyn Sink,
    notice: &mut dyn FnMut(&str),
) -> Outcome {
    let (outcome, rejected) = run_once(inv, timeout, sink);
    if rejected
        && let Some(plain) = inv.plain()
        && let Some(cli) = inv.cli
    {
        let flags: Vec<&str> = inv
            .args
            .iter()
            .filter(|a| !plain.args.contains(a))
            .map(String::as_str)
            .collect();
        let known = super::cli::stream_flags(cli).map_or("", |(_, _, v)| v);
        notice(&format!(
            "{} does not accept `{}`: answering in plain text, without token usage; update it to stream with usage ({known} has these flags)",
            inv.name,
            flags.join(" "),
        ));
        return run_once(&plain, timeout, sink).0;
    }
    outcome
}

/// One run; `true` when the CLI rejected its structured-output flags.
fn run_once(inv: &Invocation<'_>, timeout: Duration, sink: &mut dyn Sink) -> (Outcome, bool) {
    let mut cmd = Command::new(&inv.program);
    cmd.args(&inv.args)
        .stdin(if inv.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own group, stopped on Ctrl+C, reaped should `ai` die (stood down when dropped, once
    // the backend has been waited for).
    let mut run = match Supervised::spawn(&mut cmd, true) {
        Ok(r) => r,
        // A signal came before it started (see `ChildGroup::spawn`): the call is interrupted.
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted && signal::interrupted() => {
            return (
                Outcome {
                    text: String::new(),
                    end: End::Interrupted,
                    usage: None,
                    calls: Vec::new(),
                },
                false,
            );
        }
        Err(e) => return (failed(String::new(), spawn_error(inv, &e)), false),
    };
    let pid = run.pid();
    let stop = run.stop();
    let child = &mut run.child;
    let timed_out = AtomicBool::new(false);
    let mut received: Vec<u8> = Vec::new();
    let mut sink_error: Option<Error> = None;
    let mut read_error: Option<std::io::Error> = None;
    // The reply is held whole (to be saved in the chat): past MAX_REPLY the backend is stopped.
    let mut too_long = false;
    // A JSON stream: read line by line, its text deltas sent on as they come.
    let mut decoder = Decoder::new(inv.output);
    let mut mode = if decoder.is_some() {
        Mode::Undecided
    } else {
        Mode::Plain
    };
    // Plain text is held when the CLI prints its errors on stdout: claude, in text mode and
    // when it prints plain text where JSON was asked.
    let hold = inv.hold_stdout || inv.output == stream::Format::ClaudeStream;
    let mut lines = Lines::new(stream::MAX_LINE);
    let mut line_too_long = false;

    let (status, stderr) = std::thread::scope(|scope| {
        if let (Some(text), Some(mut pipe)) = (inv.stdin.as_deref(), child.stdin.take()) {
            scope.spawn(move || {
                // A child that exits without reading all of it closes the pipe: not our error.
                let _ = pipe.write_all(text.as_bytes());
            });
        }
        // Each reader holds a sender; when both are done the channel disconnects.
        let (reading_tx, reading_rx) = mpsc::channel::<()>();
        let err_reader = child.stderr.take().map(|pipe| {
            let reading = reading_tx.clone();
            let stop = stop.clone();
            scope.spawn(move || {
                let _reading = reading;
                supervise::read_tail(pipe, STDERR_KEEP, &stop)
            })
        });
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let timed_out = &timed_out;
        scope.spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(timeout) {
                timed_out.store(true, Ordering::SeqCst);
                supervise::terminate(pid);
            }
        });
        let out = child.stdout.take();
        let waiter_stop = stop.clone();
        let waiter = scope.spawn(move || {
            let status = child.wait();
            // The backend is done. Something it left running in the background that still
            // holds its stdout or stderr is stopped after a moment, and not waited for: it may
            // be outside the group (`setsid`), so the readers are told to stop as well.
            if let Err(mpsc::RecvTimeoutError::Timeout) = reading_rx.recv_timeout(LINGER) {
                supervise::terminate(pid);
                waiter_stop.fire();
            }
            status
        });

        if let Some(out) = out {
            // Asked for JSON: the first byte that is not white space tells whether it came
            // (`{`) or plain text did. `false`: stop reading (the backend is stopped).
            let mut each = |piece: &[u8]| -> bool {
                let owned;
                let data: &[u8] = if mode == Mode::Undecided {
                    received.extend_from_slice(piece);
                    match received.iter().find(|b| !b.is_ascii_whitespace()) {
                        None if received.len() > MAX_REPLY => {
                            too_long = true;
                            supervise::terminate(pid);
                            return false;
                        }
                        None => return true,
                        Some(b'{') => mode = Mode::Json,
                        Some(_) => mode = Mode::Plain,
                    }
                    owned = std::mem::take(&mut received);
                    &owned
                } else {
                    piece
                };
                if let (Mode::Json, Some(dec)) = (mode, decoder.as_mut()) {
                    let pushed = lines.push(data, &mut |line| {
                        dec.line(line, &mut |text| sink.chunk(text.as_bytes()))
                    });
                    match pushed {
                        Ok(Ok(())) if dec.text_len() > MAX_REPLY => too_long = true,
                        Ok(Ok(())) => return true,
                        Ok(Err(e)) => sink_error = Some(e),
                        Err(stream::LineTooLong) => line_too_long = true,
                    }
                    supervise::terminate(pid);
                    return false;
                }
                if received.len() + data.len() > MAX_REPLY {
                    too_long = true;
                    supervise::terminate(pid);
                    return false;
                }
                received.extend_from_slice(data);
                if !hold && let Err(e) = sink.chunk(data) {
                    sink_error = Some(e);
                    supervise::terminate(pid);
                    return false;
                }
                true
            };
            if let Err(e) = supervise::read_until(out, &stop, &mut each) {
                read_error = Some(e);
            }
        }
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
    drop(run);

    if let (Mode::Json | Mode::Undecided, Some(dec)) = (mode, decoder) {
        return finish_stream(
            inv,
            dec,
            lines,
            sink,
            sink_error,
            Ended {
                too_long,
                line_too_long,
                timed_out: timed_out.load(Ordering::SeqCst),
                timeout,
                status,
                read_error,
                stderr,
            },
        );
    }
    finish_text(
        inv,
        received,
        hold,
        sink,
        sink_error,
        Ended {
            too_long,
            line_too_long,
            timed_out: timed_out.load(Ordering::SeqCst),
            timeout,
            status,
            read_error,
            stderr,
        },
    )
}

/// What a CLI asked for JSON has printed so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Only white space yet.
    Undecided,
    /// JSON lines.
    Json,
    /// Plain text (asked for, or printed where JSON was asked).
    Plain,
}

/// How the child's run ended, for the outcome.
struct Ended {
    too_long: bool,
    line_too_long: bool,
    timed_out: bool,
    timeout: Duration,
    status: std::io::Result<ExitStatus>,
    read_error: Option<std::io::Error>,
    stderr: Vec<u8>,
}

/// The ends every run shares (in this order): the reply too long, Ctrl+C, the time limit, a
/// lost child, a failed read. Otherwise the exit status.
fn common_end(inv: &Invocation<'_>, e: Ended) -> std::result::Result<(ExitStatus, Vec<u8>), End> {
    if e.too_long {
        let err = Error::backend(format!(
            "the reply of {} is longer than {} MiB, the most ai keeps; it was stopped",
            inv.name,
            MAX_REPLY >> 20
        ))
        .hint("ask for a shorter answer, or for it in parts");
        return Err(End::Failed(err));
    }
    if e.line_too_long {
        let err = Error::backend(format!(
            "a line of {}'s output is longer than {} MiB; it was stopped",
            inv.name,
            stream::MAX_LINE >> 20
        ))
        .hint("ask for a shorter answer, or for it in parts");
        return Err(End::Failed(err));
    }
    if signal::interrupted() {
        return Err(End::Interrupted);
    }
    if e.timed_out {
        let err = Error::backend(format!(
            "{} did not finish within {}; it was stopped",
            inv.name,
            crate::fmt::human_duration(e.timeout)
        ))
        .hint("allow longer with --timeout SECS, or \"timeout\" (seconds) in config.json");
        return Err(End::Failed(err));
    }
    let status = e
        .status
        .map_err(|err| End::Failed(Error::backend(format!("lost track of {}: {err}", inv.name))))?;
    if let Some(err) = e.read_error {
        return Err(End::Failed(Error::backend(format!(
            "cannot read the reply of {}: {err}",
            inv.name
        ))));
    }
    Ok((status, e.stderr))
}

/// A JSON stream's outcome: the CLI's own error wins, then the exit code; a stream that
/// stopped before its final event is an error that keeps the text.
fn finish_stream(
    inv: &Invocation<'_>,
    mut dec: Decoder,
    lines: Lines,
    sink: &mut dyn Sink,
    mut sink_error: Option<Error>,
    ended: Ended,
) -> (Outcome, bool) {
    // The last line, if it had no newline, and what a held block turns out to be.
    let d: Decoded = if sink_error.is_none() && !ended.line_too_long && !ended.too_long {
        let mut emit = |text: &str| sink.chunk(text.as_bytes());
        let rest = lines.rest();
        let r = if rest.is_empty() {
            Ok(())
        } else {
            dec.line(&rest, &mut emit)
        };
        let (d, r) = match r {
            Ok(()) => dec.finish(&mut emit),
            Err(e) => (dec.finish(&mut |_| Ok(())).0, Err(e)),
        };
        if let Err(e) = r {
            sink_error = Some(e);
        }
        d
    } else {
        dec.finish(&mut |_| Ok(())).0
    };
    let usage = d.usage.clone();
    let out = |text: String, end: End| Outcome {
        text,
        end,
        usage: usage.clone(),
        calls: Vec::new(),
    };
    if let Some(e) = sink_error {
        return (out(d.text, End::Failed(e)), false);
    }
    let (status, stderr) = match common_end(inv, ended) {
        Ok(s) => s,
        Err(end) => return (out(d.text, end), false),
    };
    // Plain lines the CLI printed among its events: what it said, in its error.
    let said = |e: Error| match last_lines(d.stray.as_bytes(), 4000) {
        Some(lines) => e.with_detail(&format!(
            "{} also printed:\n  {}",
            inv.name,
            lines.replace('\n', "\n  ")
        )),
        None => e,
    };
    if let Some(msg) = &d.error {
        let e = said(own_error(inv, status, msg));
        return (out(d.text.clone(), End::Failed(e)), false);
    }
    let plain = d.plain.clone().unwrap_or_default();
    if !status.success() {
        let rejected = !d.saw_json && rejects_flags(inv, &stderr, plain.as_bytes());
        // A JSON stream that said nothing of failing: what it said is what it printed.
        let printed = if d.saw_json && plain.is_empty() {
            d.text.as_bytes()
        } else {
            plain.as_bytes()
        };
        let e = said(exit_error(inv, status, &stderr, printed));
        return (out(d.text.clone(), End::Failed(e)), rejected);
    }
    if !d.saw_json {
        // Plain text where JSON was asked, and a successful exit: that text is the reply.
        if let Err(e) = sink.chunk(plain.as_bytes()) {
            return (out(plain, End::Failed(e)), false);
        }
        return (out(plain, End::Complete), false);
    }
    if !d.finished {
        let e = said(
            Error::backend(format!(
                "{}'s output stopped before its final event: the reply may be incomplete",
                inv.name
            ))
            .hint("`ai --dry-run …` prints the exact command, to try it by hand"),
        );
        return (out(d.text.clone(), End::Failed(e)), false);
    }
    // The schema went through the CLI's own flag: its structured result is the reply (checked
    // against the schema like any other).
    if inv.structured
        && let Some(json) = d.structured
    {
        return (out(json, End::Complete), false);
    }
    (out(d.text, End::Complete), false)
}

/// Plain text: stdout is the reply (held until a successful exit for `hold_stdout`).
fn finish_text(
    inv: &Invocation<'_>,
    received: Vec<u8>,
    hold: bool,
    sink: &mut dyn Sink,
    sink_error: Option<Error>,
    ended: Ended,
) -> (Outcome, bool) {
    // The bytes themselves when they are UTF-8: no copy of a large reply.
    let text = String::from_utf8(received)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    let received = text.as_bytes();
    if let Some(e) = sink_error {
        return (failed(text, e), false);
    }
    let (status, stderr) = match common_end(inv, ended) {
        Ok(s) => s,
        Err(end) => {
            let o = Outcome {
                text,
                end,
                usage: None,
                calls: Vec::new(),
            };
            return (o, false);
        }
    };
    if !status.success() {
        let rejected = rejects_flags(inv, &stderr, received);
        let e = exit_error(inv, status, &stderr, received);
        // Held stdout of a failed CLI is its error message (claude), not a partial reply.
        return (failed(if hold { String::new() } else { text }, e), rejected);
    }
    if hold && let Err(e) = sink.chunk(received) {
        return (failed(text, e), false);
    }
    let o = Outcome {
        text,
        end: End::Complete,
        usage: None,
        calls: Vec::new(),
    };
    (o, false)
}

/// The CLI rejected the structured-output flags it was given: an older version.
fn rejects_flags(inv: &Invocation<'_>, stderr: &[u8], stdout: &[u8]) -> bool {
    let Some(plain) = &inv.plain_args else {
        return false;
    };
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(stderr),
        String::from_utf8_lossy(stdout)
    )
    .to_lowercase();
    let complains = [
        "unknown option",
        "unknown argument",
        "unexpected argument",
        "unrecognized option",
        "unrecognized argument",
        "invalid value",
        "unknown flag",
    ]
    .iter()
    .any(|c| said.contains(c));
    complains
        && inv
            .args
            .iter()
            .filter(|a| !plain.contains(a))
            .map(|a| a.trim_start_matches('-'))
            .filter(|a| a.len() > 2)
            .any(|a| said.contains(a))
}

/// The CLI's own error message, with the hint its words or exit code call for.
fn own_error(inv: &Invocation<'_>, status: ExitStatus, msg: &str) -> Error {
    let msg = sanitize(msg.trim());
    let hint = hint_for(inv, status, &msg);
    Error::backend(format!("{} failed: {msg}", inv.name)).hint(hint)
}

pub(crate) use super::supervise::stop_with_parent;

fn failed(text: String, e: Error) -> Outcome {
    Outcome {
        text,
        end: End::Failed(e),
        usage: None,
        calls: Vec::new(),
    }
}

/// A backend CLI that is not on PATH (or not executable where its path points).
pub(crate) fn not_installed(name: &str, program: &str, install_hint: Option<&str>) -> Error {
    let err = Error::backend(format!(
        "{name} is not installed: `{program}` was not found on PATH"
    ));
    match install_hint {
        Some(h) => err.hint(h.to_owned()),
        None => err.hint("install it, or fix \"program\" for this backend in config.json"),
    }
}

fn spawn_error(inv: &Invocation<'_>, e: &std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            not_installed(&inv.name, &inv.program, inv.install_hint.as_deref())
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
    let how = how(status);
    let own = last_lines(stderr, 4000).or_else(|| last_lines(stdout, 4000));
    let msg = match &own {
        Some(text) if !text.contains('\n') => format!("{} failed ({how}): {text}", inv.name),
        Some(text) => format!(
            "{} failed ({how}):\n  {}",
            inv.name,
            text.replace('\n', "\n  ")
        ),
        None => format!("{} failed ({how}) and printed nothing", inv.name),
    };
    Error::backend(msg).hint(hint_for(inv, status, &own.unwrap_or_default()))
}

/// A hint from a CLI's exit code or words.
fn hint_for(inv: &Invocation<'_>, status: ExitStatus, own: &str) -> String {
    let lower = own.to_lowercase();
    match (inv.cli, status.code()) {
        (Some(Cli::Gemini), Some(41)) => {
            "log in: run `gemini` once, or set GEMINI_API_KEY".to_owned()
        }
        (Some(Cli::Gemini), Some(52)) => {
            "gemini's own settings are invalid: check ~/.gemini/settings.json".to_owned()
        }
        (Some(cli), _)
            if lower.contains("login")
                || lower.contains("log in")
                || lower.contains("auth")
                || lower.contains(" 401 ") =>
        {
            format!("log in: run `{}` once in a terminal", cli.name())
        }
        (Some(Cli::Ollama), _) if lower.contains("not found") => {
            "pull the model first: ollama pull MODEL (`ollama list` shows what is there)".to_owned()
        }
        _ => "`ai --dry-run …` prints the exact command, to try it by hand".to_owned(),
    }
}

/// The last few non-empty lines of a child's output, cleaned of control sequences.
/// The last non-empty lines of a program's output (at most 12, about `max` bytes), cleaned of
/// control sequences; `None` when it printed nothing.
pub(crate) fn last_lines(bytes: &[u8], max: usize) -> Option<String> {
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
    if out.len() > max {
        let cut = out.len() - max;
        let cut = (cut..out.len())
            .find(|i| out.is_char_boundary(*i))
            .unwrap_or(0);
        out = format!("…{}", &out[cut..]);
    }
    Some(out)
}

/// How a program ended: `exit code 3`, `signal 9`.
pub(crate) fn how(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "an unknown status".to_owned(),
    }
}
