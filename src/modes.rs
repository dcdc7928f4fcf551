//! `cmd` and `run`: the reply is one shell command for this OS and shell. `cmd` prints it; `run`
//! shows it, asks on the terminal, and runs it with the user's shell.

use std::io::{BufRead, BufReader, Write};
use std::process::Command;

use crate::error::{Error, Result};
use crate::output::{self, Ui};

/// The user's shell (`$SHELL`), else `/bin/sh`.
fn shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "/bin/sh".to_owned())
}

/// What the model is told in `cmd` and `run` modes.
pub(crate) fn instruction() -> String {
    let os = match std::env::consts::OS {
        "macos" => "macOS",
        "linux" => "Linux",
        "freebsd" => "FreeBSD",
        other => other,
    };
    let sh = shell();
    let name = sh.rsplit('/').next().unwrap_or("sh").to_owned();
    format!(
        "Answer with exactly one shell command for {os} and the {name} shell that does what the \
         user asks. Write only the command: no explanation, no Markdown, no code fences, no \
         prompt sign. Join several steps with && on one line."
    )
}

/// The command in a reply: the first fenced block's body if there is one, else the text, less
/// prompt signs (`$ `, `% `) and surrounding blank lines.
pub(crate) fn clean(reply: &str) -> String {
    let text = match fenced(reply) {
        Some(body) => body,
        None => reply.to_owned(),
    };
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let t = l.trim_end();
            let trimmed = t.trim_start();
            match trimmed
                .strip_prefix("$ ")
                .or_else(|| trimmed.strip_prefix("% "))
            {
                Some(rest) => rest.to_owned(),
                None => t.to_owned(),
            }
        })
        .collect();
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |e| e + 1);
    let mut out = lines[start..end].join("\n");
    if !out.contains('\n') {
        out = out.trim().to_owned();
    }
    // A command wrapped in single backticks: `ls -la`
    if !out.contains('\n')
        && out.len() > 2
        && out.starts_with('`')
        && out.ends_with('`')
        && !out[1..out.len() - 1].contains('`')
    {
        out = out[1..out.len() - 1].to_owned();
    }
    out
}

fn fenced(reply: &str) -> Option<String> {
    let mut lines = reply.lines();
    lines.by_ref().find(|l| l.trim_start().starts_with("```"))?;
    let mut body = Vec::new();
    for l in lines {
        if l.trim_start().starts_with("```") {
            return Some(body.join("\n"));
        }
        body.push(l);
    }
    Some(body.join("\n"))
}

/// Show the command, ask on the terminal (Enter or y runs it), run it with the user's shell,
/// and return its exit code. Without a terminal it refuses unless `yes`.
/// The terminal `run` asks on, or why there is none.
fn terminal() -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| {
            Error::usage("`run` asks before it runs a command, and there is no terminal to ask on")
                .hint("pass -y to run it without asking, or use `cmd` to only print it")
        })
}

/// Before anything is sent: `run` without `-y` needs a terminal to ask on, so a call that
/// could never run its command does not pay for one.
pub(crate) fn check_can_ask(yes: bool) -> Result<()> {
    if yes { Ok(()) } else { terminal().map(drop) }
}

pub(crate) fn confirm_and_run(command: &str, yes: bool, ui: &Ui) -> Result<i32> {
    if command.trim().is_empty() {
        return Err(
            Error::backend("the model answered with no command").hint("rephrase the request")
        );
    }
    // What is shown (and confirmed) must be exactly what runs.
    output::check_command(command)?;
    if !yes {
        let tty = terminal()?;
        let mut out = &tty;
        write!(
            out,
            "{command}\nRun it? [Enter/y runs it, anything else cancels] "
        )
        .and_then(|()| out.flush())
        .map_err(|e| Error::usage(format!("cannot ask on the terminal: {e}")))?;
        let mut answer = String::new();
        let read = BufReader::new(&tty).read_line(&mut answer);
        if !is_yes(read.as_ref().ok().copied(), &answer) {
            // Surface a read error, but even then nothing runs.
            if let Err(e) = read {
                ui.warn(&format!("cannot read the answer: {e}"));
            }
            ui.notice("ai: cancelled; nothing was run");
            return Ok(1);
        }
    } else {
        ui.notice(&format!("ai: running: {command}"));
    }
    let status = Command::new(shell())
        .arg("-c")
        .arg(command)
        .status()
        .map_err(|e| Error::backend(format!("cannot start {}: {e}", shell())))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// Is the answer to "Run it?" an explicit yes: a whole line (ended by Enter) that is empty, `y`
/// or `yes`? End of input (Ctrl+D, a closed terminal: `read` is `Some(0)`), a line cut short by
/// end of input, and a read error (`None`) are not.
fn is_yes(read: Option<usize>, answer: &str) -> bool {
    let Some(n) = read else {
        return false;
    };
    if n == 0 || !answer.ends_with('\n') {
        return false;
    }
    let answer = answer.trim().to_ascii_lowercase();
    answer.is_empty() || answer == "y" || answer == "yes"
}

#[cfg(test)]
mod tests {
    use super::{clean, is_yes};

    #[test]
    fn only_an_explicit_yes_runs() {
        for yes in ["\n", "y\n", "Y\n", "yes\n", " yes \r\n"] {
            assert!(is_yes(Some(yes.len()), yes), "{yes:?}");
        }
        for no in ["", "y", "yes", "n\n", "no\n", "\u{4}\n", "yy\n"] {
            assert!(!is_yes(Some(no.len()), no), "{no:?}");
        }
        assert!(!is_yes(None, ""));
        assert!(!is_yes(None, "y\n"));
    }

    #[test]
    fn cleans_replies() {
        assert_eq!(clean("```bash\n$ ls -la\n```\n"), "ls -la");
        assert_eq!(
            clean("Here you go:\n```sh\nfind . -name '*.rs' | wc -l\n```\nThis counts files."),
            "find . -name '*.rs' | wc -l"
        );
        assert_eq!(clean("  `du -sh .`  \n"), "du -sh .");
        assert_eq!(clean("\n\n% echo hi\n\n"), "echo hi");
        assert_eq!(clean("ls && pwd"), "ls && pwd");
    }
}
