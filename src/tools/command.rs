//! Command tools (config `tools.commands.NAME`): a program the model may run. The arguments
//! reach it as JSON on standard input, its standard output is the result; it is run as given,
//! never through a shell, in a process group of its own (so a timeout or Ctrl+C stops all of
//! it). Because it acts, it is offered only when the call names it (`--tool NAME`) or config
//! allows it (`tools.allow`), and each run is asked for on the terminal unless `--yolo`.

use std::io::{BufRead, BufReader, Write};
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

/// Ask on the terminal before the tool `name` (a `kind` such as "command tool" or "MCP tool")
/// runs with `args`: `Ok` only for an explicit yes. Without a terminal the answer is no (`not
/// confirmed`). Every tool that acts is asked for here, whatever its family.
pub(crate) fn confirm(name: &str, kind: &str, args: &Value) -> std::result::Result<(), String> {
    // Several models at once may ask together: one question at a time.
    static ASKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _asking = ASKING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Err(format!(
            "not confirmed: ai asks before it runs the {kind} {}, and there is no terminal to ask on (the user can allow it with --yolo); it was not run",
            name
        ));
    };
    let question = question(name, args)?;
    let mut out = &tty;
    let asked = write!(out, "{question}").and_then(|()| out.flush());
    if asked.is_err() {
        return Err(format!(
            "not confirmed: ai could not ask on the terminal before it runs {}; it was not run",
            name
        ));
    }
    let mut answer = String::new();
    let read = BufReader::new(&tty).read_line(&mut answer);
    if is_yes(read.ok(), &answer) {
        Ok(())
    } else {
        // End of input leaves the terminal's line unfinished.
        if !answer.ends_with('\n') {
            let _ = writeln!(out);
        }
        Err(format!(
            "the user declined: {} was not run. Do not run it again unless the user asks.",
            name
        ))
    }
}

/// Arguments longer than this (as shown, in bytes) are not put to the user: a question the
/// terminal cannot hold is no question. `--yolo` still runs them.
const MAX_SHOWN: usize = 64 * 1024;

/// Arguments up to this many characters are asked about on one line.
const ONE_LINE: usize = 160;

/// The question before `name` runs with `args`: every argument exactly as the program will get
/// it (JSON, whitespace kept, never cut), with what a terminal would not show spelled out
/// (`\e`, `\u{202e}`). Long arguments get lines of their own, and the question is asked again
/// below them. Arguments too long to show are refused (`Err`, the result for the model).
fn question(name: &str, args: &Value) -> std::result::Result<String, String> {
    // Compact JSON escapes newlines, tabs and the other C0 characters; the rest (DEL, C1,
    // bidi and zero-width characters) is spelled out here.
    let shown = crate::sanitize::spell_out(&args.to_string());
    if shown.len() > MAX_SHOWN {
        return Err(format!(
            "not confirmed: the arguments for {name} are {} long, too long to show whole on the terminal (at most {}); it was not run (the user can allow it with --yolo)",
            crate::fmt::human_size(shown.len() as u64),
            crate::fmt::human_size(MAX_SHOWN as u64),
        ));
    }
    let chars = shown.chars().count();
    if chars <= ONE_LINE {
        Ok(format!("run {name} with {shown}? [y/N] "))
    } else {
        Ok(format!(
            "run {name} with these arguments ({chars} characters, all shown):\n{shown}\nrun {name} with the arguments above? [y/N] "
        ))
    }
}

/// An explicit yes: a whole line (ended by Enter) that is `y` or `yes`. Enter alone, end of
/// input (Ctrl+D), a line cut short and a read error are no.
fn is_yes(read: Option<usize>, answer: &str) -> bool {
    match read {
        Some(n) if n > 0 && answer.ends_with('\n') => {
            matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
        }
        _ => false,
    }
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
    fn only_an_explicit_yes_runs() {
        for yes in ["y\n", "Y\n", "yes\n", " yes \r\n"] {
            assert!(is_yes(Some(yes.len()), yes), "{yes:?}");
        }
        for no in ["\n", "", "y", "n\n", "no\n", "\u{4}\n", "yy\n"] {
            assert!(!is_yes(Some(no.len()), no), "{no:?}");
        }
        assert!(!is_yes(None, "y\n"));
    }

    #[test]
    fn the_question_shows_every_argument_exactly() {
        // H2-1: a long first key pushed the rest out of a 300-character question.
        let reason = "Listing the size of the temporary folder the user asked about. ".repeat(3);
        let args = json!({"a_reason": reason, "path": "/home/user/.ssh", "delete": true});
        let q = question("targv", &args).unwrap();
        assert!(q.contains(&args.to_string()), "{q}");
        assert!(
            q.contains("\"delete\":true,\"path\":\"/home/user/.ssh\""),
            "{q}"
        );
        assert!(
            q.ends_with("run targv with the arguments above? [y/N] "),
            "{q}"
        );
        // Whitespace is kept, not joined; what a terminal would hide is spelled out.
        let args =
            json!({"p": format!("/srv/safe{}; rm -rf ~\u{202e}\x7f\u{9b}\n", " ".repeat(400))});
        let q = question("t", &args).unwrap();
        assert!(
            q.contains(&format!(
                "/srv/safe{}; rm -rf ~\\u{{202e}}\\x7f\\x9b\\n",
                " ".repeat(400)
            )),
            "{q}"
        );
        assert!(!q.contains('\u{202e}') && !q.contains('\x7f') && !q.contains('\u{9b}'));
        // Short arguments: one line, as before.
        assert_eq!(
            question("disk", &json!({"path": "/tmp"})).unwrap(),
            "run disk with {\"path\":\"/tmp\"}? [y/N] "
        );
        // Too long to show whole: not asked, not run.
        let e = question("t", &json!({"p": "x".repeat(MAX_SHOWN)})).unwrap_err();
        assert!(
            e.starts_with("not confirmed: the arguments for t are"),
            "{e}"
        );
    }

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
