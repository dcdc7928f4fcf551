//! One approval path for every tool that acts, whatever its family (command tools, MCP tools
//! the server does not mark read-only). The policy is settled in one place
//! ([`super::Toolbox`]: `--yolo`, and the allow lists of config); a call it does not let
//! through is put to the user by an [`Approver`] that the face supplies:
//!
//! - a shell call asks on the terminal (`/dev/tty`): [`Terminal`];
//! - `ai -i` asks in the session itself, through its line editor (`session`);
//! - `ai serve` and `ai mcp` run each call as a child `ai` with nobody at its terminal: they
//!   set [`FACE_VAR`], and the child refuses with what would let the tool run ([`Refuse`]).
//!
//! What is asked shows everything that will run, exactly: the arguments whole (never cut or
//! with whitespace joined), what a terminal would not show spelled out; arguments too long to
//! show are not asked about, and not run.

use std::io::{BufRead, BufReader, Write};

use serde_json::Value;

/// Set by `ai serve` and `ai mcp` on the `ai` they run for a call: the face's name. Nobody can
/// answer a question there, so a tool that needs a yes is refused (naming what allows it).
pub(crate) const FACE_VAR: &str = "AI_CLI_FACE";

/// One question: run the tool `name` (a `kind` such as "command tool") with `args`?
pub(crate) struct Ask<'a> {
    pub(crate) name: &'a str,
    pub(crate) kind: &'static str,
    pub(crate) args: &'a Value,
    /// The config key that lets this tool run without asking, when there is one
    /// (`mcp.servers.NAME.allow`).
    pub(crate) allow_key: Option<String>,
}

impl Ask<'_> {
    /// What lets it run without a question: `--yolo`, or naming it in config.
    pub(crate) fn how_to_allow(&self) -> String {
        match &self.allow_key {
            Some(key) => format!(
                "the user can allow it with --yolo, or by naming it in \"{key}\" in config.json"
            ),
            None => "the user can allow it with --yolo".to_owned(),
        }
    }

    /// The result the model reads after a no.
    pub(crate) fn declined(&self) -> String {
        format!(
            "the user declined: {} was not run. Do not run it again unless the user asks.",
            self.name
        )
    }
}

/// Who answers: `Ok` only for an explicit yes; `Err` is the result the model reads.
pub(crate) trait Approver: Send + Sync {
    fn approve(&self, ask: &Ask<'_>) -> std::result::Result<(), String>;
}

/// The approver of a shell call: the terminal, unless `ai serve` or `ai mcp` runs this call
/// (then nobody can answer, and the call is refused).
pub(crate) fn for_call() -> std::sync::Arc<dyn Approver> {
    match std::env::var(FACE_VAR) {
        Ok(face) if face == "serve" => std::sync::Arc::new(Refuse { face: "ai serve" }),
        Ok(face) if face == "mcp" => std::sync::Arc::new(Refuse { face: "ai mcp" }),
        _ => std::sync::Arc::new(Terminal),
    }
}

/// A face where nobody can answer (`ai serve`, `ai mcp`): every question is a clear no.
pub(crate) struct Refuse {
    pub(crate) face: &'static str,
}

impl Approver for Refuse {
    fn approve(&self, ask: &Ask<'_>) -> std::result::Result<(), String> {
        Err(format!(
            "not confirmed: ai asks before it runs the {} {}, and {} has nobody to ask; it was not run ({})",
            ask.kind,
            ask.name,
            self.face,
            ask.how_to_allow()
        ))
    }
}

/// The terminal (`/dev/tty`): the question written there, a line read for the answer.
pub(crate) struct Terminal;

impl Approver for Terminal {
    fn approve(&self, ask: &Ask<'_>) -> std::result::Result<(), String> {
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
                "not confirmed: ai asks before it runs the {} {}, and there is no terminal to ask on; it was not run ({})",
                ask.kind,
                ask.name,
                ask.how_to_allow()
            ));
        };
        let question = question(ask)?;
        let mut out = &tty;
        let asked = write!(out, "{question}").and_then(|()| out.flush());
        if asked.is_err() {
            return Err(format!(
                "not confirmed: ai could not ask on the terminal before it runs {}; it was not run",
                ask.name
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
            Err(ask.declined())
        }
    }
}

/// Arguments longer than this (as shown, in bytes) are not put to the user: a question the
/// terminal cannot hold is no question. `--yolo` still runs them.
const MAX_SHOWN: usize = 64 * 1024;

/// Arguments up to this many characters are asked about on one line.
const ONE_LINE: usize = 160;

/// The question before a tool runs: every argument exactly as the tool will get it (JSON,
/// whitespace kept, never cut), with what a terminal would not show spelled out (`\e`,
/// `\u{202e}`). Long arguments get lines of their own, and the question is asked again below
/// them. Arguments too long to show are refused (`Err`, the result for the model).
pub(crate) fn question(ask: &Ask<'_>) -> std::result::Result<String, String> {
    let name = crate::sanitize::spell_out(ask.name);
    // Compact JSON escapes newlines, tabs and the other C0 characters; the rest (DEL, C1,
    // bidi and zero-width characters) is spelled out here.
    let shown = crate::sanitize::spell_out(&ask.args.to_string());
    if shown.len() > MAX_SHOWN {
        return Err(format!(
            "not confirmed: the arguments for {name} are {} long, too long to show whole on the terminal (at most {}); it was not run ({})",
            crate::fmt::human_size(shown.len() as u64),
            crate::fmt::human_size(MAX_SHOWN as u64),
            ask.how_to_allow()
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
pub(crate) fn is_yes(read: Option<usize>, answer: &str) -> bool {
    match read {
        Some(n) if n > 0 && answer.ends_with('\n') => yes_word(answer),
        _ => false,
    }
}

/// `y` or `yes`, any case, blanks around.
pub(crate) fn yes_word(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ask<'a>(name: &'a str, args: &'a Value) -> Ask<'a> {
        Ask {
            name,
            kind: "command tool",
            args,
            allow_key: None,
        }
    }

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
        let q = question(&ask("targv", &args)).unwrap();
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
        let q = question(&ask("t", &args)).unwrap();
        assert!(
            q.contains(&format!(
                "/srv/safe{}; rm -rf ~\\u{{202e}}\\x7f\\x9b\\n",
                " ".repeat(400)
            )),
            "{q}"
        );
        assert!(!q.contains('\u{202e}') && !q.contains('\x7f') && !q.contains('\u{9b}'));
        // A tool name (an MCP server chooses it) is spelled out too.
        let q = question(&ask("x\u{1b}[2Jy", &json!({}))).unwrap();
        assert!(!q.contains('\u{1b}'), "{q:?}");
        // Short arguments: one line.
        assert_eq!(
            question(&ask("disk", &json!({"path": "/tmp"}))).unwrap(),
            "run disk with {\"path\":\"/tmp\"}? [y/N] "
        );
        // Too long to show whole: not asked, not run.
        let big = json!({"p": "x".repeat(MAX_SHOWN)});
        let e = question(&ask("t", &big)).unwrap_err();
        assert!(
            e.starts_with("not confirmed: the arguments for t are"),
            "{e}"
        );
    }

    #[test]
    fn a_face_with_nobody_to_ask_refuses_and_names_what_allows_it() {
        let args = json!({});
        let mut a = ask("fs__write_file", &args);
        a.kind = "MCP tool";
        a.allow_key = Some("mcp.servers.fs.allow".into());
        let e = Refuse { face: "ai serve" }.approve(&a).unwrap_err();
        assert_eq!(
            e,
            "not confirmed: ai asks before it runs the MCP tool fs__write_file, and ai serve has nobody to ask; it was not run (the user can allow it with --yolo, or by naming it in \"mcp.servers.fs.allow\" in config.json)"
        );
    }
}
