//! The chats folder: finding, creating, opening, deleting and listing chats. One file per chat,
//! `<home>/chats/<ID>.jsonl`; folder 0700, files 0600. IDs are in `id`, locks in `lock`, the
//! open chat in `file`; their items are re-exported here, where callers have always found them.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub(crate) use super::file::Chat;
use super::file::load;
pub(crate) use super::id::{check_id, file_id, id_shaped, valid_id};
use super::id::{random_id, space};
use super::legacy;
pub(crate) use super::lock::Wait;
use super::lock::{lock, same_file};
use super::open::open_regular;
pub(crate) use super::parse::parse;
use super::record::{self, Header, Record, Role};
use crate::config::{create_private_dir, create_temp, remove_stale_temps};
use crate::error::{Error, Result};
use crate::output::Ui;

pub(crate) struct Store {
    pub(crate) dir: PathBuf,
}

impl Store {
    pub(crate) fn new(home: &crate::config::Home) -> Store {
        Store {
            dir: home.dir.join("chats"),
        }
    }

    pub(crate) fn path(&self, id: &str) -> PathBuf {
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
            header.id = id.clone();
            match create_whole(&self.dir, &id, &path, &header) {
                Ok(file) => {
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
                        new_in: Some(self.dir.clone()),
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
            let file = match open_regular(&path, true)? {
                Some(f) => f,
                None => {
                    let legacy_path = legacy::path(&self.dir, id);
                    if legacy_path.exists() {
                        match self.open_legacy(id, &legacy_path, wait, ui)? {
                            Some(chat) => return Ok(chat),
                            None => continue, // converted by another call meanwhile
                        }
                    }
                    return Err(not_found(id));
                }
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
        let Some(file) = open_regular(path, false)? else {
            return Ok(None);
        };
        lock(&file, id, wait, ui, path)?;
        if same_file(&file, path) != Ok(true) || self.path(id).exists() {
            return Ok(None);
        }
        let mut text = String::new();
        (&file)
            .read_to_string(&mut text)
            .map_err(|e| Error::io("read", path, e))?;
        let legacy::Converted {
            header,
            records,
            body,
            ..
        } = legacy::convert(id, &text, path)?;
        let turns = records
            .iter()
            .filter(|r| matches!(r, Record::Message(m) if m.role == Role::Assistant))
            .count() as u64;
        let mut prefix = record::line(&Record::Chat(header.clone()));
        prefix.push_str(&body);
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
            new_in: None,
        }))
    }

    /// The folder of a chat's kept attachments (`--keep-attachments`): `<ID>.files`.
    pub(crate) fn files_dir(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.files"))
    }

    /// A kept attachment's path, when `name` is a plain file name (never a path out of the
    /// chat's folder) and the file is there.
    pub(crate) fn kept_path(&self, id: &str, name: &str) -> Option<PathBuf> {
        let plain =
            !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0']);
        // The chat's folder itself a link (to anywhere) is no folder of kept copies either.
        let dir = self.files_dir(id);
        let path = dir.join(name);
        (plain
            && fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir())
            && fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()))
        .then_some(path)
    }

    /// Delete a chat, waiting for a turn in progress to finish first.
    pub(crate) fn delete(&self, id: &str, wait: Wait, ui: &Ui) -> Result<()> {
        // A legacy backup exists only if a conversion was cut short; its text goes too.
        let backup = legacy::backup_path(&self.dir, id);
        for path in [self.path(id), legacy::path(&self.dir, id), backup] {
            let Some(file) = open_regular(&path, false)? else {
                continue;
            };
            lock(&file, id, wait, ui, &path)?;
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("delete", &path, e)),
            }
        }
        // Copies of its text left by killed rewrites go with it, and its kept attachments.
        remove_stale_temps(&self.dir, |stem| stem == id);
        match fs::remove_dir_all(self.files_dir(id)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("delete", self.files_dir(id), e)),
        }
        Ok(())
    }

    /// Remove the copies left by killed rewrites and creations of any chat (their writer is
    /// gone). Returns how many.
    pub(crate) fn remove_leftovers(&self) -> usize {
        remove_stale_temps(&self.dir, valid_id)
    }

    /// Every entry named like a chat file: (ID, path, legacy?). Whether it is a readable
    /// regular file is for the reader to find out (`chat list` shows it as damaged if not).
    /// No chats folder yet is no entries; one that cannot be read is an error.
    pub(crate) fn entries(&self) -> Result<Vec<(String, PathBuf, bool)>> {
        let dir = match fs::read_dir(&self.dir) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io("read", &self.dir, e)),
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
        Ok(out)
    }
}

/// Create the chat file `path` whole: the header goes to a locked temp file, and only then is
/// linked to the chat's name (`link` never replaces: `AlreadyExists` means another call has the
/// name). So nobody ever sees the file without its header, and a failed write (a full disk)
/// leaves nothing that blocks the name. The returned file is locked.
///
/// Nothing is synced here: the first append syncs the header with the turn (one `fdatasync`),
/// then the folder (see `Chat::new_in`). A crash before that first turn is saved may leave the
/// name with no header on disk, which the listing passes over (an empty file) and which holds
/// nothing that was promised.
fn create_whole(dir: &Path, id: &str, path: &Path, header: &Header) -> std::io::Result<File> {
    let (tmp, mut file) = create_temp(dir, id, true)?;
    let result = (|| {
        file.lock()?;
        file.write_all(record::line(&Record::Chat(header.clone())).as_bytes())?;
        fs::hard_link(&tmp, path)
    })()
    .map(|()| file);
    let _ = fs::remove_file(&tmp);
    result
}

fn not_found(id: &str) -> Error {
    Error::not_found(format!("no chat '{id}'")).hint("`ai chat list` shows your chats")
}
