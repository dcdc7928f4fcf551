//! The index of one knowledge base: `<home>/kb/NAME.sqlite`, in WAL mode with a busy timeout so
//! searches and grounded turns run while a sync writes.
//!
//! Tables: `meta` (schema version, embedding model and dimensions, chunker version, last sync),
//! `notes` (stable ID, path, title, ordering, hash of the normalized text, size and mtime,
//! aliases, language), `chunks` (the note's passages with heading path, line range, text, hash
//! and vector), and two contentless FTS5 tables: `words` over each chunk's title, aliases,
//! heading and text as Snowball stems of the note's language (unicode61 with diacritics folded:
//! `uber` finds "Über", `backups` finds "backup"), and `grams` over its title, heading and text
//! (trigram: `sicherung` finds "Datenbanksicherung"). Both are fed [`fold`]ed text, so `ß` and
//! `ss` meet.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::config::Home;
use crate::error::{Error, Result};

/// Bumped when the tables change shape: an older index is rebuilt by `ai kb sync --full`.
pub(crate) const SCHEMA: &str = "1";
/// Bumped when chunking changes: an index chunked otherwise is rebuilt on its next sync.
pub(crate) const CHUNKER: &str = "1";
/// Bumped when what the keyword tables hold changes: the next sync re-indexes the keywords of
/// an older index from its notes (its passages and vectors are kept); until then it is searched
/// as it was indexed. Absent in indexes from before stemming ("1").
pub(crate) const KEYWORDS: &str = "2";

const TABLES: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE notes (
    n INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    title TEXT NOT NULL,
    ordering TEXT,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime INTEGER NOT NULL,
    aliases TEXT NOT NULL DEFAULT '',
    lang TEXT
);
CREATE INDEX notes_path ON notes(path);
CREATE TABLE chunks (
    c INTEGER PRIMARY KEY,
    note INTEGER NOT NULL REFERENCES notes(n) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    heading TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text TEXT NOT NULL,
    hash TEXT NOT NULL,
    vector BLOB
);
CREATE INDEX chunks_note ON chunks(note, seq);
CREATE INDEX chunks_unembedded ON chunks(c) WHERE vector IS NULL;
CREATE VIRTUAL TABLE words USING fts5(title, aliases, heading, text, content='',
    contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
{LINKS}
CREATE VIRTUAL TABLE grams USING fts5(title, heading, text, content='', contentless_delete=1,
    tokenize='trigram remove_diacritics 1');
";

/// The links of each note ([`super::note::Link`]): `key` is the name's last part without `.md`,
/// in lowercase, which is how a link's target is looked up ([`super::linked`]).
const LINKS: &str = "
CREATE TABLE links (
    note INTEGER NOT NULL REFERENCES notes(n) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    wiki INTEGER NOT NULL,
    name TEXT NOT NULL,
    key TEXT NOT NULL
);
CREATE INDEX links_note ON links(note);
CREATE INDEX links_key ON links(key);
";

/// Documents (HTML, PDF) that gave no text, by path, with the size and mtime they had then and
/// why: a sync parses one again only when it changed. Made by each sync when missing.
pub(crate) const UNREAD: &str = "CREATE TABLE IF NOT EXISTS unread (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, reason TEXT NOT NULL
) WITHOUT ROWID;";

/// Where the indexes live.
pub(crate) fn dir(home: &Home) -> PathBuf {
    home.dir.join("kb")
}

/// The index file of knowledge base `name`.
pub(crate) fn file(home: &Home, name: &str) -> PathBuf {
    dir(home).join(format!("{name}.sqlite"))
}

/// The side file beside an index file, where its vectors are kept ([`super::vectors`]).
pub(crate) fn vectors_file(index_path: &Path) -> PathBuf {
    index_path.with_extension("vectors")
}

/// An open index.
pub(crate) struct Index {
    pub(crate) conn: Connection,
    pub(crate) name: String,
    pub(crate) path: PathBuf,
}

/// Text as the full-text tables see it: lowercase, `ß` as `ss` (the tokenizers fold other
/// diacritics themselves).
pub(crate) fn fold(text: &str) -> String {
    let lower = text.to_lowercase();
    if lower.contains('ß') {
        lower.replace('ß', "ss")
    } else {
        lower
    }
}

/// Where `kb sync --full` builds a new index beside the one in use, which searches keep reading
/// until [`switch`] puts the new one in its place. (A knowledge base's name has no dot, so this
/// is no other base's file.)
pub(crate) fn beside(home: &Home, name: &str) -> PathBuf {
    dir(home).join(format!("{name}.rebuild.sqlite"))
}

impl Index {
    /// Open the index of `name`; with `create`, make it (and its folder) when missing.
    pub(crate) fn open(home: &Home, name: &str, create: bool) -> Result<Index> {
        Index::open_at(home, name, file(home, name), create)
    }

    /// Open the index of `name` at `path` (its own file, or [`beside`] it).
    pub(crate) fn open_at(home: &Home, name: &str, path: PathBuf, create: bool) -> Result<Index> {
        if !create && !path.exists() {
            return Err(
                Error::not_found(format!("knowledge base {name} has no index yet"))
                    .hint(format!("build it with: ai kb sync {name}")),
            );
        }
        // SQLite would open a FIFO or a device in its place and wait on it for ever.
        if let Ok(meta) = std::fs::metadata(&path)
            && !meta.is_file()
        {
            return Err(Error::config(format!(
                "the index of knowledge base {name} is not a regular file: {}",
                path.display()
            ))
            .hint(format!(
                "remove it, then rebuild it with: ai kb sync --full {name}"
            )));
        }
        if create {
            crate::config::create_private_dir(&dir(home))?;
        }
        let flags = if create {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(&path, flags).map_err(|e| damaged(name, &path, &e))?;
        let index = Index {
            conn,
            name: name.to_owned(),
            path,
        };
        index.prepare(create)?;
        Ok(index)
    }

    fn prepare(&self, create: bool) -> Result<()> {
        let c = &self.conn;
        c.busy_timeout(Duration::from_secs(30))
            .map_err(|e| self.damaged(&e))?;
        // WAL lets searches read while a sync writes; NORMAL sync is durable at checkpoints and
        // never corrupts (a crash loses at most the last commits, which the next sync redoes).
        c.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| self.damaged(&e))?;
        c.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| self.damaged(&e))?;
        c.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| self.damaged(&e))?;
        let has_meta: bool = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| self.damaged(&e))?
            > 0;
        if !has_meta {
            if !create {
                return Err(self.damaged_msg("it has no tables"));
            }
            let tables = TABLES.replace("{LINKS}", LINKS);
            c.execute_batch(&format!(
                "BEGIN IMMEDIATE; {tables}
                 INSERT INTO meta VALUES ('schema', '{SCHEMA}'), ('chunker', '{CHUNKER}'),
                     ('keywords', '{KEYWORDS}');
                 COMMIT;"
            ))
            .map_err(|e| self.damaged(&e))?;
        }
        match self.meta("schema")? {
            Some(v) if v == SCHEMA => Ok(()),
            Some(v) => Err(Error::config(format!(
                "knowledge base {} was indexed by another version of ai (schema {v}, this one reads {SCHEMA})",
                self.name
            ))
            .hint(format!("rebuild it with: ai kb sync --full {}", self.name))),
            None => Err(self.damaged_msg("its schema version is missing")),
        }
    }

    /// Whether the keyword tables hold what this version writes ([`KEYWORDS`]).
    pub(crate) fn keywords_current(&self) -> Result<bool> {
        Ok(self.meta("keywords")?.as_deref() == Some(KEYWORDS))
    }

    /// Bring the keyword tables of an older index to [`KEYWORDS`]: the notes get their new
    /// columns, the words table its new shape (empty), and every note is marked to be read
    /// again by the sync that called this (in its transaction), which indexes its keywords anew.
    pub(crate) fn migrate_keywords(&self) -> Result<()> {
        let has_lang: bool = self
            .conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('notes') WHERE name = 'lang'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(|e| self.damaged(&e))?
            > 0;
        let columns = if has_lang {
            ""
        } else {
            "ALTER TABLE notes ADD COLUMN aliases TEXT NOT NULL DEFAULT '';
             ALTER TABLE notes ADD COLUMN lang TEXT;"
        };
        self.conn
            .execute_batch(&format!(
                "BEGIN IMMEDIATE;
                 {columns}
                 DROP TABLE IF EXISTS words;
                 CREATE VIRTUAL TABLE words USING fts5(title, aliases, heading, text, content='',
                     contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
                 UPDATE notes SET mtime = -1, lang = NULL;
                 INSERT INTO meta VALUES ('keywords', '{KEYWORDS}')
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value;
                 COMMIT;"
            ))
            .map_err(|e| self.damaged(&e))
    }

    /// Whether the index has the links table (indexes from before it have not).
    pub(crate) fn has_links(&self) -> Result<bool> {
        has_links(&self.conn).map_err(|e| self.damaged(&e))
    }

    /// Whether the index has the table of documents without text ([`UNREAD`]).
    pub(crate) fn has_unread(&self) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'unread'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.damaged(&e))
    }

    /// The documents that gave no text at the last sync, with why, by path.
    pub(crate) fn unread(&self) -> Result<Vec<(String, String)>> {
        if !self.has_unread()? {
            return Ok(Vec::new());
        }
        let mut st = self
            .conn
            .prepare("SELECT path, reason FROM unread ORDER BY path")
            .map_err(|e| self.damaged(&e))?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.damaged(&e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }

    /// Give an index from before the links table one, and mark every note to be read again by
    /// the sync that called this, which fills it (nothing is re-embedded: the texts are the same).
    pub(crate) fn add_links(&self) -> Result<()> {
        self.conn
            .execute_batch(&format!(
                "BEGIN IMMEDIATE; {LINKS} UPDATE notes SET mtime = -1; COMMIT;"
            ))
            .map_err(|e| self.damaged(&e))
    }

    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.damaged(&e))
    }

    pub(crate) fn set_meta(&self, key: &str, value: Option<&str>) -> Result<()> {
        let done = match value {
            Some(v) => self.conn.execute(
                "INSERT INTO meta VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, v],
            ),
            None => self.conn.execute("DELETE FROM meta WHERE key = ?1", [key]),
        };
        done.map(|_| ()).map_err(|e| self.damaged(&e))
    }

    /// A database error as the user sees it.
    pub(crate) fn damaged(&self, e: &rusqlite::Error) -> Error {
        damaged(&self.name, &self.path, e)
    }

    fn damaged_msg(&self, why: &str) -> Error {
        Error::config(format!(
            "the index of knowledge base {} is damaged: {why} ({})",
            self.name,
            self.path.display()
        ))
        .hint(format!(
            "rebuild it from the notes with: ai kb sync --full {}",
            self.name
        ))
    }

    pub(crate) fn count(&self, sql: &str) -> Result<u64> {
        self.conn
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.damaged(&e))
    }

    /// Size of the index on disk (the database and its write-ahead log).
    pub(crate) fn disk_bytes(&self) -> u64 {
        let mut total = 0;
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            total += std::fs::metadata(&p).map_or(0, |m| m.len());
        }
        total += std::fs::metadata(vectors_file(&self.path)).map_or(0, |m| m.len());
        total
    }
}

/// Whether the index open on `conn` has the links table.
pub(crate) fn has_links(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'links'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Turn a SQLite failure into an error with the fix: busy is busy; anything else that means the
/// file is not a sound index says how to rebuild it.
pub(crate) fn damaged(name: &str, path: &Path, e: &rusqlite::Error) -> Error {
    use rusqlite::ErrorCode;
    if let rusqlite::Error::SqliteFailure(f, _) = e {
        match f.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                return Error::busy(format!("knowledge base {name} is busy (another sync?)"))
                    .hint("try again when it is done");
            }
            ErrorCode::DiskFull => {
                return Error::backend(format!(
                    "the disk is full: cannot write the index of knowledge base {name}"
                ))
                .hint("free some space, then run the sync again: it continues where it stopped");
            }
            ErrorCode::PermissionDenied | ErrorCode::ReadOnly | ErrorCode::CannotOpen => {
                return Error::backend(format!(
                    "cannot open the index of knowledge base {name} ({}): {e}",
                    path.display()
                ))
                .hint("check the permissions of the file and its folder");
            }
            _ => {}
        }
    }
    Error::config(format!(
        "the index of knowledge base {name} is damaged ({}): {e}",
        path.display()
    ))
    .hint(format!(
        "rebuild it from the notes with: ai kb sync --full {name}"
    ))
}

/// Remove an index and its side files (and a rebuild left beside it). Notes are never touched.
pub(crate) fn remove(home: &Home, name: &str) -> Result<bool> {
    remove_at(&beside(home, name))?;
    remove_at(&file(home, name))
}

/// Put the index built [`beside`] `name`'s in its place, as one commit: a search sees the old
/// index or the new one, never none or a part (SQLite's online backup copies it into the file
/// in use, under SQLite's locks). An old file too damaged to take the copy is replaced whole.
pub(crate) fn switch(home: &Home, name: &str, fresh: Index) -> Result<()> {
    let path = file(home, name);
    let from = fresh.path.clone();
    let new_side = vectors_file(&from);
    let side = vectors_file(&path);
    // The old side file goes first: until the new one is in place, searches scan the BLOBs.
    match std::fs::remove_file(&side) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("remove", side, e)),
    }
    let copied = copy_into(&fresh, &path);
    drop(fresh);
    if copied.is_err() {
        remove_at(&path)?;
        for suffix in ["-wal", "-shm"] {
            let mut p = from.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(&p);
        }
        std::fs::rename(&from, &path).map_err(|e| Error::io("replace", path.clone(), e))?;
    }
    match std::fs::rename(&new_side, &side) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("replace", side, e)),
    }
    remove_at(&from)?;
    Ok(())
}

/// Copy `fresh` over the database at `path` with SQLite's online backup, in one step.
fn copy_into(fresh: &Index, path: &Path) -> rusqlite::Result<()> {
    use rusqlite::backup::{Backup, StepResult};
    let mut to = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    to.busy_timeout(Duration::from_secs(30))?;
    to.pragma_update(None, "journal_mode", "WAL")?;
    {
        let backup = Backup::new(&fresh.conn, &mut to)?;
        let mut tries = 0;
        loop {
            match backup.step(-1)? {
                StepResult::Done => break,
                StepResult::Busy | StepResult::Locked if tries < 300 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                StepResult::Busy | StepResult::Locked => {
                    return Err(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                        None,
                    ));
                }
                _ => {}
            }
        }
    }
    // Fold the copy back into the file, so the index is one file at rest.
    let _ = to.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    Ok(())
}

/// Remove the index at `path` and its side files.
pub(crate) fn remove_at(path: &Path) -> Result<bool> {
    let path = path.to_owned();
    let mut found = false;
    let vec = vectors_file(&path);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        match std::fs::remove_file(&p) {
            Ok(()) => found = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io("remove", PathBuf::from(p), e)),
        }
    }
    match std::fs::remove_file(&vec) {
        Ok(()) => found = true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("remove", vec, e)),
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let t = tempfile::tempdir().unwrap();
        let h = Home {
            dir: t.path().to_owned(),
        };
        (t, h)
    }

    fn add(ix: &Index, c: i64, title: &str, text: &str) {
        ix.conn
            .execute(
                "INSERT INTO words(rowid, title, heading, text) VALUES (?1, ?2, '', ?3)",
                params![c, fold(title), fold(text)],
            )
            .unwrap();
        ix.conn
            .execute(
                "INSERT INTO grams(rowid, title, heading, text) VALUES (?1, ?2, '', ?3)",
                params![c, fold(title), fold(text)],
            )
            .unwrap();
    }

    fn hits(ix: &Index, table: &str, q: &str) -> Vec<i64> {
        let mut st = ix
            .conn
            .prepare(&format!(
                "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY rank"
            ))
            .unwrap();
        st.query_map([q], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn german_folding_and_compound_parts() {
        let (_t, h) = home();
        let ix = Index::open(&h, "notes", true).unwrap();
        add(
            &ix,
            1,
            "Über Sicherungen",
            "Die Datenbanksicherung läuft nachts.",
        );
        add(&ix, 2, "Straße", "Die große Straße ist gesperrt.");
        add(&ix, 3, "Other", "Nothing to see here.");
        assert_eq!(hits(&ix, "words", "\"uber\""), vec![1]);
        assert_eq!(hits(&ix, "grams", "\"sicherung\""), vec![1]);
        assert_eq!(hits(&ix, "words", "\"strasse\""), vec![2]);
        assert_eq!(
            hits(&ix, "grams", &format!("\"{}\"", fold("Straße"))),
            vec![2]
        );
        // contentless_delete: a row goes by its rowid alone.
        ix.conn
            .execute("DELETE FROM words WHERE rowid = 1", [])
            .unwrap();
        assert!(hits(&ix, "words", "\"uber\"").is_empty());
    }

    #[test]
    fn missing_index_says_how_to_build_it() {
        let (_t, h) = home();
        let e = Index::open(&h, "notes", false).err().unwrap();
        assert!(e.to_string().contains("no index"), "{e}");
        assert_eq!(e.hint_text(), Some("build it with: ai kb sync notes"));
    }

    #[test]
    fn garbage_file_is_damaged_with_the_fix() {
        let (_t, h) = home();
        std::fs::create_dir_all(dir(&h)).unwrap();
        std::fs::write(file(&h, "notes"), vec![7u8; 4096]).unwrap();
        let e = Index::open(&h, "notes", false).err().unwrap();
        assert!(e.to_string().contains("damaged"), "{e}");
        assert!(e.hint_text().unwrap().contains("ai kb sync --full notes"));
    }
}
