//! The SQLite store: `<home>/kb/NAME.sqlite`, in WAL mode with a busy timeout so searches and
//! grounded turns run while a sync writes.
//!
//! Tables: `meta` (schema version, embedding model and dimensions, chunker version, last sync),
//! `notes` (stable ID, path, title, ordering, hash of the normalized text, size and mtime,
//! aliases, language), `chunks` (the note's passages with heading path, line range, text, hash
//! and vector), and two contentless FTS5 tables: `words` over each chunk's title, aliases,
//! heading and text as Snowball stems of the note's language (unicode61 with diacritics folded:
//! `uber` finds "Über", `backups` finds "backup"), and `grams` over the distinct words of 4 or
//! more characters of its title, heading and text (trigram: `sicherung` finds
//! "Datenbanksicherung"; see [`gram_words`]). Both are fed [`fold`]ed text, so `ß` and `ss` meet.
//!
//! Pages are 16 KiB (SQLite's default 4 KiB left a quarter of the passages' pages empty: a
//! passage with its vector in f32s took about half a page); an index made with 4 KiB pages gets the
//! larger ones when a sync frees a quarter of it and it is compacted ([`Sqlite::compact`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

mod records;

#[cfg(test)]
use super::fold;
use super::{
    Keywords, Kind, Known, Linked, NoteNames, NoteRow, Passage, PassageRow, Store, StoreError,
    StoreResult, Table, dir, remove_at, vectors_file,
};
use crate::config::Home;
use crate::error::{Error, Result};
use crate::kb::{linked, vectors};

/// Bumped when the tables change shape: an older index is rebuilt by `ai kb sync --full`.
/// "2": vectors are stored in 8 bits ([`vectors::to_blob`]); an index of schema [`SCHEMA_F32`]
/// is read as it is and converted by its next sync ([`Sqlite::migrate_vectors`]).
pub(crate) const SCHEMA: &str = "2";
/// The schema before: the same tables, vectors as f32s.
const SCHEMA_F32: &str = "1";
/// Bumped when chunking changes: an index chunked otherwise is rebuilt on its next sync.
pub(crate) const CHUNKER: &str = "1";
/// Bumped when what the keyword tables hold changes: the next sync re-indexes the keywords of
/// an older index from its notes (its passages and vectors are kept); until then it is searched
/// as it was indexed. Absent in indexes from before stemming ("1").
pub(crate) const KEYWORDS: &str = "2";
/// Bumped when what the SQLite trigram table holds changes (`meta.grams`; absent: the whole
/// folded text, "2": its distinct words of 4 or more characters). Like [`KEYWORDS`]: the next
/// sync indexes the keywords again, keeping passages and vectors.
const GRAMS: &str = "2";
/// `meta.compact` when the index is to be rewritten whole (its vectors were converted).
const VACUUM_DUE: &str = "vacuum";
/// The page size of a new index, and of an older one once it is compacted.
const PAGE_SIZE: u32 = 16384;

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
CREATE VIRTUAL TABLE grams USING fts5(title, heading, text, content='', contentless_delete=1,
    tokenize='trigram remove_diacritics 1');
";

/// The links of each note ([`crate::kb::note::Link`]): `key` is the name's last part without
/// `.md`, in lowercase, which is how a link's target is looked up ([`linked`]). Made by
/// [`Store::prepare_sync`] in an index from before it.
const LINKS: &str = "
CREATE TABLE IF NOT EXISTS links (
    note INTEGER NOT NULL REFERENCES notes(n) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    wiki INTEGER NOT NULL,
    name TEXT NOT NULL,
    key TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS links_note ON links(note);
CREATE INDEX IF NOT EXISTS links_key ON links(key);
";

/// Documents (HTML, PDF) that gave no text, by path, with the size and mtime they had then and
/// why: a sync parses one again only when it changed.
const UNREAD: &str = "CREATE TABLE IF NOT EXISTS unread (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, reason TEXT NOT NULL
) WITHOUT ROWID;";

/// What [`Sqlite::compact`] did.
#[derive(Debug, PartialEq)]
pub(crate) struct Compacted {
    /// The file was rewritten without its free pages.
    pub(crate) vacuumed: bool,
    /// Its pages are still smaller than [`PAGE_SIZE`].
    pub(crate) small_pages: bool,
}

/// An open SQLite index.
pub(crate) struct Sqlite {
    pub(crate) conn: Connection,
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    /// Whether this connection has made its view of the words' vocabulary.
    vocab: Cell<bool>,
    /// Whether this connection has made sure the log of vectors written exists.
    log_ready: Cell<bool>,
    /// The bytes [`Sqlite::migrate_vectors`] gave back (before, after), for the sync's notice.
    migrated: Cell<Option<(u64, u64)>>,
}

/// What a SQLite failure means for the user.
fn classify(e: &rusqlite::Error) -> Kind {
    use rusqlite::{Error as E, ErrorCode as C};
    match e {
        E::SqliteFailure(f, _) => match f.code {
            C::DatabaseBusy | C::DatabaseLocked => Kind::Busy,
            C::DiskFull => Kind::DiskFull,
            C::PermissionDenied | C::ReadOnly | C::CannotOpen | C::SystemIoFailure => Kind::Access,
            C::ApiMisuse | C::ParameterOutOfRange => Kind::Bug,
            _ => Kind::Damaged,
        },
        // A table or column gone is a damaged index; any other refused statement is ours.
        E::SqlInputError { msg, .. } if msg.starts_with("no such") => Kind::Damaged,
        E::SqlInputError { .. }
        | E::InvalidParameterCount(..)
        | E::InvalidParameterName(_)
        | E::InvalidColumnIndex(_)
        | E::InvalidColumnName(_)
        | E::ExecuteReturnedResults
        | E::MultipleStatement
        | E::InvalidQuery => Kind::Bug,
        _ => Kind::Damaged,
    }
}

impl Sqlite {
    /// Open the index of `name` at `path`; with `create`, make it (and its folder) when missing.
    pub(crate) fn open(home: &Home, name: &str, path: PathBuf, create: bool) -> Result<Sqlite> {
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
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| {
            StoreError::new(
                classify(&e),
                name,
                &path.display().to_string(),
                e.to_string(),
            )
        })?;
        let index = Sqlite {
            conn,
            name: name.to_owned(),
            path,
            vocab: Cell::new(false),
            log_ready: Cell::new(false),
            migrated: Cell::new(None),
        };
        index.prepare(create)?;
        Ok(index)
    }

    fn prepare(&self, create: bool) -> StoreResult<()> {
        let c = &self.conn;
        c.busy_timeout(Duration::from_secs(30))
            .map_err(|e| self.damaged(&e))?;
        // Takes effect only in a database not written yet (before WAL mode writes its header).
        c.pragma_update(None, "page_size", PAGE_SIZE)
            .map_err(|e| self.damaged(&e))?;
        // WAL lets searches read while a sync writes; NORMAL sync is durable at checkpoints and
        // never corrupts (a crash loses at most the last commits, which the next sync redoes).
        c.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| self.damaged(&e))?;
        c.pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| self.damaged(&e))?;
        c.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| self.damaged(&e))?;
        let has_meta = self
            .count("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'")?
            > 0;
        if !has_meta {
            if !create {
                return Err(self.damaged_msg("it has no tables"));
            }
            c.execute_batch(&format!(
                "BEGIN IMMEDIATE; {TABLES} {LINKS} {UNREAD}
                 INSERT INTO meta VALUES ('schema', '{SCHEMA}'), ('chunker', '{CHUNKER}'),
                     ('keywords', '{KEYWORDS}'), ('grams', '{GRAMS}');
                 COMMIT;"
            ))
            .map_err(|e| self.damaged(&e))?;
        }
        match self.meta("schema")? {
            Some(v) if v == SCHEMA || v == SCHEMA_F32 => Ok(()),
            Some(v) => {
                let newer = v.parse::<u64>().ok() > SCHEMA.parse::<u64>().ok();
                Err(self.error(Kind::Refused { found: v, newer }, ""))
            }
            None => Err(self.damaged_msg("its schema version is missing")),
        }
    }

    /// A failure of this index.
    fn error(&self, kind: Kind, detail: impl Into<String>) -> StoreError {
        StoreError::new(kind, &self.name, &self.path.display().to_string(), detail)
    }

    /// A database error as the user sees it.
    pub(crate) fn damaged(&self, e: &rusqlite::Error) -> StoreError {
        self.error(classify(e), e.to_string())
    }

    fn damaged_msg(&self, why: &str) -> StoreError {
        self.error(Kind::Damaged, why)
    }

    /// A failure writing one of its files.
    pub(crate) fn io_error(&self, what: &str, path: &Path, e: &std::io::Error) -> StoreError {
        let kind = if e.raw_os_error() == Some(libc::ENOSPC) {
            Kind::DiskFull
        } else {
            Kind::Access
        };
        self.error(kind, format!("cannot {what} {}: {e}", path.display()))
    }

    pub(crate) fn count(&self, sql: &str) -> StoreResult<u64> {
        self.conn
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.damaged(&e))
    }

    /// The dimensions of the index's vectors (0 before the first).
    pub(crate) fn dims(&self) -> StoreResult<usize> {
        Ok(self
            .meta("dimensions")?
            .and_then(|d| d.parse().ok())
            .unwrap_or(0))
    }

    /// Convert an index of schema 1 (vectors as f32s) to schema 2 (8 bits: a quarter of the
    /// bytes), in one transaction, keeping every vector (nothing is embedded again), and mark
    /// it to be compacted at the end of the sync. The side file is left as it is: its records
    /// were quantized the same way. Called by the index's only writer, before a sync writes.
    pub(crate) fn migrate_vectors(&self) -> StoreResult<bool> {
        if self.meta("schema")?.as_deref() != Some(SCHEMA_F32) {
            return Ok(false);
        }
        let dims = self.dims()?;
        let f32_len = (dims * 4) as i64;
        // A Ctrl+C before or during it (a minute and more over a large index) rolls it back
        // (`None`): the index stays as it was, searched as it is, and the sync stops at its
        // next check. Looked at once the write lock is had, then every thousand vectors.
        let stop = crate::signal::interrupted_now;
        let result = (|| -> rusqlite::Result<Option<(u64, u64)>> {
            let c = &self.conn;
            c.execute_batch("BEGIN IMMEDIATE")?;
            if stop() {
                return Ok(None);
            }
            let (mut before, mut after) = (0u64, 0u64);
            let mut from = i64::MIN;
            let mut read = c.prepare(
                "SELECT c, vector FROM chunks WHERE c > ?1 AND length(vector) = ?2
                 ORDER BY c LIMIT 1000",
            )?;
            let mut write = c.prepare("UPDATE chunks SET vector = ?2 WHERE c = ?1")?;
            loop {
                let rows: Vec<(i64, Vec<u8>)> = read
                    .query_map(params![from, f32_len], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?;
                let Some(last) = rows.last() else { break };
                from = last.0;
                if stop() {
                    return Ok(None);
                }
                for (chunk, blob) in &rows {
                    let Some(stored) = vectors::compact_blob(blob, dims) else {
                        continue;
                    };
                    before += blob.len() as u64;
                    after += stored.len() as u64;
                    write.execute(params![chunk, stored.as_ref()])?;
                }
            }
            c.execute_batch(&format!(
                "INSERT INTO meta VALUES ('schema', '{SCHEMA}'), ('compact', '{VACUUM_DUE}')
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value;
                 COMMIT;"
            ))?;
            Ok(Some((before, after)))
        })();
        match result {
            Ok(Some(sizes)) => {
                self.migrated.set(Some(sizes));
                Ok(true)
            }
            Ok(None) => {
                self.rollback();
                Ok(false)
            }
            Err(e) => {
                self.rollback();
                Err(self.damaged(&e))
            }
        }
    }

    /// Note that passage `c`'s vector was written, for the side file (`vectors::update`).
    fn log_vector(&self, c: i64) -> StoreResult<()> {
        if !self.log_ready.get() {
            self.conn
                .execute_batch(vectors::LOG)
                .map_err(|e| self.damaged(&e))?;
            self.log_ready.set(true);
        }
        vectors::log(self, c)
    }

    /// Give back the pages a sync freed (SQLite keeps them in the file for reuse) when they
    /// are a quarter of the file or more (many notes deleted), or, with `pending`, after the
    /// keyword tables were indexed again (the old ones' pages are free, the new ones spread
    /// over them). An index with pages smaller than [`PAGE_SIZE`] gets them now, unless
    /// another connection has it open (the page size changes only outside WAL mode, which no
    /// other connection may be using): it is then compacted as it is, and with `pending` the
    /// next call converts it when it has the index alone. Called at the end of a sync, by the
    /// index's only writer.
    pub(crate) fn compact(&self, pending: bool) -> StoreResult<Compacted> {
        let pages = self.count("PRAGMA page_count")?;
        let free = self.count("PRAGMA freelist_count")?;
        let small = self.count("PRAGMA page_size")? < u64::from(PAGE_SIZE);
        let worth = free >= 64 && (free * 4 >= pages || pending);
        let mut done = Compacted {
            vacuumed: false,
            small_pages: small,
        };
        if !(worth || pending && small) {
            return Ok(done);
        }
        let c = &self.conn;
        // Leaving WAL mode waits for no one: with a reader there, it fails at once.
        let mut left_wal = false;
        if small {
            let _ = c.busy_timeout(Duration::ZERO);
            left_wal = c
                .query_row("PRAGMA journal_mode = DELETE", [], |r| {
                    r.get::<_, String>(0)
                })
                .is_ok_and(|m| m.eq_ignore_ascii_case("delete"));
            c.busy_timeout(Duration::from_secs(30))
                .map_err(|e| self.damaged(&e))?;
        }
        if !worth && !left_wal {
            return Ok(done);
        }
        let result = (|| {
            if left_wal {
                c.pragma_update(None, "page_size", PAGE_SIZE)?;
            }
            c.execute_batch("VACUUM")
        })();
        if left_wal {
            c.pragma_update(None, "journal_mode", "WAL")
                .map_err(|e| self.damaged(&e))?;
        }
        result.map_err(|e| self.damaged(&e))?;
        done.vacuumed = true;
        done.small_pages = self.count("PRAGMA page_size")? < u64::from(PAGE_SIZE);
        Ok(done)
    }

    fn strings(&self, sql: &str, n: i64) -> StoreResult<Vec<(i64, String, String)>> {
        let mut st = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| self.damaged(&e))?;
        st.query_map([n], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.damaged(&e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }
}

impl Store for Sqlite {
    fn place(&self) -> String {
        self.path.display().to_string()
    }

    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        self.conn
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")
            .and_then(|mut st| st.query_row([key], |r| r.get(0)).optional())
            .map_err(|e| self.damaged(&e))
    }

    fn set_meta(&self, key: &str, value: Option<&str>) -> StoreResult<()> {
        let done = match value {
            Some(v) => self.conn.execute(
                "INSERT INTO meta VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, v],
            ),
            None => self.conn.execute("DELETE FROM meta WHERE key = ?1", [key]),
        };
        done.map(|_| ()).map_err(|e| self.damaged(&e))
    }

    fn keywords_current(&self) -> StoreResult<bool> {
        Ok(self.stemmed()? && self.meta("grams")?.as_deref() == Some(GRAMS))
    }

    fn migrate_keywords(&self) -> StoreResult<()> {
        let has_lang =
            self.count("SELECT count(*) FROM pragma_table_info('notes') WHERE name = 'lang'")? > 0;
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
                 DROP TABLE IF EXISTS grams;
                 CREATE VIRTUAL TABLE grams USING fts5(title, heading, text, content='',
                     contentless_delete=1, tokenize='trigram remove_diacritics 1');
                 UPDATE notes SET mtime = -1, lang = NULL;
                 INSERT INTO meta VALUES ('keywords', '{KEYWORDS}'), ('grams', '{GRAMS}'),
                     ('compact', '1'), ('reindexing', '1')
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value;
                 COMMIT;"
            ))
            .map_err(|e| self.damaged(&e))
    }

    fn notes(&self) -> StoreResult<u64> {
        self.count("SELECT count(*) FROM notes")
    }

    fn passages(&self) -> StoreResult<u64> {
        self.count("SELECT count(*) FROM chunks")
    }

    fn embedded(&self) -> StoreResult<u64> {
        self.count("SELECT count(*) FROM chunks WHERE vector IS NOT NULL")
    }

    fn languages(&self) -> StoreResult<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT lang FROM notes WHERE lang IS NOT NULL ORDER BY lang")
            .map_err(|e| self.damaged(&e))?;
        st.query_map([], |r| r.get(0))
            .map_err(|e| self.damaged(&e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }

    /// The database and its write-ahead log, and the side file of vectors.
    fn disk_bytes(&self) -> u64 {
        let mut total = 0;
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            total += std::fs::metadata(&p).map_or(0, |m| m.len());
        }
        total += std::fs::metadata(vectors_file(&self.path)).map_or(0, |m| m.len());
        total
    }

    fn begin(&self) -> StoreResult<()> {
        // IMMEDIATE: take the write lock now (waiting out readers' checkpoints via busy_timeout).
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.damaged(&e))
    }

    fn commit(&self) -> StoreResult<()> {
        self.conn
            .execute_batch("COMMIT")
            .map_err(|e| self.damaged(&e))
    }

    fn rollback(&self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn known(&self) -> StoreResult<HashMap<String, Known>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT n, id, path, hash, title, ordering, size, mtime, aliases, lang FROM notes",
            )
            .map_err(|e| self.damaged(&e))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(1)?,
                    Known {
                        n: r.get(0)?,
                        path: r.get(2)?,
                        hash: r.get(3)?,
                        title: r.get(4)?,
                        ordering: r.get(5)?,
                        size: r.get(6)?,
                        mtime: r.get(7)?,
                        aliases: r.get(8)?,
                        lang: r.get(9)?,
                    },
                ))
            })
            .map_err(|e| self.damaged(&e))?;
        let mut out = HashMap::new();
        for row in rows {
            let (id, k) = row.map_err(|e| self.damaged(&e))?;
            out.insert(id, k);
        }
        Ok(out)
    }

    fn stats_by_path(&self) -> StoreResult<HashMap<String, (i64, i64)>> {
        let mut known = HashMap::new();
        let mut st = self
            .conn
            .prepare("SELECT path, size, mtime FROM notes")
            .map_err(|e| self.damaged(&e))?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .map_err(|e| self.damaged(&e))?;
        for row in rows {
            let (path, stat) = row.map_err(|e| self.damaged(&e))?;
            known.insert(path, stat);
        }
        Ok(known)
    }

    fn insert_note(&self, note: &NoteRow<'_>) -> StoreResult<i64> {
        self.conn
            .prepare_cached(
                "INSERT INTO notes (id, path, title, ordering, hash, size, mtime, aliases, lang) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    note.id,
                    note.path,
                    note.title,
                    note.ordering,
                    note.hash,
                    note.size,
                    note.mtime,
                    note.aliases,
                    note.lang
                ])
            })
            .map_err(|e| self.damaged(&e))?;
        Ok(self.conn.last_insert_rowid())
    }

    fn update_note(&self, n: i64, note: &NoteRow<'_>) -> StoreResult<()> {
        self.conn
            .prepare_cached(
                "UPDATE notes SET path = ?2, title = ?3, ordering = ?4, hash = ?5, size = ?6, mtime = ?7, aliases = ?8, lang = ?9 WHERE n = ?1",
            )
            .and_then(|mut st| {
                st.execute(params![
                    n,
                    note.path,
                    note.title,
                    note.ordering,
                    note.hash,
                    note.size,
                    note.mtime,
                    note.aliases,
                    note.lang
                ])
            })
            .map(|_| ())
            .map_err(|e| self.damaged(&e))
    }

    fn delete_note(&self, n: i64) -> StoreResult<()> {
        if self.delete_passages(n)? {
            self.vectors_changed()?;
        }
        self.conn
            .execute("DELETE FROM notes WHERE n = ?1", [n])
            .map(|_| ())
            .map_err(|e| self.damaged(&e))
    }

    fn passages_of(&self, n: i64) -> StoreResult<Vec<(i64, String, String)>> {
        self.strings("SELECT c, heading, text FROM chunks WHERE note = ?1", n)
    }

    fn vectors_of(&self, n: i64) -> StoreResult<HashMap<String, Vec<f32>>> {
        let mut kept = HashMap::new();
        let dims = self.dims()?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT hash, vector FROM chunks WHERE note = ?1 AND vector IS NOT NULL",
            )
            .map_err(|e| self.damaged(&e))?;
        let rows = st
            .query_map([n], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(|e| self.damaged(&e))?;
        for row in rows {
            let (h, v) = row.map_err(|e| self.damaged(&e))?;
            if let Some(v) = vectors::from_blob(&v, dims) {
                kept.insert(h, v);
            }
        }
        Ok(kept)
    }

    fn delete_passages(&self, n: i64) -> StoreResult<bool> {
        let chunks: Vec<(i64, bool)> = {
            let mut st = self
                .conn
                .prepare_cached("SELECT c, vector IS NOT NULL FROM chunks WHERE note = ?1")
                .map_err(|e| self.damaged(&e))?;
            st.query_map([n], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(|e| self.damaged(&e))?
                .collect::<rusqlite::Result<_>>()
                .map_err(|e| self.damaged(&e))?
        };
        let mut had_vectors = false;
        for (c, had_vector) in chunks {
            self.unindex(c)?;
            had_vectors |= had_vector;
        }
        self.conn
            .execute("DELETE FROM chunks WHERE note = ?1", [n])
            .map_err(|e| self.damaged(&e))?;
        Ok(had_vectors)
    }

    fn insert_passage(&self, n: i64, p: &PassageRow<'_>) -> StoreResult<i64> {
        let vector = p.vector.map(vectors::to_blob);
        self.conn
            .prepare_cached(
                "INSERT INTO chunks (note, seq, heading, start_line, end_line, text, hash, vector)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    n,
                    p.seq,
                    p.heading,
                    p.start_line,
                    p.end_line,
                    p.text,
                    p.hash,
                    vector
                ])
            })
            .map_err(|e| self.damaged(&e))?;
        let c = self.conn.last_insert_rowid();
        if p.vector.is_some() {
            self.log_vector(c)?;
        }
        Ok(c)
    }

    fn index_keywords(&self, c: i64, k: &Keywords) -> StoreResult<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO words(rowid, title, aliases, heading, text) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| st.execute(params![c, k.title, k.aliases, k.heading, k.text]))
            .map_err(|e| self.damaged(&e))?;
        self.conn
            .prepare_cached(
                "INSERT INTO grams(rowid, title, heading, text) VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    c,
                    gram_words(&k.gram_title),
                    gram_words(&k.gram_heading),
                    gram_words(&k.gram_text)
                ])
            })
            .map_err(|e| self.damaged(&e))?;
        Ok(())
    }

    fn unindex(&self, c: i64) -> StoreResult<()> {
        for sql in [
            "DELETE FROM words WHERE rowid = ?1",
            "DELETE FROM grams WHERE rowid = ?1",
        ] {
            self.conn
                .prepare_cached(sql)
                .and_then(|mut st| st.execute([c]))
                .map_err(|e| self.damaged(&e))?;
        }
        Ok(())
    }

    fn vectors_changed(&self) -> StoreResult<()> {
        vectors::bump(self)
    }

    fn unembedded(&self) -> StoreResult<Vec<(i64, usize)>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT c, length(CAST(heading AS BLOB)) + length(CAST(text AS BLOB)) + 2
                 FROM chunks WHERE vector IS NULL ORDER BY c",
            )
            .map_err(|e| self.damaged(&e))?;
        st.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as usize)))
            .map_err(|e| self.damaged(&e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }

    fn embed_input(&self, c: i64) -> StoreResult<(String, String, String)> {
        self.conn
            .prepare_cached(
                "SELECT c.heading, c.text, n.title FROM chunks c JOIN notes n ON n.n = c.note
                 WHERE c.c = ?1",
            )
            .and_then(|mut st| st.query_row([c], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))))
            .map_err(|e| self.damaged(&e))
    }

    fn set_vector(&self, c: i64, v: &[f32]) -> StoreResult<()> {
        self.conn
            .prepare_cached("UPDATE chunks SET vector = ?2 WHERE c = ?1")
            .and_then(|mut st| st.execute(params![c, vectors::to_blob(v)]))
            .map_err(|e| self.damaged(&e))?;
        self.log_vector(c)
    }

    fn finish_sync(&self, dims: usize) -> StoreResult<Option<String>> {
        // Whatever changed the vectors (this sync, or one that died before it got here).
        let mut notice = None;
        if dims > 0 && vectors::update(self, dims)? == (vectors::Update::Rewritten { old: true }) {
            notice = Some(format!(
                "ai: the vector file of knowledge base {} was of an older format; written anew from its embeddings (nothing re-embedded)",
                self.name
            ));
        }
        let migrated = self.migrated.take();
        if let Some((before, after)) = migrated {
            let earlier = notice.take().map(|n| n + "\n").unwrap_or_default();
            notice = Some(format!(
                "{earlier}ai: the vectors of knowledge base {} are stored in 8 bits now: {:.1} MB instead of {:.1} MB (nothing re-embedded)",
                self.name,
                after as f64 / 1e6,
                before as f64 / 1e6
            ));
        }
        // Fold the write-ahead log back so the index is one file at rest.
        let _ = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        // Compacting is a saving, not a duty: the index is whole either way. `meta.compact`:
        // the keyword tables were emptied to be indexed again (by this sync or one that died),
        // so the pages they had are free and the new ones spread over them; or the index was
        // compacted while another process had it open, and its pages are still small.
        // Vectors converted to 8 bits leave their rows' pages three-quarters empty, not free:
        // only a VACUUM gives the room back.
        // (`meta.compact` = "vacuum" until it is done: a sync that dies first leaves it to the next.)
        if (migrated.is_some() || self.meta("compact")?.as_deref() == Some(VACUUM_DUE))
            && self.conn.execute_batch("VACUUM").is_ok()
        {
            self.set_meta("compact", Some("1"))?;
        }
        let pending = self.meta("compact")?.is_some();
        if let Ok(done) = self.compact(pending) {
            let still = done.small_pages && (pending || done.vacuumed);
            if still != pending {
                self.set_meta("compact", still.then_some("1"))?;
            }
        }
        Ok(notice)
    }

    fn doc_freq(&self, word: &str) -> StoreResult<u64> {
        if !self.vocab.get() {
            self.conn
                .execute_batch(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_terms USING fts5vocab(main, words, 'row')",
                )
                .map_err(|e| self.damaged(&e))?;
            self.vocab.set(true);
        }
        let n: i64 = self
            .conn
            .prepare_cached("SELECT doc FROM temp.words_terms WHERE term = ?1")
            .and_then(|mut st| st.query_row([word], |r| r.get(0)).optional())
            .map_err(|e| self.damaged(&e))?
            .unwrap_or(0);
        Ok(n.max(0) as u64)
    }

    fn matches_fewer(&self, table: Table, query: &str, cap: usize) -> StoreResult<bool> {
        let table = table_name(table);
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?1 LIMIT ?2)"
            ))
            .map_err(|e| self.damaged(&e))?;
        let n: i64 = st
            .query_row(params![query, cap as i64], |r| r.get(0))
            .map_err(|e| self.damaged(&e))?;
        Ok((n as usize) < cap)
    }

    fn keyword(
        &self,
        table: Table,
        weights: &[f64],
        query: &str,
        limit: usize,
    ) -> StoreResult<Vec<(i64, f64)>> {
        let table = table_name(table);
        let weights: Vec<String> = weights.iter().map(|w| format!("{w:?}")).collect();
        let weights = weights.join(", ");
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT rowid, -bm25({table}, {weights}) AS s FROM {table} WHERE {table} MATCH ?1 ORDER BY s DESC LIMIT ?2"
            ))
            .map_err(|e| self.damaged(&e))?;
        let rows = st
            .query_map(params![query, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.damaged(&e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }

    fn nearest(&self, query: &[f32], top: usize) -> StoreResult<Vec<(i64, f32)>> {
        vectors::nearest(self, query, top)
    }

    fn passage(&self, c: i64) -> StoreResult<Option<Passage>> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT n.id, n.title, n.ordering, n.path, c.seq, c.heading, c.start_line, c.end_line, c.text, n.n
                 FROM chunks c JOIN notes n ON n.n = c.note WHERE c.c = ?1",
            )
            .map_err(|e| self.damaged(&e))?;
        st.query_row([c], |r| {
            Ok(Passage {
                id: r.get(0)?,
                title: r.get(1)?,
                ordering: r.get(2)?,
                path: r.get(3)?,
                seq: r.get(4)?,
                heading: r.get(5)?,
                lines: [r.get(6)?, r.get(7)?],
                text: r.get(8)?,
                n: r.get(9)?,
            })
        })
        .optional()
        .map_err(|e| self.damaged(&e))
    }

    fn find_note(&self, name: &str) -> StoreResult<Option<Linked>> {
        linked::find(&self.conn, name).map_err(|e| self.damaged(&e))
    }

    fn note_names(&self, cs: &[i64]) -> StoreResult<Vec<NoteNames>> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT n.id, n.title, n.path, n.aliases FROM chunks c JOIN notes n ON n.n = c.note
                 WHERE c.c = ?1",
            )
            .map_err(|e| self.damaged(&e))?;
        let mut out = Vec::with_capacity(cs.len());
        for c in cs {
            let row = st
                .query_row([c], |r| {
                    Ok(NoteNames {
                        id: r.get(0)?,
                        title: r.get(1)?,
                        path: r.get(2)?,
                        aliases: r.get(3)?,
                    })
                })
                .optional()
                .map_err(|e| self.damaged(&e))?;
            out.extend(row);
        }
        Ok(out)
    }

    fn passages_of_note(&self, id: &str) -> StoreResult<Vec<i64>> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT c.c FROM chunks c JOIN notes n ON n.n = c.note WHERE n.id = ?1 ORDER BY c.seq",
            )
            .map_err(|e| self.damaged(&e))?;
        let rows = st
            .query_map([id], |r| r.get(0))
            .map_err(|e| self.damaged(&e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }

    fn linked_from(&self, note: &Linked) -> StoreResult<Vec<Linked>> {
        linked::linked_from(&self.conn, note).map_err(|e| self.damaged(&e))
    }

    fn links(&self, id: &str) -> StoreResult<Vec<linked::Link>> {
        linked::links(&self.conn, id).map_err(|e| self.damaged(&e))
    }

    fn prepare_sync(&self) -> StoreResult<()> {
        self.migrate_vectors()?;
        let has_links = linked::has_links(&self.conn).map_err(|e| self.damaged(&e))?;
        let mark = if has_links {
            ""
        } else {
            "UPDATE notes SET mtime = -1;"
        };
        self.conn
            .execute_batch(&format!(
                "BEGIN IMMEDIATE; {LINKS} {UNREAD} {} {mark} COMMIT;",
                vectors::LOG
            ))
            .map_err(|e| self.damaged(&e))
    }

    fn set_links(&self, n: i64, links: &[linked::Written]) -> StoreResult<()> {
        self.conn
            .prepare_cached("DELETE FROM links WHERE note = ?1")
            .and_then(|mut st| st.execute([n]))
            .map_err(|e| self.damaged(&e))?;
        let mut st = self
            .conn
            .prepare_cached(
                "INSERT INTO links (note, line, wiki, name, key) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(|e| self.damaged(&e))?;
        for l in links {
            st.execute(params![n, l.line, l.wiki, l.name, linked::key(&l.name)])
                .map_err(|e| self.damaged(&e))?;
        }
        Ok(())
    }

    fn unread(&self) -> StoreResult<Vec<(String, i64, i64, String)>> {
        let has = self
            .count("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'unread'")?
            > 0;
        if !has {
            return Ok(Vec::new());
        }
        let mut st = self
            .conn
            .prepare("SELECT path, size, mtime, reason FROM unread ORDER BY path")
            .map_err(|e| self.damaged(&e))?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(|e| self.damaged(&e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }

    fn set_unread(&self, path: &str, stat: (i64, i64), why: Option<&str>) -> StoreResult<()> {
        let done = match why {
            Some(why) => self.conn.execute(
                "INSERT OR REPLACE INTO unread (path, size, mtime, reason) VALUES (?1, ?2, ?3, ?4)",
                params![path, stat.0, stat.1, why],
            ),
            None => self
                .conn
                .execute("DELETE FROM unread WHERE path = ?1", [path]),
        };
        done.map(|_| ()).map_err(|e| self.damaged(&e))
    }
}

/// What the trigram table holds of folded text: its distinct words of 4 or more characters, in
/// the order they first come, one space between. The table answers only whether a query term
/// of 4 or more letters and digits is inside a word (the search looks for nothing shorter
/// there), and such a term is inside one of these words exactly when it is inside the text;
/// words are what whitespace separates, without the ASCII punctuation around them (a term has
/// none). Each word once: a passage's repeats and short words took most of the table (4.6× the
/// text it covered), for a tie-breaker that weighs 0.01.
pub(crate) fn gram_words(folded: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::with_capacity(folded.len() / 2);
    for w in folded.split_whitespace() {
        let w = w.trim_matches(|c: char| c.is_ascii_punctuation());
        if w.chars().count() >= 4 && seen.insert(w) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out
}

fn table_name(table: Table) -> &'static str {
    match table {
        Table::Words => "words",
        Table::Grams => "grams",
    }
}

/// Put the index built beside `name`'s in its place, as one commit: a search sees the old
/// index or the new one, never none or a part (SQLite's online backup copies it into the file
/// in use, under SQLite's locks). An old file too damaged to take the copy is replaced whole.
pub(crate) fn switch(home: &Home, name: &str, fresh: Sqlite) -> Result<()> {
    let path = super::file(home, name);
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
fn copy_into(fresh: &Sqlite, path: &Path) -> rusqlite::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::super::{Index, file};
    use super::*;

    fn home() -> (tempfile::TempDir, Home) {
        let t = tempfile::tempdir().unwrap();
        let h = Home {
            dir: t.path().to_owned(),
        };
        (t, h)
    }

    fn add(ix: &Sqlite, c: i64, title: &str, text: &str) {
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

    fn hits(ix: &Sqlite, table: &str, q: &str) -> Vec<i64> {
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
        let ix = Sqlite::open(&h, "notes", file(&h, "notes"), true).unwrap();
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
    fn the_trigram_table_holds_each_long_word_once() {
        assert_eq!(
            gram_words("the tape, the tape (again) and a datenbank-sicherung; e-mail. ok"),
            "tape again datenbank-sicherung e-mail"
        );
        assert_eq!(gram_words("über ünter"), "über ünter");
        assert_eq!(gram_words("a an the ..."), "");
    }

    #[test]
    fn parts_of_words_are_found_in_the_distinct_words() {
        let (_t, h) = home();
        let ix = Sqlite::open(&h, "notes", file(&h, "notes"), true).unwrap();
        let k = crate::kb::sync::keywords(
            "Nachtlauf",
            &["Datensicherung"],
            crate::kb::lang::Lang::De,
            "Sicherung > Ablauf",
            "Die Datenbanksicherung läuft nachts. Die Datenbanksicherung dauert; die Straße ist leer.",
        );
        ix.index_keywords(7, &k).unwrap();
        for part in ["sicherung", "tenbanksich", "strasse", "achtlau", "lauft"] {
            assert_eq!(
                hits(&ix, "grams", &format!("\"{part}\"")),
                vec![7],
                "{part}"
            );
        }
        // What only the whole text had: words across a gap, short words.
        assert!(hits(&ix, "grams", "\"dauert die\"").is_empty());
        assert!(hits(&ix, "grams", "\"die\"").is_empty());
    }

    #[test]
    fn a_new_index_has_large_pages() {
        let (_t, h) = home();
        let ix = Sqlite::open(&h, "notes", file(&h, "notes"), true).unwrap();
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), u64::from(PAGE_SIZE));
        assert_eq!(ix.meta("grams").unwrap().as_deref(), Some(GRAMS));
        assert!(ix.keywords_current().unwrap());
    }

    /// An index with one note, in a file with small (4 KiB) pages as versions before wrote it.
    fn small_paged_index(h: &Home) -> (PathBuf, Sqlite) {
        let path = file(h, "notes");
        std::fs::create_dir_all(dir(h)).unwrap();
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;")
                .unwrap();
        }
        let ix = Sqlite::open(h, "notes", path.clone(), true).unwrap();
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), 4096);
        ix.conn
            .execute("INSERT INTO notes (n, id, path, title, hash, size, mtime) VALUES (1, 'a', 'a.md', 'A', 'h', 1, 1)", [])
            .unwrap();
        (path, ix)
    }

    #[test]
    fn compacting_gives_back_freed_pages_and_enlarges_small_ones() {
        let (_t, h) = home();
        let (_path, ix) = small_paged_index(&h);
        let text = "lorem ipsum dolor sit amet ".repeat(200);
        for c in 1..=200 {
            ix.conn
                .execute(
                    "INSERT INTO chunks (c, note, seq, heading, start_line, end_line, text, hash) VALUES (?1, 1, ?1, '', 1, 1, ?2, 'h')",
                    params![c, text],
                )
                .unwrap();
        }
        // Little freed: left as it is.
        ix.conn
            .execute("DELETE FROM chunks WHERE c <= 10", [])
            .unwrap();
        assert!(!ix.compact(false).unwrap().vacuumed);
        let pages = ix.count("PRAGMA page_count").unwrap();
        ix.conn
            .execute("DELETE FROM chunks WHERE c <= 150", [])
            .unwrap();
        assert_eq!(
            ix.compact(false).unwrap(),
            Compacted {
                vacuumed: true,
                small_pages: false
            }
        );
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), u64::from(PAGE_SIZE));
        assert_eq!(ix.count("PRAGMA freelist_count").unwrap(), 0);
        assert!(ix.count("PRAGMA page_count").unwrap() * 4 < pages);
        assert_eq!(ix.passages().unwrap(), 50);
        let mode: String = ix
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        // Another connection open: compacted in WAL mode, its pages as they are.
        drop(ix);
        let path2 = file(&h, "other");
        {
            let c = Connection::open(&path2).unwrap();
            c.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;")
                .unwrap();
        }
        let ix = Sqlite::open(&h, "other", path2.clone(), true).unwrap();
        ix.conn
            .execute("INSERT INTO notes (n, id, path, title, hash, size, mtime) VALUES (1, 'a', 'a.md', 'A', 'h', 1, 1)", [])
            .unwrap();
        for c in 1..=400 {
            ix.conn
                .execute(
                    "INSERT INTO chunks (c, note, seq, heading, start_line, end_line, text, hash) VALUES (?1, 1, ?1, '', 1, 1, ?2, 'h')",
                    params![c, text],
                )
                .unwrap();
        }
        let reader = Sqlite::open(&h, "other", path2, false).unwrap();
        assert_eq!(reader.passages().unwrap(), 400);
        ix.conn
            .execute("DELETE FROM chunks WHERE c <= 80", [])
            .unwrap();
        // Under a quarter free, but the keywords were indexed again.
        assert!(!ix.compact(false).unwrap().vacuumed);
        assert_eq!(
            ix.compact(true).unwrap(),
            Compacted {
                vacuumed: true,
                small_pages: true
            }
        );
        assert_eq!(ix.count("PRAGMA freelist_count").unwrap(), 0);
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), 4096);
        assert_eq!(reader.passages().unwrap(), 320);
        // The reader still there: nothing to give back, no conversion, no VACUUM.
        assert!(!ix.compact(true).unwrap().vacuumed);
        // Once it is gone, the conversion still pending is made.
        drop(reader);
        assert_eq!(
            ix.compact(true).unwrap(),
            Compacted {
                vacuumed: true,
                small_pages: false
            }
        );
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), u64::from(PAGE_SIZE));
        assert_eq!(ix.passages().unwrap(), 320);
        // Nothing pending, nothing free: nothing done.
        assert!(!ix.compact(false).unwrap().vacuumed);
    }

    #[test]
    fn the_sync_after_a_keyword_migration_compacts_even_on_another_connection() {
        let (_t, h) = home();
        let (path, ix) = small_paged_index(&h);
        let text = "lorem ipsum dolor sit amet consectetur ".repeat(100);
        for c in 1..=300 {
            // Passages that stay, and keywords that are indexed again.
            ix.conn
                .execute(
                    "INSERT INTO chunks (c, note, seq, heading, start_line, end_line, text, hash) VALUES (?1, 1, ?1, '', 1, 1, ?2, 'h')",
                    params![c, text],
                )
                .unwrap();
            add(&ix, c, "Title", &format!("{} {c}", &text[..1500]));
        }
        let pages = ix.count("PRAGMA page_count").unwrap();
        // The sync checks the keywords on one connection...
        ix.migrate_keywords().unwrap();
        drop(ix);
        // ... and syncs on another, which indexes less than there was.
        let ix = Sqlite::open(&h, "notes", path, false).unwrap();
        for c in 1..=200 {
            add(&ix, c, "Title", &format!("{} {c}", &text[..1500]));
        }
        let free = ix.count("PRAGMA freelist_count").unwrap();
        assert!(free >= 64 && free * 4 < ix.count("PRAGMA page_count").unwrap());
        ix.finish_sync(0).unwrap();
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), u64::from(PAGE_SIZE));
        assert_eq!(ix.count("PRAGMA freelist_count").unwrap(), 0);
        assert!(ix.count("PRAGMA page_count").unwrap() * 4 < pages);
        assert_eq!(ix.meta("compact").unwrap(), None);
        assert_eq!(hits(&ix, "words", "\"lorem\"").len(), 200);
    }

    #[test]
    fn a_conversion_a_reader_prevented_is_made_by_a_later_sync() {
        let (_t, h) = home();
        let path = file(&h, "notes");
        std::fs::create_dir_all(dir(&h)).unwrap();
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;")
                .unwrap();
        }
        let ix = Sqlite::open(&h, "notes", path.clone(), true).unwrap();
        let text = "lorem ipsum dolor sit amet consectetur ".repeat(40);
        for c in 1..=300 {
            add(&ix, c, "Title", &format!("{text} {c}"));
        }
        ix.migrate_keywords().unwrap();
        for c in 1..=300 {
            add(&ix, c, "Title", &format!("{text} {c}"));
        }
        // `ai serve` has the index open while the sync ends.
        let reader = Sqlite::open(&h, "notes", path.clone(), false).unwrap();
        ix.finish_sync(0).unwrap();
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), 4096);
        assert_eq!(ix.meta("compact").unwrap().as_deref(), Some("1"));
        assert_eq!(hits(&reader, "words", "\"lorem\"").len(), 300);
        drop(reader);
        // The next sync has it alone.
        ix.finish_sync(0).unwrap();
        assert_eq!(ix.count("PRAGMA page_size").unwrap(), u64::from(PAGE_SIZE));
        assert_eq!(ix.meta("compact").unwrap(), None);
        assert_eq!(hits(&ix, "words", "\"lorem\"").len(), 300);
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

    #[test]
    fn errors_say_what_kind_of_failure_they_are() {
        let (_t, h) = home();
        let ix = Sqlite::open(&h, "notes", file(&h, "notes"), true).unwrap();
        // A statement of ours the database refuses is a bug, not damage.
        let bug = ix.conn.prepare("SELEC nothing").err().unwrap();
        assert_eq!(classify(&bug), Kind::Bug);
        let e = Error::from(ix.damaged(&bug));
        assert!(!e.to_string().contains("damaged"), "{e}");
        assert!(e.hint_text().unwrap().contains("bug"), "{e}");
        // A table gone is damage.
        ix.conn.execute_batch("DROP TABLE notes").unwrap();
        let gone = ix.notes().err().unwrap();
        assert_eq!(gone.kind, Kind::Damaged);
        // Another writer holding the index past the wait is busy.
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        assert_eq!(classify(&busy), Kind::Busy);
        assert_eq!(Error::from(ix.damaged(&busy)).exit_code(), 75);
    }

    #[test]
    fn a_newer_schema_is_refused_with_a_hint() {
        let (_t, h) = home();
        let ix = Sqlite::open(&h, "notes", file(&h, "notes"), true).unwrap();
        ix.set_meta("schema", Some("9")).unwrap();
        drop(ix);
        let e = Index::open(&h, "notes", false).err().unwrap();
        assert!(e.to_string().contains("schema 9"), "{e}");
        assert!(e.hint_text().unwrap().contains("newer ai"), "{e:?}");
        assert_eq!(e.exit_code(), 3);
    }
}
