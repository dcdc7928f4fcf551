//! Command tools (config `tools.commands.NAME`): a program the model may run. The arguments
//! reach it as JSON on standard input, its standard output is the result; it is run as given,
//! never through a shell, in a process group of its own (so a timeout or Ctrl+C stops all of
//! it). Because it acts, it is offered only when the call names it (`--tool NAME`) or config
//! allows it (`tools.allow`), and each run is asked for (`approve`) unless `--yolo`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::MAX_RESULT;
use crate::backend::supervise::{self, LINGER, Supervised};
use crate::config::Config;
use crate::config::tools::{COMMAND_TIMEOUT, seconds};
use crate::error::{Error, Result};
use crate::signal;

/// Keep at most this much of a program's stderr (its end).
pub(crate) const STDERR_KEEP: usize = 16 * 1024;

/// One command tool, ready to offer.
#[derive(Debug, Clone)]
pub(crate) struct CommandTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    argv: Vec<String>,
    timeout: Duration,
}

/// The command tools of a call: those named by `--tool` and those config allows, in that
/// order. A name that is not configured, or that is one of `reserved` (ai's own tools), is a
/// usage error.
pub(crate) fn select(
    config: &Config,
    named: &[String],
    reserved: &[&str],
) -> Result<Vec<CommandTool>> {
    let configured = &config.tools.commands;
    let mut out: Vec<CommandTool> = Vec::new();
    for name in named.iter().chain(config.tools.allow.iter()) {
        if out.iter().any(|t| &t.name == name) {
            continue;
        }
        let Some(spec) = configured.get(name) else {
            let known: Vec<&str> = configured.keys().map(String::as_str).collect();
            return Err(Error::usage(format!(
                "--tool {}: there is no command tool of that name",
                crate::fmt::one_line(name, 64)
            ))
            .hint(if known.is_empty() {
                "declare one in config.json under \"tools.commands\" (see \"Command tools\" in the README)".to_owned()
            } else {
                format!("the command tools in config.json are: {}", known.join(", "))
            }));
        };
        if reserved.contains(&name.as_str()) {
            return Err(Error::config(format!(
                "tools.commands.{name} has the name of one of ai's own tools"
            ))
            .hint("give it another name in config.json"));
        }
        out.push(CommandTool {
            name: name.clone(),
            description: spec.description.clone(),
            parameters: spec
                .parameters
                .clone()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            argv: spec.command.clone(),
            timeout: seconds(spec.timeout, COMMAND_TIMEOUT),
        });
    }
    Ok(out)
}

/// What a run printed: the result text, and whether it was cut here (the text says so).
pub(crate) struct Output {
    pub(crate) text: String,
    pub(crate) cut: bool,
}

/// Run `tool` with `args` on its standard input, within its timeout (and the turn's
/// `deadline`). `Err`: the error result (a failed start, a non-zero exit with the tail of its
/// stderr, the time limit, Ctrl+C).
pub(crate) fn run(
    tool: &CommandTool,
    args: &Value,
    deadline: Option<Instant>,
) -> std::result::Result<Output, String> {
    let name = &tool.name;
    let mut limit = tool.timeout;
    if let Some(d) = deadline {
        limit = limit.min(d.saturating_duration_since(Instant::now()));
    }
    if limit.is_zero() {
        return Err(format!("{name} was not run: the turn has no time left"));
    }
    let Some((program, rest)) = tool.argv.split_first() else {
        return Err(format!("{name} has no command to run"));
    };
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own group, stopped on Ctrl+C and at its time limit, reaped should `ai` die; its
    // output read until it ends or the supervisor says stop (see `backend/supervise.rs`).
    let mut run = Supervised::spawn(&mut cmd, true).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "it was not found".to_owned(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            _ => e.to_string(),
        };
        format!(
            "{name} could not start `{}`: {why}",
            crate::fmt::one_line(program, 200)
        )
    })?;
    let pid = run.pid();
    let stop = run.stop();
    let child = &mut run.child;
    let mut input = args.to_string().into_bytes();
    input.push(b'\n');
    let timed_out = AtomicBool::new(false);
    let mut kept: Vec<u8> = Vec::new();
    let mut total = 0usize;
    let (status, stderr) = std::thread::scope(|scope| {
        if let Some(mut pipe) = child.stdin.take() {
            scope.spawn(move || {
                // A program that does not read its input closes the pipe: not an error.
                let _ = pipe.write_all(&input);
            });
        }
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
        let timer_stop = stop.clone();
        scope.spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(limit) {
                timed_out.store(true, Ordering::SeqCst);
                supervise::terminate(pid);
                // Its time is up: what it left outside its group is not waited for either.
                if let Err(mpsc::RecvTimeoutError::Timeout) =
                    done_rx.recv_timeout(supervise::GRACE + LINGER)
                {
                    timer_stop.fire();
                }
            }
        });
        let out = child.stdout.take();
        let waiter_stop = stop.clone();
        let waiter = scope.spawn(move || {
            let status = child.wait();
            // Something it left running that still holds its output is stopped, not waited
            // for; it may be outside its group (`setsid`), so the readers stop too.
            if let Err(mpsc::RecvTimeoutError::Timeout) = reading_rx.recv_timeout(LINGER) {
                supervise::terminate(pid);
                waiter_stop.fire();
            }
            status
        });
        if let Some(out) = out {
            let _ = supervise::read_until(out, &stop, &mut |piece| {
                total += piece.len();
                // The rest is read and dropped, so the program never blocks on it.
                let room = (2 * MAX_RESULT).saturating_sub(kept.len());
                kept.extend_from_slice(&piece[..piece.len().min(room)]);
                true
            });
        }
        drop(reading_tx);
        let stderr = err_reader.and_then(|h| h.join().ok()).unwrap_or_default();
        let status = waiter
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the wait failed")));
        drop(done_tx);
        (status, stderr)
    });
    drop(run);
    let said = tail_lines(&stderr);
    let with_stderr = |msg: String| match &said {
        Some(s) => format!("{msg}; its stderr ends with:\n{s}"),
        None => msg,
    };
    if signal::interrupted() {
        return Err(format!("{name} was stopped: the user interrupted the turn"));
    }
    if timed_out.load(Ordering::SeqCst) {
        return Err(with_stderr(format!(
            "{name} did not finish within {}; it was stopped",
            crate::fmt::human_duration(limit)
        )));
    }
    let status = status.map_err(|e| format!("lost track of {name}: {e}"))?;
    if !status.success() {
        return Err(with_stderr(format!("{name} failed ({})", how(status))));
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if total <= kept.len() {
        return Ok(Output { text, cut: false });
    }
    // Room for the note, so the whole result stays under the limit (and is not cut again).
    let mut at = (MAX_RESULT - 128).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push_str(&format!(
        "\n… (cut: the output was {} KiB; the first {} KiB are kept.)",
        total.div_ceil(1024),
        (at + 512) / 1024
    ));
    Ok(Output { text, cut: true })
}

pub(crate) use crate::backend::process::how;

/// The last non-empty lines of a program's stderr (at most 12, about 2,000 characters),
/// cleaned of control sequences; `None` when it printed nothing.
pub(crate) fn tail_lines(bytes: &[u8]) -> Option<String> {
    crate::backend::process::last_lines(bytes, 2000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_of_stderr_is_short_and_clean() {
        assert_eq!(tail_lines(b""), None);
        assert_eq!(tail_lines(b"\n  \n"), None);
        let many: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let t = tail_lines(many.as_bytes()).unwrap();
        assert!(t.starts_with("line 28\n") && t.ends_with("line 39"), "{t}");
        let t = tail_lines("é".repeat(3000).as_bytes()).unwrap();
        assert!(t.starts_with('…') && t.len() <= 2004, "{}", t.len());
        assert_eq!(tail_lines(b"\x1b[31mred\x1b[0m").unwrap(), "red");
    }
}
