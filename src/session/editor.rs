//! The line editor of the session: rustyline, on the terminal itself (`/dev/tty`), so prompts
//! and what is typed never reach stdout, which carries only the replies. Line editing, a
//! history kept in the `ai` home (mode 0600), bracketed paste (a pasted block is one message),
//! and a trailing `\` to go on on the next line.
//!
//! Cost: rustyline (default features off) and this module add about 230 KB to the release
//! binary (7.04 MB → 7.28 MB); a plain `ai MODEL "…"` never reaches this code and starts as
//! fast as before (300 runs of `ai --no-chat echo x`: 0.54 s before, 0.53–0.66 s after, noise).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::config::{Behavior, CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;

use super::line::{Continued, continued};
use crate::error::{Error, Result};
use crate::output::Ui;

/// Entries the history file keeps.
const HISTORY: usize = 1000;

pub(super) struct Editor {
    ed: rustyline::Editor<Complete, DefaultHistory>,
    /// Messages typed ahead (while a reply streamed), waiting for their turn.
    ahead: VecDeque<String>,
    /// A line typed ahead but not ended with Enter, set aside before a question: the start of
    /// the next message, shown for editing at the next prompt.
    unended: String,
    /// The history file; `None` once it could not be written (said once).
    history: Option<PathBuf>,
}

/// What one read gave.
pub(super) enum Read {
    /// A whole message (continuation lines joined with newlines).
    Message(String),
    /// Ctrl+C: the line (and any lines it continued) is dropped.
    Cleared,
    /// Ctrl+D on an empty line: the session ends.
    End,
}

impl Editor {
    pub(super) fn new(history: PathBuf, complete: Complete, ui: &Ui) -> Result<Editor> {
        let config = Config::builder()
            .behavior(Behavior::PreferTerm)
            .max_history_size(HISTORY)
            .and_then(|b| b.history_ignore_dups(true))
            .map_err(terminal_error)?
            // A line starting with a blank is kept out of the history, as in bash.
            .history_ignore_space(true)
            .auto_add_history(false)
            .bracketed_paste(true)
            .completion_type(CompletionType::List)
            .build();
        let mut ed = rustyline::Editor::with_config(config).map_err(terminal_error)?;
        ed.set_helper(Some(complete));
        if !usable(&history) {
            // A FIFO would block the session for ever, a device or socket is no place for it.
            ui.warn(&format!(
                "the history file {} is not a regular file; this session's lines are not kept",
                history.display()
            ));
            return Ok(Editor {
                ed,
                ahead: VecDeque::new(),
                unended: String::new(),
                history: None,
            });
        }
        // A missing history is the first session; an unreadable one is no reason to stop.
        let _ = ed.load_history(&history);
        Ok(Editor {
            ed,
            ahead: VecDeque::new(),
            unended: String::new(),
            history: Some(history),
        })
    }

    /// Read one message at `prompt`; lines ending in `\` go on at a `... ` prompt.
    pub(super) fn message(&mut self, prompt: &str, ui: &Ui) -> Result<Read> {
        let mut text = String::new();
        let mut first = true;
        loop {
            let shown = if first { prompt } else { "... " };
            let unended = std::mem::take(&mut self.unended);
            let read = if unended.is_empty() {
                self.ed.readline(shown)
            } else {
                self.ed.readline_with_initial(shown, (&unended, ""))
            };
            match read {
                Ok(line) => match continued(&line) {
                    Continued::More(head) => {
                        text.push_str(head);
                        text.push('\n');
                        first = false;
                    }
                    Continued::Complete(last) => {
                        text.push_str(last);
                        break;
                    }
                },
                Err(ReadlineError::Interrupted) => return Ok(Read::Cleared),
                Err(ReadlineError::Eof) => return Ok(Read::End),
                Err(e) => return Err(terminal_error(e)),
            }
        }
        self.remember(&text, ui);
        Ok(Read::Message(text))
    }

    /// The lines typed (and ended with Enter) while a reply streamed, set aside before a
    /// tool's question is asked, so that none is taken for the answer. Read here, one by one,
    /// while the terminal still hands over whole lines; each is a message (lines ending in `\`
    /// joined), added to the history. A line not yet ended stays where it is and shows up at
    /// the next prompt. Kept in order until [`Editor::next_ahead`] takes them. (Without a
    /// question, the line editor reads such lines itself at its next prompts: with its
    /// `buffer-redux` feature it keeps what it read ahead from one read to the next, where it
    /// dropped all but the first line of a burst.)
    pub(super) fn keep_typed_ahead(&mut self, ui: &Ui) {
        let typed = self.typed_ahead(ui);
        self.ahead.extend(typed);
    }

    /// Ask a question on the terminal; `None` for Ctrl+C or Ctrl+D. The answer is only what is
    /// typed after the question is shown: what was typed or pasted before it is never taken
    /// for it (a pasted burst's next line answered a tool's `[y/N]`). Lines waiting on the
    /// terminal are set aside first ([`Editor::keep_typed_ahead`]); lines the line editor read
    /// ahead stay in it, and it reads them at its next prompts: all run after the turn, as
    /// messages. So the answer is read from the terminal directly, not through the line editor
    /// (which would hand over what it read ahead), one line in the terminal's own line mode.
    pub(super) fn ask(&mut self, question: &str, ui: &Ui) -> Result<Option<String>> {
        self.keep_typed_ahead(ui);
        answer(question)
    }

    /// The next message typed ahead, if any.
    pub(super) fn next_ahead(&mut self) -> Option<String> {
        self.ahead.pop_front()
    }

    fn typed_ahead(&mut self, ui: &Ui) -> Vec<String> {
        let (lines, unended) = pending_lines();
        self.unended.push_str(&unended);
        let mut messages = Vec::new();
        let mut text = String::new();
        for line in &lines {
            match continued(line) {
                Continued::More(head) => {
                    text.push_str(head);
                    text.push('\n');
                }
                Continued::Complete(last) => {
                    text.push_str(last);
                    messages.push(std::mem::take(&mut text));
                }
            }
        }
        if !text.is_empty() {
            messages.push(text);
        }
        for m in &messages {
            self.remember(m, ui);
        }
        messages
    }

    /// Add a message to the history, and append it to the file at once: a session that ends
    /// any way at all (a second Ctrl+C, a closed terminal) keeps what was typed.
    fn remember(&mut self, text: &str, ui: &Ui) {
        if text.trim().is_empty() || !matches!(self.ed.add_history_entry(text), Ok(true)) {
            return;
        }
        let Some(path) = &self.history else {
            return;
        };
        if let Err(e) = self.ed.append_history(path) {
            ui.warn(&format!(
                "cannot write the history file {}: {e}; this session's lines are not kept",
                path.display()
            ));
            self.history = None;
        }
    }
}

/// Tab completion: command words, then the aliases after `/model`, the knowledge bases after
/// `/kb` (each of a comma list), and paths after `/file`.
pub(super) struct Complete {
    pub(super) models: Vec<String>,
    pub(super) bases: Vec<String>,
    files: FilenameCompleter,
}

impl Complete {
    pub(super) fn new(models: Vec<String>, bases: Vec<String>) -> Complete {
        Complete {
            models,
            bases,
            files: FilenameCompleter::new(),
        }
    }

    /// Where the word being completed starts in `head`, and the candidates for it.
    pub(super) fn candidates(&self, head: &str) -> Option<(usize, Vec<String>)> {
        let starting = |words: &mut dyn Iterator<Item = &str>, word: &str| -> Vec<String> {
            words
                .filter(|w| w.starts_with(word))
                .map(str::to_owned)
                .collect()
        };
        if head.starts_with('/') && !head.contains(char::is_whitespace) {
            return Some((0, starting(&mut super::line::WORDS.iter().copied(), head)));
        }
        let (command, _) = head.split_once(char::is_whitespace)?;
        let at = head
            .rfind(|c: char| c.is_whitespace() || c == ',')
            .map_or(0, |i| i + 1);
        let word = &head[at..];
        let list = match command {
            "/model" => &self.models,
            "/kb" => &self.bases,
            _ => return None,
        };
        Some((at, starting(&mut list.iter().map(String::as_str), word)))
    }
}

impl Completer for Complete {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = line.get(..pos).unwrap_or(line);
        if head.starts_with("/file ") {
            return self.files.complete(line, pos, ctx);
        }
        Ok(match self.candidates(head) {
            Some((at, words)) => (
                at,
                words
                    .into_iter()
                    .map(|w| Pair {
                        display: w.clone(),
                        replacement: w,
                    })
                    .collect(),
            ),
            None => (pos, Vec::new()),
        })
    }
}

impl Hinter for Complete {
    type Hint = String;
}
impl Highlighter for Complete {}
impl Validator for Complete {}
impl rustyline::Helper for Complete {}

/// Can the history be read and written without blocking: missing (it is created), or a
/// regular file (a symlink to one is followed)? Looked at through a non-blocking open, as
/// config does: opening a FIFO for reading would wait for a writer.
fn usable(path: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file.metadata().is_ok_and(|m| m.file_type().is_file()),
        // Nothing there yet (appending creates a regular file), or unreadable (the write
        // fails and says so): no hang either way.
        Err(_) => true,
    }
}

/// The whole lines waiting on the terminal (`/dev/tty`), read without waiting, and the line
/// still being typed (not ended with Enter). Only when the terminal is in its line mode
/// (canonical), where each read gives at most one whole line and a line still being typed is
/// not given at all (it is read by leaving that mode for a moment).
fn pending_lines() -> (Vec<String>, String) {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open("/dev/tty")
    else {
        return (Vec::new(), String::new());
    };
    // SAFETY: a zeroed termios is a valid value for tcgetattr to fill; the fd is open.
    let mut mode: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(tty.as_raw_fd(), &raw mut mode) } != 0
        || mode.c_lflag & libc::ICANON == 0
    {
        return (Vec::new(), String::new());
    }
    let mut lines = Vec::new();
    let mut buf = [0u8; 8192];
    // Bounded: a paste of thousands of lines while a reply streams is still read whole.
    while lines.len() < 100_000 {
        match tty.read(&mut buf) {
            // Ctrl+D on an empty line gives 0 bytes: nothing more now.
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let text = String::from_utf8_lossy(&buf[..n]);
                let line = text.strip_suffix('\n').unwrap_or(&text);
                lines.push(line.strip_suffix('\r').unwrap_or(line).to_owned());
            }
        }
    }
    // The line being typed: out of line mode (no wait for bytes) its bytes can be read.
    let mut unended = Vec::new();
    let mut raw = mode;
    raw.c_lflag &= !libc::ICANON;
    raw.c_cc[libc::VMIN] = 0;
    raw.c_cc[libc::VTIME] = 0;
    // SAFETY: tcsetattr with termios values we own, on an open descriptor; the mode it had is
    // put back below whatever the read gave.
    if unsafe { libc::tcsetattr(tty.as_raw_fd(), libc::TCSANOW, &raw const raw) } == 0 {
        while unended.len() < 64 * 1024 {
            match tty.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => unended.extend_from_slice(&buf[..n]),
            }
        }
        unsafe { libc::tcsetattr(tty.as_raw_fd(), libc::TCSANOW, &raw const mode) };
    }
    let unended = String::from_utf8_lossy(&unended)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    (lines, unended)
}

/// Show `question` on the terminal and read one line typed after it, in the terminal's line
/// mode (its own echo and erase), with Ctrl+C ending the line rather than sending a signal:
/// `None` for Ctrl+C, Ctrl+D, or no terminal.
fn answer(question: &str) -> Result<Option<String>> {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open("/dev/tty")
    else {
        return Ok(None);
    };
    let fd = tty.as_raw_fd();
    // SAFETY: a zeroed termios is a valid value for tcgetattr to fill; the fd is open.
    let mut before: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &raw mut before) } != 0 {
        return Ok(None);
    }
    let mut mode = before;
    mode.c_lflag |= libc::ICANON | libc::ECHO | libc::ECHOE;
    mode.c_lflag &= !libc::ISIG;
    mode.c_cc[libc::VEOL] = 0x03;
    // SAFETY: as above; the mode it had is put back before returning.
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw const mode) } != 0 {
        return Ok(None);
    }
    let asked = tty
        .write_all(question.as_bytes())
        .and_then(|()| tty.flush());
    let mut buf = [0u8; 4096];
    let read = asked.and_then(|()| {
        loop {
            match tty.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        }
    });
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw const before) };
    let n = read.map_err(|e| Error::backend(format!("cannot read from the terminal: {e}")))?;
    let line = String::from_utf8_lossy(&buf[..n]).into_owned();
    match line.strip_suffix('\n') {
        Some(answer) => Ok(Some(answer.strip_suffix('\r').unwrap_or(answer).to_owned())),
        None => {
            // Ctrl+C (ending the line), or Ctrl+D: the terminal's line is left unfinished.
            let _ = tty.write_all(b"\r\n");
            Ok(None)
        }
    }
}

fn terminal_error(e: ReadlineError) -> Error {
    Error::backend(format!("cannot read from the terminal: {e}"))
}

#[cfg(test)]
mod tests {
    use super::Complete;

    #[test]
    fn completion_offers_commands_models_and_bases() {
        let c = Complete::new(
            vec!["sonnet".into(), "opus".into(), "gpt".into()],
            vec!["notes".into(), "news".into(), "docs".into()],
        );
        assert_eq!(
            c.candidates("/re"),
            Some((0, vec!["/retry".into(), "/rename".into()]))
        );
        assert_eq!(c.candidates("/model s"), Some((7, vec!["sonnet".into()])));
        assert_eq!(
            c.candidates("/kb docs,n"),
            Some((9, vec!["notes".into(), "news".into()]))
        );
        assert_eq!(c.candidates("hello wor"), None);
        assert_eq!(c.candidates("/help x"), None);
    }
}
