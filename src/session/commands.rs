//! The session's commands that act on the last turn and the next one: `/retry`, `/edit`,
//! `/file`, `/system`, `/copy`, `/rename`, `/sources`.

use std::io::Write;
use std::path::PathBuf;

use super::Session;
use super::Shared;
use crate::chat::record::{Record, Role};
use crate::error::{Error, Result};
use crate::output;
use crate::present::Present;
use crate::signal;
use crate::target::Modes;
use crate::turn::{Kind, Target, Turn};

/// What `/retry` does with the chat's last turn.
enum Again {
    /// It failed, was stopped or came back empty: resent in its own place (`ai chat retry`).
    Replace,
    /// It was answered: this prompt is asked again, as a new turn, with what was attached.
    Ask(String, Vec<crate::chat::record::AttachmentRec>),
    Nothing,
}

impl Session {
    /// `/retry`: a failed or stopped last turn is resent in its place (no second copy of the
    /// prompt); an answered one is asked again.
    pub(super) fn retry(&mut self, editor: &Shared) -> Result<()> {
        let Some(id) = self.chat.clone() else {
            self.ctx
                .ui
                .say("ai: nothing to retry yet; the first line starts the chat");
            return Ok(());
        };
        let again = match self.peek(&id) {
            Ok(chat) => last_turn(&chat.records),
            Err(e) => {
                output::print_error(&e);
                return Ok(());
            }
        };
        match again {
            Again::Nothing => {
                self.ctx
                    .ui
                    .say(&format!("ai: chat {id} has no prompt to send again"));
                Ok(())
            }
            Again::Ask(prompt, attached) => {
                // The same images and PDFs (read again, checked against their hashes) and
                // the same pages (their text is in the prompt) go with it.
                let mut media = Vec::new();
                let mut pages = Vec::new();
                for rec in attached {
                    if rec.url.is_some() {
                        pages.push(rec);
                        continue;
                    }
                    match crate::attach::reread(&self.ctx.store, &id, rec) {
                        Ok(a) => media.push(a),
                        Err(e) => {
                            output::print_error(&e);
                            return Ok(());
                        }
                    }
                }
                self.attachments.extend(media);
                self.pages.extend(pages);
                self.send(prompt, editor)
            }
            Again::Replace => {
                let _defer = signal::Defer::start();
                if !signal::forget_interrupt() {
                    return Err(Error::Interrupted);
                }
                let turn = Turn {
                    route: self.route.clone(),
                    modes: Modes {
                        yolo: self.yolo,
                        ..Modes::default()
                    },
                    present: Present::Stream,
                    prompt: String::new(),
                    title: String::new(),
                    attachments: Vec::new(),
                    pages: Vec::new(),
                    schema: None,
                };
                self.run_turn(&Target::Existing(id), turn, Kind::Retry)
            }
        }
    }

    /// `/edit`: the last prompt of the chat (or nothing) in `$VISUAL`/`$EDITOR`; what it holds
    /// when the editor ends well is the next message. `None`: nothing to send.
    pub(super) fn edit(&mut self) -> Option<String> {
        let last = self.chat.clone().and_then(|id| {
            let chat = self.peek(&id).ok()?;
            last_prompt(&chat.records)
        });
        match edit_text(&self.ctx.home.dir, last.as_deref().unwrap_or("")) {
            Ok(Some(text)) => Some(text),
            Ok(None) => {
                self.ctx
                    .ui
                    .say("ai: the edited prompt is empty; nothing was sent");
                None
            }
            Err(e) => {
                output::print_error(&e);
                None
            }
        }
    }

    /// `/file PATH…`: read now (as `-F` reads them), sent with the next message.
    pub(super) fn attach(&mut self, arg: Option<&str>) {
        let Some(arg) = arg else {
            if self.files.is_empty() && self.attachments.is_empty() {
                self.ctx
                    .ui
                    .say("ai: no file goes with the next message; /file PATH adds one");
            } else {
                let names: Vec<&str> = self
                    .files
                    .iter()
                    .map(|f| f.shown.as_str())
                    .chain(self.attachments.iter().map(|a| a.name.as_str()))
                    .collect();
                self.ctx
                    .ui
                    .say(&format!("ai: with the next message: {}", names.join(", ")));
            }
            return;
        };
        let paths: Vec<PathBuf> = arg.split_whitespace().map(PathBuf::from).collect();
        match crate::input::read_files(&paths, &self.ctx.ui) {
            Ok(given) => {
                for b in &given.files {
                    self.ctx.ui.say(&format!(
                        "ai: {} ({} bytes) goes with the next message",
                        b.shown,
                        b.text.len()
                    ));
                }
                for a in &given.attachments {
                    self.ctx.ui.say(&format!(
                        "ai: {} ({}, {}) goes with the next message",
                        a.name,
                        a.media_type,
                        crate::fmt::human_size(a.size)
                    ));
                }
                // Recorded with the message as `-F` records them: the pages (name, final URL,
                // size, hash) and the images and PDFs (a kept copy with --keep-attachments).
                let mut attachments = given.attachments;
                if self.keep_attachments {
                    for a in &mut attachments {
                        a.kept = Some(crate::attach::kept_name(a));
                    }
                }
                self.files.extend(given.files);
                self.attachments.extend(attachments);
                self.pages.extend(given.pages);
            }
            Err(e) => output::print_error(&e),
        }
    }

    /// `/system TEXT`: the system prompt of the next turns (the chat keeps it); bare, say
    /// which one is used.
    pub(super) fn system(&mut self, arg: Option<&str>) {
        if let Some(text) = arg {
            self.opts.system = Some(text.to_owned());
            self.ctx
                .ui
                .say("ai: the system prompt is set for the next turns");
            return;
        }
        let chat_system = self.chat.clone().and_then(|id| {
            let chat = self.peek(&id).ok()?;
            chat.header.system.clone()
        });
        let system = self
            .opts
            .system
            .clone()
            .or(chat_system)
            .or_else(|| self.ctx.config.chat.system.clone());
        match system {
            Some(s) => self.ctx.ui.say(&format!("ai: the system prompt: {s}")),
            None => self.ctx.ui.say("ai: no system prompt is set"),
        }
    }

    /// `/copy`: the last reply to the clipboard of the terminal (OSC 52), written to the
    /// terminal itself, never to stdout.
    pub(super) fn copy(&self) {
        let Some(last) = &self.last else {
            self.ctx.ui.say("ai: no reply to copy yet");
            return;
        };
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/tty")
            .and_then(|mut tty| {
                tty.write_all(osc52(&last.reply).as_bytes())?;
                tty.flush()
            });
        match written {
            Ok(()) => self.ctx.ui.say(&format!(
                "ai: the last reply ({} characters) is on the clipboard (if the terminal allows OSC 52)",
                last.reply.chars().count()
            )),
            Err(e) => output::print_error(
                &Error::usage(format!("cannot write to the terminal: {e}"))
                    .hint("copy it with: ai chat show ID"),
            ),
        }
    }

    /// `/rename TITLE`.
    pub(super) fn rename(&mut self, arg: Option<&str>) {
        let Some(title) = arg else {
            self.ctx.ui.say("ai: give the title: /rename TITLE");
            return;
        };
        let Some(id) = self.chat.clone() else {
            self.ctx
                .ui
                .say("ai: no chat yet; the first line starts one, then /rename names it");
            return;
        };
        if let Err(e) = crate::commands::chat::rename(&self.ctx, &id, title) {
            output::print_error(&e);
        }
    }

    /// `/sources`: the notes the last answer was given, one a line.
    pub(super) fn sources(&self) {
        let hits = self.last.as_ref().map(|l| &l.sources[..]).unwrap_or(&[]);
        if hits.is_empty() {
            self.ctx.ui.say("ai: the last answer was given no notes");
            return;
        }
        let mut text = String::from("ai: the last answer was given:");
        for (i, h) in hits.iter().enumerate() {
            let title = match &h.ordering {
                Some(o) => format!("{o} {}", h.title),
                None => h.title.clone(),
            };
            text.push_str(&format!(
                "\n  [{}] {title} ({}: {}, lines {}-{})",
                i + 1,
                h.kb,
                h.path,
                h.lines[0],
                h.lines[1]
            ));
        }
        self.ctx.ui.say(&text);
    }
}

/// What `/retry` does, from the chat's records (a summary written since does not count).
fn last_turn(records: &[Record]) -> Again {
    let last = records
        .iter()
        .rev()
        .find(|r| matches!(r, Record::Message(_) | Record::Pending(_)));
    match last {
        Some(Record::Pending(_)) => Again::Replace,
        Some(Record::Message(m)) if m.role == Role::User => Again::Replace,
        Some(Record::Message(m)) if m.interrupted || m.empty => Again::Replace,
        Some(_) => match last_prompt(records) {
            Some(prompt) => Again::Ask(prompt, last_attachments(records)),
            None => Again::Nothing,
        },
        None => Again::Nothing,
    }
}

/// What was attached to the last prompt of the chat.
fn last_attachments(records: &[Record]) -> Vec<crate::chat::record::AttachmentRec> {
    records
        .iter()
        .rev()
        .find_map(|r| match r {
            Record::Pending(p) => Some(p.attachments.clone()),
            Record::Message(m) if m.role == Role::User => Some(m.attachments.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The last prompt of the chat: a pending one, or the last user message.
fn last_prompt(records: &[Record]) -> Option<String> {
    records.iter().rev().find_map(|r| match r {
        Record::Pending(p) => Some(p.content.clone()),
        Record::Message(m) if m.role == Role::User => Some(m.content.clone()),
        _ => None,
    })
}

/// Let the user edit `text` in `$VISUAL` or `$EDITOR` (else `vi`), in a file of the `ai` home
/// that only they can read, removed after. `None` when it comes back empty.
fn edit_text(home: &std::path::Path, text: &str) -> Result<Option<String>> {
    use std::os::unix::fs::OpenOptionsExt;
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    let mut words = editor.split_whitespace();
    let program = words.next().unwrap_or("vi").to_owned();
    let path = home.join(format!("edit-{}.md", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let cannot = |e: std::io::Error| {
        Error::usage(format!("cannot write {}: {e}", path.display()))
            .hint("check that the ai home folder is writable")
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(cannot)?;
    file.write_all(text.as_bytes()).map_err(cannot)?;
    drop(file);
    let status = std::process::Command::new(&program)
        .args(words)
        .arg(&path)
        .status();
    // The editor had the terminal: a Ctrl+C in it was its own.
    signal::forget_interrupt();
    let result = match status {
        Ok(s) if s.success() => std::fs::read_to_string(&path)
            .map_err(|e| Error::usage(format!("cannot read {}: {e}", path.display())))
            .map(|t| {
                let t = t.trim_end_matches(['\n', '\r']).to_owned();
                (!t.trim().is_empty()).then_some(t)
            }),
        Ok(s) => Err(Error::usage(format!(
            "the editor {} ended with {s}; nothing was sent",
            output::sanitize(&program)
        ))
        .hint("set $VISUAL or $EDITOR to the editor you use")),
        Err(e) => Err(Error::usage(format!(
            "cannot start the editor {}: {e}",
            output::sanitize(&program)
        ))
        .hint("set $VISUAL or $EDITOR to the editor you use (now: /edit runs vi)")),
    };
    let _ = std::fs::remove_file(&path);
    result
}

/// OSC 52: put `text` on the clipboard of the terminal.
fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", crate::media::base64(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::base64;

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}
