//! The line editor of the session: rustyline, on the terminal itself (`/dev/tty`), so prompts
//! and what is typed never reach stdout, which carries only the replies. Line editing, a
//! history kept in the `ai` home (mode 0600), bracketed paste (a pasted block is one message),
//! and a trailing `\` to go on on the next line.
//!
//! Cost: rustyline (default features off) and this module add about 230 KB to the release
//! binary (7.04 MB → 7.28 MB); a plain `ai MODEL "…"` never reaches this code and starts as
//! fast as before (300 runs of `ai --no-chat echo x`: 0.54 s before, 0.53–0.66 s after, noise).

use std::path::{Path, PathBuf};

use rustyline::config::{Behavior, Config};
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;

use super::line::{Continued, continued};
use crate::error::{Error, Result};
use crate::output::Ui;

/// Entries the history file keeps.
const HISTORY: usize = 1000;

pub(super) struct Editor {
    ed: rustyline::Editor<(), DefaultHistory>,
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
    pub(super) fn new(history: PathBuf, ui: &Ui) -> Result<Editor> {
        let config = Config::builder()
            .behavior(Behavior::PreferTerm)
            .max_history_size(HISTORY)
            .and_then(|b| b.history_ignore_dups(true))
            .map_err(terminal_error)?
            // A line starting with a blank is kept out of the history, as in bash.
            .history_ignore_space(true)
            .auto_add_history(false)
            .bracketed_paste(true)
            .build();
        let mut ed = rustyline::Editor::with_config(config).map_err(terminal_error)?;
        if !usable(&history) {
            // A FIFO would block the session for ever, a device or socket is no place for it.
            ui.warn(&format!(
                "the history file {} is not a regular file; this session's lines are not kept",
                history.display()
            ));
            return Ok(Editor { ed, history: None });
        }
        // A missing history is the first session; an unreadable one is no reason to stop.
        let _ = ed.load_history(&history);
        Ok(Editor {
            ed,
            history: Some(history),
        })
    }

    /// Read one message at `prompt`; lines ending in `\` go on at a `... ` prompt.
    pub(super) fn message(&mut self, prompt: &str, ui: &Ui) -> Result<Read> {
        let mut text = String::new();
        let mut first = true;
        loop {
            let shown = if first { prompt } else { "... " };
            match self.ed.readline(shown) {
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

    /// Ask a question on the terminal; `None` for Ctrl+C or Ctrl+D.
    pub(super) fn ask(&mut self, question: &str) -> Result<Option<String>> {
        match self.ed.readline(question) {
            Ok(answer) => Ok(Some(answer)),
            Err(ReadlineError::Interrupted | ReadlineError::Eof) => Ok(None),
            Err(e) => Err(terminal_error(e)),
        }
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

fn terminal_error(e: ReadlineError) -> Error {
    Error::backend(format!("cannot read from the terminal: {e}"))
}
