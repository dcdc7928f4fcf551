//! Chat files on disk: IDs, lookup, exclusive locks, loading (with torn-tail recovery) and
//! appending. One file per chat, `<home>/chats/<ID>.jsonl`; folder 0700, files 0600.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::Rng;

use super::legacy;
pub(crate) use super::parse::parse;
use super::parse::{Parsed, damaged, parse_body, parse_header};
use super::record::{self, Header, Record, Role, SummaryRec};
use crate::config::create_private_dir;
use crate::error::{Error, Result};
use crate::output::Ui;

/// Whether to wait for a chat another call is using.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    /// Wait up to this long (saying so on stderr after a moment).
    UpTo(Duration),
    /// `--no-wait`: fail at once with the busy exit code.
    No,
}

pub(crate) struct Store {
    pub(crate) dir: PathBuf,
}

/// A chat opened for a turn: locked for as long as this value lives.
pub(crate) struct Chat {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    file: File,
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
    needs_newline: bool,
    /// Where the intact part of the file ends, when an interrupted write left a torn tail.
    torn_at: Option<u64>,
    /// A legacy `<ID>.json` to remove once the converted file is written.
    legacy: Option<PathBuf>,
    /// Content of a legacy chat, written in front of the first append.
    legacy_prefix: Option<String>,
}

/// Is `s` a valid chat ID or name? (`[A-Za-z0-9_-]{1,64}`: never a path.)
pub(crate) fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Does `s` have the shape of a generated ID (3–8 letters and digits, at least one digit)?
pub(crate) fn id_shaped(s: &str) -> bool {
    (3..=8).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric())
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// Words that are chat subcommands, never chat names.
pub(crate) const RESERVED_NAMES: &[&str] = &[
    "list", "show", "delete", "rename", "retry", "gc", "new", "help",
];

/// How a chat given a name is stored: an ID of the generated shape as it is (upper-case), any
/// other name lower-case. So `find` needs only the word as typed, upper- and lower-cased.
pub(crate) fn file_id(name: &str) -> String {
    if id_shaped(name) && name == name.to_ascii_uppercase() {
        name.to_owned()
    } else {
        name.to_ascii_lowercase()
    }
}

pub(crate) fn check_id(s: &str) -> Result<()> {
    if valid_id(s) {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "'{}' is not a valid chat ID",
            crate::output::sanitize(s)
        ))
        .hint("chat IDs are letters, digits, - and _ (up to 64); `ai chat list` shows yours"))
    }
}

impl Store {
    pub(crate) fn new(home: &crate::config::Home) -> Store {
        Store {
            dir: home.dir.join("chats"),
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Find an existing chat by ID or name, case-insensitively, with at most six `stat`s (no
    /// folder scan: generated IDs are stored upper-case and names lower-case, see [`file_id`]).
    /// Returns its canonical ID.
    pub(crate) fn find(&self, word: &str) -> Option<String> {
        if !valid_id(word) {
            return None;
        }
        [
            word.to_owned(),
            word.to_ascii_uppercase(),
            word.to_ascii_lowercase(),
        ]
        .into_iter()
        .find(|c| self.path(c).exists() || legacy::path(&self.dir, c).exists())
    }

    /// Reserve a new chat with a fresh ID (or the given name), locked, header written.
    pub(crate) fn create(&self, name: Option<&str>, mut header: Header) -> Result<Chat> {
        create_private_dir(&self.dir)?;
        let mut len = 3;
        let mut counted = false;
        for _ in 0..200 {
            let id = match name {
                Some(n) => file_id(n),
                None => random_id(len),
            };
            if name.is_none() && legacy::path(&self.dir, &id).exists() {
                continue;
            }
            let path = self.path(&id);
            match OpenOptions::new()
                .read(true)
                .append(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(mut file) => {
                    file.lock().map_err(|e| Error::io("lock", &path, e))?;
                    header.id = id.clone();
                    file.write_all(record::line(&Record::Chat(header.clone())).as_bytes())
                        .and_then(|()| file.sync_data())
                        .map_err(|e| Error::io("write", &path, e))?;
                    return Ok(Chat {
                        id,
                        path,
                        file,
                        header,
                        records: Vec::new(),
                        complete: true,
                        turns: 0,
                        unread_bytes: 0,
                        needs_newline: false,
                        torn_at: None,
                        legacy: None,
                        legacy_prefix: None,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if name.is_some() {
                        return Err(Error::usage(format!("chat '{id}' already exists")));
                    }
                    if !counted {
                        // Collisions mean the space is filling: grow while it is half used.
                        counted = true;
                        let used = fs::read_dir(&self.dir).map(|d| d.count()).unwrap_or(0) as u64;
                        while used * 2 >= space(len) {
                            len += 1;
                        }
                    }
                }
                Err(e) => return Err(Error::io("create chat file", &path, e)),
            }
        }
        Err(Error::backend("could not find a free chat ID")
            .hint("remove old chats: ai chat gc --older-than 90d"))
    }

    /// Create the chat `name`, locked, header written; `None` when it exists already.
    pub(crate) fn create_named(&self, name: &str, header: Header) -> Result<Option<Chat>> {
        if legacy::path(&self.dir, &file_id(name)).exists() {
            return Ok(None);
        }
        match self.create(Some(name), header) {
            Ok(c) => Ok(Some(c)),
            Err(_) if self.path(&file_id(name)).exists() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Open an existing chat for a turn: lock it, then load the header and the newest records
    /// (at least `need_chars` characters of content, or everything).
    pub(crate) fn open(
        &self,
        id: &str,
        wait: Wait,
        need_chars: Option<usize>,
        ui: &Ui,
    ) -> Result<Chat> {
        loop {
            let path = self.path(id);
            let file = match OpenOptions::new().read(true).append(true).open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let legacy_path = legacy::path(&self.dir, id);
                    if legacy_path.exists() {
                        match self.open_legacy(id, &legacy_path, wait, ui)? {
                            Some(chat) => return Ok(chat),
                            None => continue, // converted by another call meanwhile
                        }
                    }
                    return Err(not_found(id));
                }
                Err(e) => return Err(Error::io("open", &path, e)),
            };
            lock(&file, id, wait, ui, &path)?;
            // A delete or a rewrite may have won the race while we waited.
            match same_file(&file, &path) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(()) => {
                    return Err(not_found(id).hint("it was deleted while this call waited for it"));
                }
            }
            return load(id, path, file, need_chars, ui);
        }
    }

    /// Lock a legacy `<ID>.json` chat and read it; its records are written to `<ID>.jsonl` at the
    /// first append. `None` when another call converted it meanwhile.
    fn open_legacy(&self, id: &str, path: &Path, wait: Wait, ui: &Ui) -> Result<Option<Chat>> {
        let file = match OpenOptions::new().read(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("open", path, e)),
        };
        lock(&file, id, wait, ui, path)?;
        if same_file(&file, path) != Ok(true) || self.path(id).exists() {
            return Ok(None);
        }
        let text = fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        let (header, records) = legacy::parse(id, &text, path)?;
        let turns = records
            .iter()
            .filter(|r| matches!(r, Record::Message(m) if m.role == Role::Assistant))
            .count() as u64;
        let mut prefix = record::line(&Record::Chat(header.clone()));
        for r in &records {
            prefix.push_str(&record::line(r));
        }
        Ok(Some(Chat {
            id: id.to_owned(),
            path: self.path(id),
            file,
            header,
            records,
            complete: true,
            turns,
            unread_bytes: 0,
            needs_newline: false,
            torn_at: None,
            legacy: Some(path.to_owned()),
            legacy_prefix: Some(prefix),
        }))
    }

    /// Delete a chat, waiting for a turn in progress to finish first.
    pub(crate) fn delete(&self, id: &str, wait: Wait, ui: &Ui) -> Result<()> {
        for path in [self.path(id), legacy::path(&self.dir, id)] {
            let file = match File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("open", &path, e)),
            };
            lock(&file, id, wait, ui, &path)?;
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("delete", &path, e)),
            }
        }
        Ok(())
    }

    /// Every chat file: (ID, path, legacy?).
    pub(crate) fn entries(&self) -> Vec<(String, PathBuf, bool)> {
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in dir.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let (stem, legacy) = match name.strip_suffix(".jsonl") {
                Some(s) => (s, false),
                None => match name.strip_suffix(".json") {
                    Some(s) => (s, true),
                    None => continue,
                },
            };
            if valid_id(stem) {
                // A legacy file beside its converted twin is a leftover: the .jsonl wins.
                if legacy && self.path(stem).exists() {
                    continue;
                }
                out.push((stem.to_owned(), e.path(), legacy));
            }
        }
        out
    }
}

fn not_found(id: &str) -> Error {
    Error::not_found(format!("no chat '{id}'")).hint("`ai chat list` shows your chats")
}

/// Generated IDs: `len` characters of A–Z0–9, at least one a digit.
fn random_id(len: usize) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    loop {
        let id: String = (0..len)
            .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
            .collect();
        if id.bytes().any(|b| b.is_ascii_digit()) {
            return id;
        }
    }
}

/// How many generated IDs of this length exist.
fn space(len: usize) -> u64 {
    let len = u32::try_from(len).unwrap_or(12).min(12);
    36u64.pow(len) - 26u64.pow(len)
}

fn lock(file: &File, id: &str, wait: Wait, ui: &Ui, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => return Ok(()),
        Err(fs::TryLockError::WouldBlock) => {}
        Err(fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
    }
    let limit = match wait {
        Wait::No => {
            return Err(
                Error::busy(format!("chat {id} is in use by another ai call"))
                    .hint("try again when it is done, or leave out --no-wait to wait for it"),
            );
        }
        Wait::UpTo(limit) => limit,
    };
    let start = Instant::now();
    let mut told = false;
    let mut pause = Duration::from_millis(2);
    loop {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
        }
        if !told && start.elapsed() > Duration::from_millis(700) {
            told = true;
            ui.notice(&format!("ai: chat {id} is in use by another ai call; waiting for it (--no-wait fails at once)"));
        }
        if start.elapsed() > limit {
            return Err(Error::busy(format!(
                "chat {id} stayed in use by another ai call for {}",
                crate::backend::process::human_duration(limit)
            ))
            .hint("check for a hung ai process (ps), or try again later"));
        }
    }
}

/// Does `path` still name the file we hold? Err(()) when the path is gone.
fn same_file(file: &File, path: &Path) -> std::result::Result<bool, ()> {
    let held = file.metadata().map_err(|_| ())?;
    match fs::metadata(path) {
        Ok(now) => Ok(held.dev() == now.dev() && held.ino() == now.ino()),
        Err(_) => Err(()),
    }
}

/// Read the header and records of a locked chat file. With `need_chars`, only the header and
/// as much of the tail as holds that much content are read (doubling the tail read as needed),
/// so a turn on a long chat costs about what one on a short chat does.
fn load(
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
    })
}

impl Chat {
    /// Append records in one write, then sync. Cuts off a torn tail first.
    pub(crate) fn append(&mut self, records: &[Record], ui: &Ui) -> Result<()> {
        let mut text = self.legacy_prefix.take().unwrap_or_default();
        for r in records {
            text.push_str(&record::line(r));
        }
        if let Some(legacy_path) = self.legacy.take() {
            return self.convert_legacy(&legacy_path, &text, ui);
        }
        if std::mem::take(&mut self.needs_newline) {
            text.insert(0, '\n');
        }
        if let Some(at) = self.torn_at.take() {
            self.file
                .set_len(at)
                .map_err(|e| Error::io("repair", &self.path, e))?;
            ui.notice(&format!(
                "ai: chat {}: removed the incomplete last record",
                self.id
            ));
        }
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| Error::io("write", &self.path, e))
    }

    /// First write to a legacy chat: the whole converted chat goes to `<ID>.jsonl`, then the
    /// old `<ID>.json` is removed (we hold its lock throughout).
    fn convert_legacy(&mut self, legacy_path: &Path, text: &str, ui: &Ui) -> Result<()> {
        self.replace_locked(text.as_bytes())?;
        fs::remove_file(legacy_path).map_err(|e| Error::io("remove", legacy_path, e))?;
        ui.notice(&format!(
            "ai: chat {} converted from the Python ai-cli format",
            self.id
        ));
        Ok(())
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
        if let Some(legacy_path) = self.legacy.take() {
            let prefix = self.legacy_prefix.take().unwrap_or_default();
            let body = prefix.split_once('\n').map_or("", |(_, rest)| rest);
            self.replace_locked(format!("{head}{body}{tail}").as_bytes())?;
            fs::remove_file(&legacy_path).map_err(|e| Error::io("remove", &legacy_path, e))?;
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
        let tmp = dir.join(format!(".{}.{}.tmp", self.id, std::process::id()));
        let _ = fs::remove_file(&tmp);
        let result = (|| -> std::io::Result<File> {
            let mut file = OpenOptions::new()
                .read(true)
                .append(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
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
    fn ids() {
        assert!(id_shaped("K7Q") && id_shaped("k7q") && !id_shaped("fix") && !id_shaped("ab"));
        assert!(valid_id("work-notes_1") && !valid_id("../../etc/passwd") && !valid_id(""));
        for _ in 0..100 {
            let id = random_id(3);
            assert!(id_shaped(&id) && id == id.to_ascii_uppercase());
        }
        assert_eq!(space(3), 46656 - 17576);
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
