//! An open chat (`Chat`): a locked chat file, loaded (with torn-tail recovery), appended to
//! and rewritten in place.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::legacy;
use super::parse::{Parsed, damaged, parse, parse_body, parse_header};
use super::record::{self, Header, Record, SummaryRec};
use crate::config::{create_temp, remove_stale_temps};
use crate::error::{Error, Result};
use crate::output::Ui;

/// A chat opened for a turn: locked for as long as this value lives.
pub(crate) struct Chat {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    pub(super) file: File,
    pub(crate) header: Header,
    /// Records after the header, oldest first: all of them, or the newest ones (see `complete`).
    pub(crate) records: Vec<Record>,
    /// Whether `records` holds every record of the file.
    pub(crate) complete: bool,
    /// The number of the last complete exchange.
    pub(crate) turns: u64,
    /// Bytes of records before those in `records` (not read: see `complete`).
    pub(crate) unread_bytes: u64,
    /// The file's last record lacks its newline: the next write starts with one.
    pub(super) needs_newline: bool,
    /// Where the intact part of the file ends, when an interrupted write left a torn tail.
    pub(super) torn_at: Option<u64>,
    /// A legacy `<ID>.json` to remove once the converted file is written.
    pub(super) legacy: Option<PathBuf>,
    /// Content of a legacy chat, written in front of the first append.
    pub(super) legacy_prefix: Option<String>,
    /// A chat created by this call: its folder, synced once after the first append (which
    /// syncs the header with the turn), so that a saved one-shot costs one `fdatasync` and one
    /// directory `fsync`, not three syncs.
    pub(super) new_in: Option<PathBuf>,
}

/// Read the header and records of a locked chat file. With `need_chars`, only the header and
/// as much of the tail as holds that much content are read (doubling the tail read as needed),
/// so a turn on a long chat costs about what one on a short chat does.
pub(super) fn load(
    id: &str,
    path: PathBuf,
    mut file: File,
    need_chars: Option<usize>,
    ui: &Ui,
) -> Result<Chat> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("read", &path, e))?
        .len();
    let read_at = |file: &mut File, from: u64, to: u64| -> Result<Vec<u8>> {
        let mut buf = vec![0u8; usize::try_from(to - from).unwrap_or(0)];
        file.seek(SeekFrom::Start(from))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(|e| Error::io("read", &path, e))?;
        Ok(buf)
    };
    let parsed = match need_chars {
        // Small files, and callers that want everything: one read.
        None => parse(&read_at(&mut file, 0, len)?, None, &path)?,
        Some(_) if len <= 256 * 1024 => parse(&read_at(&mut file, 0, len)?, need_chars, &path)?,
        Some(need) => {
            let mut head_len = 8 * 1024u64;
            let (header, body_start) = loop {
                let head = read_at(&mut file, 0, head_len.min(len))?;
                match head.iter().position(|&b| b == b'\n') {
                    Some(end) => break (parse_header(&head[..end], &path)?, end as u64 + 1),
                    None if head_len >= len => {
                        return Err(damaged(&path, 1, "the header line is incomplete".into()));
                    }
                    None => head_len *= 4,
                }
            };
            // JSON escaping and record fields add to the content: start at twice the need.
            let mut chunk = (need as u64).saturating_mul(2).max(64 * 1024);
            loop {
                let from = len.saturating_sub(chunk).max(body_start);
                let buf = read_at(&mut file, from, len)?;
                match parse_body(&buf, from, from == body_start, Some(need)) {
                    Ok(body) if body.enough || from == body_start => {
                        break Parsed {
                            header,
                            records: body.records,
                            complete: body.complete,
                            turns: body.turns,
                            unread_bytes: (from + body.stopped_at as u64)
                                .saturating_sub(body_start),
                            torn_at: body.torn_at,
                            unterminated: body.unterminated,
                        };
                    }
                    Ok(_) => chunk = chunk.saturating_mul(2),
                    // Damage: read it all to name the line.
                    Err(_) => {
                        parse(&read_at(&mut file, 0, len)?, need_chars, &path)?;
                        return Err(damaged(&path, 0, "unreadable record".into()));
                    }
                }
            }
        }
    };
    if parsed.torn_at.is_some() {
        ui.notice(&format!(
            "ai: chat {id}: the last record was cut short by an interrupted call; it is ignored and will be removed"
        ));
    }
    Ok(Chat {
        id: id.to_owned(),
        path,
        file,
        header: parsed.header,
        records: parsed.records,
        complete: parsed.complete,
        turns: parsed.turns,
        unread_bytes: parsed.unread_bytes,
        needs_newline: parsed.unterminated,
        torn_at: parsed.torn_at,
        legacy: None,
        legacy_prefix: None,
        new_in: None,
    })
}

/// The buffer appends are written through: a turn under this size is one `write`.
const APPEND_BUFFER: usize = 256 * 1024;

/// An append that failed: nothing of it is on disk. `cause` says why (a full disk, most often).
/// Callers that hold the turn's text (the prompt, the reply) should show it: it exists nowhere
/// else now. With `?` it becomes an ordinary [`Error`] whose message says the turn was not saved.
#[derive(Debug)]
pub(crate) struct Unsaved {
    pub(crate) chat: String,
    pub(crate) cause: Error,
}

impl From<Unsaved> for Error {
    fn from(u: Unsaved) -> Error {
        let hint = u
            .cause
            .hint_text()
            .unwrap_or("free some disk space, then send it again")
            .to_owned();
        Error::backend(format!(
            "this turn was not saved to chat {}: {}",
            u.chat, u.cause
        ))
        .hint(hint)
    }
}

impl Chat {
    /// Append records in one write, then sync. Cuts off a torn tail first. On failure (a full
    /// disk) the file is cut back to where it ended, so nothing partial stays, and the error
    /// ([`Unsaved`]) says the turn was not saved.
    pub(crate) fn append(
        &mut self,
        records: &[Record],
        ui: &Ui,
    ) -> std::result::Result<(), Unsaved> {
        let unsaved = |chat: &Chat, cause: Error| Unsaved {
            chat: chat.id.clone(),
            cause,
        };
        if let Some(legacy_path) = self.legacy.clone() {
            let mut text = self.legacy_prefix.clone().unwrap_or_default();
            for r in records {
                text.push_str(&record::line(r));
            }
            let header = self.header.clone();
            return match self.convert_legacy(&legacy_path, &text, &header, Some(ui)) {
                Ok(()) => Ok(()),
                Err(e) => Err(unsaved(self, e)),
            };
        }
        if let Some(at) = self.torn_at {
            self.file
                .set_len(at)
                .map_err(|e| unsaved(self, Error::io("repair", &self.path, e)))?;
            self.torn_at = None;
            ui.notice(&format!(
                "ai: chat {}: removed the incomplete last record",
                self.id
            ));
        }
        let old_len = match self.file.metadata() {
            Ok(m) => m.len(),
            Err(e) => return Err(unsaved(self, Error::io("read", &self.path, e))),
        };
        // Records are encoded straight into the file through a buffer, so a long prompt or
        // reply is never held twice; a turn of usual size still goes down in one write.
        let written = {
            let mut w = std::io::BufWriter::with_capacity(APPEND_BUFFER, &self.file);
            let mut put = || -> std::io::Result<()> {
                if self.needs_newline {
                    w.write_all(b"\n")?;
                }
                for r in records {
                    serde_json::to_writer(&mut w, r).map_err(std::io::Error::other)?;
                    w.write_all(b"\n")?;
                }
                w.flush()
            };
            put()
        };
        match written.and_then(|()| self.file.sync_data()) {
            Ok(()) => {
                self.needs_newline = false;
                // A new chat's name is made durable with its first turn.
                if let Some(dir) = self.new_in.take()
                    && let Ok(d) = File::open(dir)
                {
                    let _ = d.sync_all();
                }
                Ok(())
            }
            Err(e) => {
                // Shrinking needs no space, so it works on a full disk too.
                if let Err(cut) = self
                    .file
                    .set_len(old_len)
                    .and_then(|()| self.file.sync_data())
                {
                    ui.notice(&format!(
                        "ai: chat {}: could not remove the partly written record ({cut}); the next turn will",
                        self.id
                    ));
                    self.torn_at = Some(old_len);
                }
                Err(unsaved(self, Error::io("write", &self.path, e)))
            }
        }
    }

    /// First write to a legacy chat: the whole converted chat (`text`, with `header`) goes to
    /// `<ID>.jsonl`; the original is moved to `<ID>.json.bak` while the new file is read back and
    /// checked (every line, the header), and removed only then. A failed check puts everything
    /// back as it was. Once the new file holds the chat, nothing after it fails the turn.
    fn convert_legacy(
        &mut self,
        legacy_path: &Path,
        text: &str,
        header: &Header,
        ui: Option<&Ui>,
    ) -> Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_owned();
        let backup = legacy::backup_path(&dir, &self.id);
        let lines = text.matches('\n').count();
        self.replace_locked(text.as_bytes())?;
        let moved = fs::rename(legacy_path, &backup);
        let checked = self
            .read_whole()
            .and_then(|bytes| parse(&bytes, None, &self.path))
            .map(|p| p.records.len() + 1 == lines && p.torn_at.is_none() && &p.header == header);
        if checked.as_ref().is_ok_and(|ok| *ok) {
            self.legacy = None;
            self.legacy_prefix = None;
            let kept = match &moved {
                Ok(()) => fs::remove_file(&backup).err().map(|_| backup.clone()),
                Err(_) => Some(legacy_path.to_owned()),
            };
            let mut note = format!(
                "ai: chat {} converted from the Python ai-cli format ({lines} lines written and checked)",
                self.id
            );
            if let Some(k) = kept {
                note.push_str(&format!(
                    "; the original could not be removed: {}",
                    k.display()
                ));
            }
            if let Some(ui) = ui {
                ui.notice(&note);
            }
            return Ok(());
        }
        // Undo: the original back in place, the new file gone.
        if moved.is_ok() {
            let _ = fs::rename(&backup, legacy_path);
        }
        let _ = fs::remove_file(&self.path);
        let why = match checked {
            Err(e) => e.to_string(),
            Ok(_) => "the file read back differs from what was written".to_owned(),
        };
        Err(Error::config(format!(
            "converting chat {} from the Python ai-cli format failed its check ({why}); the original is unchanged",
            self.id
        ))
        .hint("`ai chat show` still reads it; please report this with the file"))
    }

    /// Rewrite the whole file with a new header (rename, a new system prompt): temp file, sync,
    /// rename. The new file is locked before it takes the chat's name and becomes this chat's
    /// file, so the lock is never let go and later appends land in it (not in the replaced one).
    pub(crate) fn rewrite_header(&mut self, header: Header) -> Result<()> {
        self.rewrite(header, &[])
    }

    /// Record a summary: it goes into the header (where turns find it at once) and, as a
    /// record, after the messages it stands for. One atomic replace of the file.
    pub(crate) fn add_summary(&mut self, summary: SummaryRec) -> Result<()> {
        let mut header = self.header.clone();
        header.summary = Some(summary.clone());
        let rec = Record::Summary(summary);
        self.rewrite(header, std::slice::from_ref(&rec))?;
        self.records.push(rec);
        Ok(())
    }

    /// Read every record (a turn may have read only the tail); the lock stays held.
    pub(crate) fn load_all(&mut self) -> Result<()> {
        if self.complete {
            return Ok(());
        }
        let bytes = self.read_whole()?;
        let parsed = parse(&bytes, None, &self.path)?;
        self.records = parsed.records;
        self.complete = true;
        self.unread_bytes = 0;
        Ok(())
    }

    /// The whole locked file.
    fn read_whole(&mut self) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.read_to_end(&mut bytes))
            .map_err(|e| Error::io("read", &self.path, e))?;
        Ok(bytes)
    }

    /// Replace the file: `header`, every record, then `extra`.
    fn rewrite(&mut self, header: Header, extra: &[Record]) -> Result<()> {
        let head = record::line(&Record::Chat(header.clone()));
        let tail: String = extra.iter().map(record::line).collect();
        if let Some(legacy_path) = self.legacy.clone() {
            let prefix = self.legacy_prefix.clone().unwrap_or_default();
            let body = prefix.split_once('\n').map_or("", |(_, rest)| rest);
            let text = format!("{head}{body}{tail}");
            self.convert_legacy(&legacy_path, &text, &header, None)?;
            self.header = header;
            return Ok(());
        }
        let bytes = self.read_whole()?;
        // Every line is copied: check them all (a turn may have read only the tail), so a
        // damaged line stops the rewrite, as it stops a full read.
        let parsed = parse(&bytes, None, &self.path)?;
        let body_start = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| p + 1);
        let body_end = parsed
            .torn_at
            .map_or(bytes.len(), |t| t as usize)
            .max(body_start);
        let mut text = head.into_bytes();
        text.extend_from_slice(&bytes[body_start..body_end]);
        if !text.ends_with(b"\n") {
            text.push(b'\n');
        }
        self.needs_newline = false;
        text.extend_from_slice(tail.as_bytes());
        self.replace_locked(&text)?;
        self.torn_at = None;
        self.header = header;
        Ok(())
    }

    /// Replace the chat file with `bytes`: a new file, locked before the rename puts it in
    /// place; it becomes `self.file` (the replaced one, and its lock, are let go).
    fn replace_locked(&mut self, bytes: &[u8]) -> Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let (tmp, mut file) =
            create_temp(dir, &self.id, true).map_err(|e| Error::io("write", &self.path, e))?;
        let result = (|| -> std::io::Result<File> {
            file.lock()?;
            file.write_all(bytes)?;
            file.sync_all()?;
            fs::rename(&tmp, &self.path)?;
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(file)
        })();
        match result {
            Ok(file) => {
                self.file = file;
                self.torn_at = None;
                // Copies left by rewrites of this chat that were killed part-way.
                remove_stale_temps(dir, |stem| stem == self.id);
                Ok(())
            }
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                Err(Error::io("write", &self.path, e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::record::Role;

    const H: &str = r#"{"type":"chat","v":1,"id":"K7Q","created":"t"}"#;

    fn msg(role: &str, text: &str, turn: u64) -> String {
        format!(r#"{{"type":"message","role":"{role}","content":"{text}","ts":"t","turn":{turn}}}"#)
    }

    fn file(lines: &[String], tail: &str) -> Vec<u8> {
        let mut s = format!("{H}\n");
        for l in lines {
            s.push_str(l);
            s.push('\n');
        }
        s.push_str(tail);
        s.into_bytes()
    }

    #[test]
    fn torn_last_line_is_ignored() {
        let b = file(
            &[msg("user", "a", 1), msg("assistant", "b", 1)],
            r#"{"type":"message","ro"#,
        );
        let p = parse(&b, None, Path::new("x")).unwrap();
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.turns, 1);
        let cut = p.torn_at.unwrap() as usize;
        assert_eq!(&b[cut..], br#"{"type":"message","ro"#);
    }

    #[test]
    fn lone_user_message_at_end_is_torn() {
        let b = file(
            &[
                msg("user", "a", 1),
                msg("assistant", "b", 1),
                msg("user", "c", 2),
            ],
            "",
        );
        let p = parse(&b, None, Path::new("x")).unwrap();
        assert_eq!(p.records.len(), 2);
        assert!(p.torn_at.is_some());
    }

    #[test]
    fn damaged_middle_line_names_line() {
        let b = file(
            &[
                msg("user", "a", 1),
                "{oops".into(),
                msg("assistant", "b", 1),
            ],
            "",
        );
        let e = parse(&b, None, Path::new("x.jsonl")).err().unwrap();
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn partial_load_takes_newest_whole_pairs() {
        let mut lines = Vec::new();
        for t in 1..=50 {
            lines.push(msg("user", &"u".repeat(100), t));
            lines.push(msg("assistant", &"a".repeat(100), t));
        }
        let b = file(&lines, "");
        let p = parse(&b, Some(1000), Path::new("x")).unwrap();
        assert!(!p.complete);
        assert_eq!(p.turns, 50);
        assert!(matches!(&p.records[0], Record::Message(m) if m.role == Role::User));
        assert!(p.records.len() < 100 && p.records.len() >= 10);
    }
}
