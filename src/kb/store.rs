//! The boundary of a knowledge base's index: everything the sync, the search, `kb show`, `kb
//! stats` and the tools ask of it, behind [`Store`], with its own error type ([`StoreError`])
//! that tells damage from a busy index, an I/O failure, an unreachable server, a schema this
//! `ai` does not read, and a bug. SQL lives only in the implementations:
//!
//! - `sqlite`: `<home>/kb/NAME.sqlite` (the default, needs nothing), with its quantized vector
//!   side file (`kb/vectors.rs`).
//!
//! A second store is one more implementation of [`Store`] and one more arm of [`Backing`].

#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod sqlite;

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use crate::config::Home;
use crate::config::kb::BaseConfig;
use crate::error::{Error, Result};

pub(crate) use sqlite::{CHUNKER, KEYWORDS, SCHEMA};

/// Where the indexes live.
pub(crate) fn dir(home: &Home) -> PathBuf {
    home.dir.join("kb")
}

/// The index file of knowledge base `name`.
pub(crate) fn file(home: &Home, name: &str) -> PathBuf {
    dir(home).join(format!("{name}.sqlite"))
}

/// The side file beside an index file, where its vectors are kept (`kb/vectors.rs`).
pub(crate) fn vectors_file(index_path: &Path) -> PathBuf {
    index_path.with_extension("vectors")
}

/// Where `kb sync --full` builds a new index beside the one in use, which searches keep reading
/// until [`switch`] puts the new one in its place. (A knowledge base's name has no dot, so this
/// is no other base's file.)
pub(crate) fn beside(home: &Home, name: &str) -> PathBuf {
    dir(home).join(format!("{name}.rebuild.sqlite"))
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

/// What went wrong in a store, by what the user can do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The index is not sound (garbage, missing tables, torn pages): rebuild it.
    Damaged,
    /// Another writer holds it longer than we wait.
    Busy,
    /// No space left to write it.
    DiskFull,
    /// It cannot be opened or written (permissions, a read-only file system, I/O).
    Access,
    /// Its server cannot be reached (down, refused, timed out, lost mid-query).
    #[allow(dead_code)] // the stores with a server
    Unreachable,
    /// It was written by another version of `ai` (`found`), which this one does not read;
    /// `newer` when that version is newer than this one.
    Refused { found: String, newer: bool },
    /// The store refused what we asked in a way only a bug of ours explains.
    Bug,
    /// A Ctrl+C (or a termination signal) cancelled the statement at the server.
    #[allow(dead_code)] // the stores with a server
    Interrupted,
}

/// A failure of the store of knowledge base `base`, which lives at `place` (a file, or a
/// server with its password left out).
#[derive(Debug, Clone)]
pub(crate) struct StoreError {
    pub(crate) kind: Kind,
    pub(crate) base: String,
    pub(crate) place: String,
    pub(crate) detail: String,
}

pub(crate) type StoreResult<T> = std::result::Result<T, StoreError>;

impl StoreError {
    pub(crate) fn new(kind: Kind, base: &str, place: &str, detail: impl Into<String>) -> Self {
        StoreError {
            kind,
            base: base.to_owned(),
            place: place.to_owned(),
            detail: detail.into(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Error::from(self.clone()).to_string())
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        let StoreError {
            kind,
            base: name,
            place,
            detail,
        } = e;
        match kind {
            Kind::Damaged => Error::config(format!(
                "the index of knowledge base {name} is damaged ({place}): {detail}"
            ))
            .hint(format!(
                "rebuild it from the notes with: ai kb sync --full {name}"
            )),
            Kind::Busy => Error::busy(format!("knowledge base {name} is busy (another sync?)"))
                .hint("try again when it is done"),
            Kind::DiskFull => Error::backend(format!(
                "the disk is full: cannot write the index of knowledge base {name}"
            ))
            .hint("free some space, then run the sync again: it continues where it stopped"),
            Kind::Access => Error::backend(format!(
                "cannot open the index of knowledge base {name} ({place}): {detail}"
            ))
            .hint("check the permissions of the file and its folder"),
            Kind::Unreachable => Error::backend(format!(
                "cannot reach the store of knowledge base {name} ({place}): {detail}"
            ))
            .hint("check that the server runs and accepts connections, then try again"),
            Kind::Refused { found, newer } => {
                let e = Error::config(format!(
                    "knowledge base {name} was indexed by another version of ai (schema {found}, this one reads {SCHEMA})"
                ));
                if newer {
                    e.hint(format!(
                        "use the newer ai that indexed it, or rebuild it with this one: ai kb sync --full {name}"
                    ))
                } else {
                    e.hint(format!("rebuild it with: ai kb sync --full {name}"))
                }
            }
            Kind::Bug => Error::backend(format!(
                "the index of knowledge base {name} refused a request ({place}): {detail}"
            ))
            .hint("this is a bug in ai: please report it with the command that failed"),
            Kind::Interrupted => Error::Interrupted,
        }
    }
}

/// A note as the index knows it (what a sync compares the folder with).
pub(crate) struct Known {
    pub(crate) n: i64,
    pub(crate) path: String,
    pub(crate) hash: String,
    pub(crate) title: String,
    pub(crate) ordering: Option<String>,
    pub(crate) size: i64,
    pub(crate) mtime: i64,
    /// One alias a line.
    pub(crate) aliases: String,
    pub(crate) lang: Option<String>,
}

/// A note's row as a sync writes it.
pub(crate) struct NoteRow<'a> {
    pub(crate) id: &'a str,
    pub(crate) path: &'a str,
    pub(crate) title: &'a str,
    pub(crate) ordering: Option<&'a str>,
    pub(crate) hash: &'a str,
    pub(crate) size: i64,
    pub(crate) mtime: i64,
    /// One alias a line.
    pub(crate) aliases: &'a str,
    pub(crate) lang: &'a str,
}

/// A passage as a sync writes it.
pub(crate) struct PassageRow<'a> {
    pub(crate) seq: i64,
    pub(crate) heading: &'a str,
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) text: &'a str,
    pub(crate) hash: &'a str,
    /// Kept from the passage's previous version (normalized).
    pub(crate) vector: Option<&'a [f32]>,
}

/// What the keyword tables hold of one passage: stems of the note's language for the words
/// table, [`fold`]ed text for the trigram table.
pub(crate) struct Keywords {
    pub(crate) title: String,
    pub(crate) aliases: String,
    pub(crate) heading: String,
    pub(crate) text: String,
    pub(crate) gram_title: String,
    pub(crate) gram_heading: String,
    pub(crate) gram_text: String,
}

/// The keyword tables: stemmed words (BM25 over title, aliases, heading, text) and trigrams
/// (title, heading, text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Words,
    Grams,
}

/// A passage found, with its note (`n`: the note's row, to keep one passage a note).
pub(crate) struct Passage {
    pub(crate) n: i64,
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) ordering: Option<String>,
    pub(crate) path: String,
    pub(crate) seq: u32,
    pub(crate) heading: String,
    pub(crate) lines: [u32; 2],
    pub(crate) text: String,
}

pub(crate) use super::linked::Linked;

/// What a note is called: what a query may name it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteNames {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) path: String,
    /// One a line.
    pub(crate) aliases: String,
}

/// What an index does. Passages are named by `c`, notes by `n`: the store's own row numbers.
/// Keyword queries are FTS5 expressions (quoted terms, `OR`, parentheses, `{columns} :`), as
/// the search writes them.
pub(crate) trait Store {
    /// Where it lives, for messages and `kb list` (never with a password).
    #[allow(dead_code)] // the stores with a server
    fn place(&self) -> String;

    fn meta(&self, key: &str) -> StoreResult<Option<String>>;
    fn set_meta(&self, key: &str, value: Option<&str>) -> StoreResult<()>;
    /// Whether the keyword tables hold what this version writes ([`KEYWORDS`]; a store may
    /// ask more of its own tables).
    fn keywords_current(&self) -> StoreResult<bool> {
        self.stemmed()
    }
    /// Whether the words table holds stems as this version makes them: how a query is looked
    /// up in it (an index from before stemming is searched as it was indexed).
    fn stemmed(&self) -> StoreResult<bool> {
        Ok(self.meta("keywords")?.as_deref() == Some(KEYWORDS))
    }
    /// Bring the keyword tables of an older index to [`KEYWORDS`]: the keyword tables emptied
    /// and every note marked to be read again by the sync that called this; `meta.reindexing`
    /// says so until a sync has read them all (searches meanwhile miss the others' words).
    fn migrate_keywords(&self) -> StoreResult<()>;

    // Stats.
    fn notes(&self) -> StoreResult<u64>;
    fn passages(&self) -> StoreResult<u64>;
    fn embedded(&self) -> StoreResult<u64>;
    /// The languages of its notes, sorted.
    fn languages(&self) -> StoreResult<Vec<String>>;
    /// Its size on disk.
    fn disk_bytes(&self) -> u64;

    // Sync: writes happen between `begin` and `commit` (or `rollback`).
    /// Wait until no other sync of this base runs (on stores several machines share; a sync
    /// of a local file is kept alone by the lock file in the home folder).
    fn lock_sync(&self) -> StoreResult<()> {
        Ok(())
    }
    fn begin(&self) -> StoreResult<()>;
    fn commit(&self) -> StoreResult<()>;
    fn rollback(&self);
    /// Every note, by ID.
    fn known(&self) -> StoreResult<HashMap<String, Known>>;
    /// Size and mtime of every note, by path (what a freshness check compares).
    fn stats_by_path(&self) -> StoreResult<HashMap<String, (i64, i64)>>;
    fn insert_note(&self, note: &NoteRow<'_>) -> StoreResult<i64>;
    fn update_note(&self, n: i64, note: &NoteRow<'_>) -> StoreResult<()>;
    /// A note and its passages, keywords and vectors.
    fn delete_note(&self, n: i64) -> StoreResult<()>;
    /// The passages of note `n`: `(c, heading, text)`.
    fn passages_of(&self, n: i64) -> StoreResult<Vec<(i64, String, String)>>;
    /// The vectors of note `n`'s passages, by passage hash.
    fn vectors_of(&self, n: i64) -> StoreResult<HashMap<String, Vec<f32>>>;
    /// Remove note `n`'s passages (and their keywords); whether any had a vector.
    fn delete_passages(&self, n: i64) -> StoreResult<bool>;
    fn insert_passage(&self, n: i64, p: &PassageRow<'_>) -> StoreResult<i64>;
    fn index_keywords(&self, c: i64, k: &Keywords) -> StoreResult<()>;
    /// Note `n`'s passages in order, each with its keywords (a store with a server writes them
    /// in one round trip).
    fn insert_passages(&self, n: i64, rows: &[(PassageRow<'_>, Keywords)]) -> StoreResult<()> {
        for (p, k) in rows {
            let c = self.insert_passage(n, p)?;
            self.index_keywords(c, k)?;
        }
        Ok(())
    }
    fn unindex(&self, c: i64) -> StoreResult<()>;
    /// Mark the vectors changed (inside the caller's transaction).
    fn vectors_changed(&self) -> StoreResult<()>;
    /// The size of the vectors to come, known before the first is written: a store whose
    /// column takes a size gives it while the table is empty (cheap then; later it rewrites
    /// every row).
    fn size_vectors(&self, _dims: usize) -> StoreResult<()> {
        Ok(())
    }
    /// Passages without a vector, `(c, bytes of heading and text)`, in order.
    fn unembedded(&self) -> StoreResult<Vec<(i64, usize)>>;
    /// What is embedded for passage `c`: `(heading, text, note title)`.
    fn embed_input(&self, c: i64) -> StoreResult<(String, String, String)>;
    /// [`Store::embed_input`] of several passages, in their order.
    fn embed_inputs(&self, cs: &[i64]) -> StoreResult<Vec<(String, String, String)>> {
        cs.iter().map(|c| self.embed_input(*c)).collect()
    }
    /// Store passage `c`'s (normalized) vector.
    fn set_vector(&self, c: i64, v: &[f32]) -> StoreResult<()>;
    /// [`Store::set_vector`] of several passages.
    fn set_vectors(&self, rows: &[(i64, Vec<f32>)]) -> StoreResult<()> {
        for (c, v) in rows {
            self.set_vector(*c, v)?;
        }
        Ok(())
    }
    /// After a sync wrote everything: derived structures brought up to date (the side file of
    /// vectors, the write-ahead log folded back). A notice for the user, when there is one.
    fn finish_sync(&self, dims: usize) -> StoreResult<Option<String>>;

    // Search.
    /// In how many passages the words table has `word` (as indexed).
    fn doc_freq(&self, word: &str) -> StoreResult<u64>;
    /// [`Store::doc_freq`] of several words, in their order, in one round trip on a store with
    /// a server. A count may stop at `cap` (what is at least `cap` is then `cap`).
    fn doc_freqs(&self, words: &[String], cap: u64) -> StoreResult<Vec<u64>> {
        let _ = cap;
        words.iter().map(|w| self.doc_freq(w)).collect()
    }
    /// Whether `query` matches fewer than `cap` passages of `table`.
    fn matches_fewer(&self, table: Table, query: &str, cap: usize) -> StoreResult<bool>;
    /// [`Store::matches_fewer`] of several queries, in their order.
    fn matches_fewer_each(
        &self,
        table: Table,
        queries: &[String],
        cap: usize,
    ) -> StoreResult<Vec<bool>> {
        queries
            .iter()
            .map(|q| self.matches_fewer(table, q, cap))
            .collect()
    }
    /// Passages best first with their BM25 scores (higher is better), columns weighed by
    /// `weights`.
    fn keyword(
        &self,
        table: Table,
        weights: &[f64],
        query: &str,
        limit: usize,
    ) -> StoreResult<Vec<(i64, f64)>>;
    /// The `top` passages most similar to `query` (normalized), best first.
    fn nearest(&self, query: &[f32], top: usize) -> StoreResult<Vec<(i64, f32)>>;
    /// Passage `c` with its note; `None` when a sync removed it since.
    fn passage(&self, c: i64) -> StoreResult<Option<Passage>>;
    /// [`Store::passage`] of several passages, in their order.
    fn passages_by(&self, cs: &[i64]) -> StoreResult<Vec<Option<Passage>>> {
        cs.iter().map(|c| self.passage(*c)).collect()
    }

    // Notes by name.
    /// The note `name` names (ID, path, or as a `[[wikilink]]` names it, else an alias).
    fn find_note(&self, name: &str) -> StoreResult<Option<Linked>>;
    /// The passages of the note with ID `id`, in order (none: no such note).
    fn passages_of_note(&self, id: &str) -> StoreResult<Vec<i64>>;
    /// The names of the notes of passages `cs`, in the passages' order (a passage removed
    /// since is left out).
    fn note_names(&self, cs: &[i64]) -> StoreResult<Vec<NoteNames>>;
    /// The notes that link to `note`.
    fn linked_from(&self, note: &Linked) -> StoreResult<Vec<Linked>>;
    /// The links of the note with ID `id`, each with the note it reaches ([`super::linked`]).
    fn links(&self, id: &str) -> StoreResult<Vec<super::linked::Link>>;

    /// Before a sync writes: the tables an older index lacks (links, documents without text)
    /// are made; an index without links has every note marked to be read again, to fill them.
    fn prepare_sync(&self) -> StoreResult<()>;
    /// The links of note `n`, as it reads now.
    fn set_links(&self, n: i64, links: &[super::linked::Written]) -> StoreResult<()>;
    /// Documents (HTML, PDF) that gave no text: path, size, mtime, why.
    fn unread(&self) -> StoreResult<Vec<(String, i64, i64, String)>>;
    /// Record that the document at `path` gave no text (with `Some(why)`), or that it did.
    fn set_unread(&self, path: &str, stat: (i64, i64), why: Option<&str>) -> StoreResult<()>;
}

/// A note's row whole, as `kb copy` moves it from one store to another.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NoteRecord {
    pub(crate) n: i64,
    pub(crate) id: String,
    pub(crate) path: String,
    pub(crate) title: String,
    pub(crate) ordering: Option<String>,
    pub(crate) hash: String,
    pub(crate) size: i64,
    pub(crate) mtime: i64,
    /// One alias a line.
    pub(crate) aliases: String,
    pub(crate) lang: Option<String>,
}

/// A passage's row whole (its vector normalized, as stored), as `kb copy` moves it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PassageRecord {
    pub(crate) c: i64,
    pub(crate) note: i64,
    pub(crate) seq: i64,
    pub(crate) heading: String,
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) text: String,
    pub(crate) hash: String,
    pub(crate) vector: Option<Vec<f32>>,
}

/// A link's row, as `kb copy` moves it (`key` as [`super::linked::key`] made it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinkRecord {
    pub(crate) note: i64,
    pub(crate) line: i64,
    pub(crate) wiki: bool,
    pub(crate) name: String,
    pub(crate) key: String,
}

/// An index read and written whole, row by row, by `kb copy` (`kb/copy.rs`): pages of rows in
/// their order, and the same rows written into a new index with their row numbers, so the
/// copy searches, ranks and links as the original does. The keyword tables are not read (a
/// SQLite index keeps no text of them): the copy makes them again from the rows.
pub(crate) trait Records {
    /// Read everything that follows in one consistent state of the index (until
    /// [`Store::rollback`]).
    fn begin_reading(&self) -> StoreResult<()>;
    /// Every `meta` entry.
    fn meta_all(&self) -> StoreResult<Vec<(String, String)>>;
    /// At most `limit` notes with a row number above `after`, in order.
    fn notes_after(&self, after: i64, limit: usize) -> StoreResult<Vec<NoteRecord>>;
    /// At most `limit` passages with a row number above `after`, in order.
    fn passages_after(&self, after: i64, limit: usize) -> StoreResult<Vec<PassageRecord>>;
    /// At most `limit` links after position `after`, in their order, each with its position.
    fn links_after(&self, after: i64, limit: usize) -> StoreResult<Vec<(i64, LinkRecord)>>;
    /// How many links it holds.
    fn link_count(&self) -> StoreResult<u64>;
    /// Write notes read from another index, with their row numbers.
    fn put_notes(&self, rows: &[NoteRecord]) -> StoreResult<()>;
    /// Write passages read from another index, with their row numbers and their keywords.
    fn put_passages(&self, rows: &[(PassageRecord, Option<Keywords>)]) -> StoreResult<()>;
    fn put_links(&self, rows: &[LinkRecord]) -> StoreResult<()>;
    /// After the rows, inside the copy's transaction: what follows from them (the row
    /// counters, the vector column's size and its index, the vector generation).
    fn finish_copy(&self, dims: usize) -> StoreResult<()>;
    /// Last, inside the copy's transaction: the copy takes the base's place in the store (on
    /// a server, replacing what is there only with `force`).
    fn switch_copy(&self, force: bool) -> Result<()>;
}

/// The store behind an index.
pub(crate) enum Backing {
    Sqlite(sqlite::Sqlite),
    #[cfg(feature = "postgres")]
    Postgres(Box<postgres::Postgres>),
}

/// An open index.
pub(crate) struct Index {
    pub(crate) name: String,
    pub(crate) backing: Backing,
}

impl Deref for Index {
    type Target = dyn Store;
    fn deref(&self) -> &(dyn Store + 'static) {
        match &self.backing {
            Backing::Sqlite(s) => s,
            #[cfg(feature = "postgres")]
            Backing::Postgres(p) => p.as_ref(),
        }
    }
}

impl Index {
    /// The index as `kb copy` reads and writes it.
    pub(crate) fn records(&self) -> &dyn Records {
        match &self.backing {
            Backing::Sqlite(s) => s,
            #[cfg(feature = "postgres")]
            Backing::Postgres(p) => p.as_ref(),
        }
    }

    /// Open the index of `name`; with `create`, make it (and its folder) when missing.
    pub(crate) fn open(home: &Home, name: &str, create: bool) -> Result<Index> {
        Index::open_at(home, name, file(home, name), create)
    }

    /// Open the index of knowledge base `name` where `base` says it lives; with `create`,
    /// make it when missing.
    pub(crate) fn open_base(
        home: &Home,
        name: &str,
        base: &BaseConfig,
        create: bool,
    ) -> Result<Index> {
        match server(name, base)? {
            #[cfg(feature = "postgres")]
            Some(url) => Ok(Index {
                name: name.to_owned(),
                backing: Backing::Postgres(Box::new(postgres::Postgres::open(name, &url, create)?)),
            }),
            #[cfg(not(feature = "postgres"))]
            Some(_) => unreachable!("server() refuses URLs without the postgres feature"),
            None => Index::open(home, name, create),
        }
    }

    /// Connect to the server of `name` for a rebuild, without looking at its tables (they may
    /// be damaged): [`reset`] makes new ones beside them. `None` for a base in a file.
    pub(crate) fn connect_to_rebuild(name: &str, base: &BaseConfig) -> Result<Option<Index>> {
        match server(name, base)? {
            #[cfg(feature = "postgres")]
            Some(url) => Ok(Some(Index {
                name: name.to_owned(),
                backing: Backing::Postgres(Box::new(postgres::Postgres::connect(name, &url)?)),
            })),
            #[cfg(not(feature = "postgres"))]
            Some(_) => unreachable!("server() refuses URLs without the postgres feature"),
            None => Ok(None),
        }
    }

    /// Open the index of `name` at `path` (its own file, or [`beside`] it).
    pub(crate) fn open_at(home: &Home, name: &str, path: PathBuf, create: bool) -> Result<Index> {
        let s = sqlite::Sqlite::open(home, name, path, create)?;
        Ok(Index {
            name: name.to_owned(),
            backing: Backing::Sqlite(s),
        })
    }

    /// Start a transaction that is rolled back unless committed.
    pub(crate) fn transaction(&self) -> Result<Tx<'_>> {
        self.begin()?;
        Ok(Tx {
            index: self,
            open: true,
        })
    }
}

/// A transaction of an index: rolled back when dropped uncommitted.
pub(crate) struct Tx<'a> {
    index: &'a Index,
    open: bool,
}

impl Tx<'_> {
    pub(crate) fn commit(mut self) -> Result<()> {
        self.open = false;
        Ok(self.index.commit()?)
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            self.index.rollback();
        }
    }
}

/// Where `kb copy` builds a SQLite index before putting it in place (a copy killed midway leaves
/// it there; the next copy starts it again).
pub(crate) fn staging(home: &Home, name: &str) -> PathBuf {
    dir(home).join(format!("{name}.copy.sqlite"))
}

/// A new, empty index of `name` for `kb copy` to fill, in one transaction that nothing else
/// sees until it is committed: on a server, a schema of the copy's own that takes the base's
/// place at the end ([`Records::switch_copy`]); as a SQLite file, a file at [`staging`] that
/// [`switch`] puts in place after the commit. A target that already holds the base is refused
/// without `force`.
pub(crate) fn create_copy(
    home: &Home,
    name: &str,
    base: &BaseConfig,
    force: bool,
) -> Result<Index> {
    match server(name, base)? {
        #[cfg(feature = "postgres")]
        Some(url) => Ok(Index {
            name: name.to_owned(),
            backing: Backing::Postgres(Box::new(postgres::Postgres::create_copy(
                name, &url, force,
            )?)),
        }),
        #[cfg(not(feature = "postgres"))]
        Some(_) => unreachable!("server() refuses URLs without the postgres feature"),
        None => {
            let path = file(home, name);
            if path.exists() && !force {
                return Err(Error::usage(format!(
                    "{} already holds an index of knowledge base {name}",
                    path.display()
                ))
                .hint(format!(
                    "replace it with: ai kb copy {name} --to sqlite --force"
                )));
            }
            let at = staging(home, name);
            remove_at(&at)?;
            let ix = Index::open_at(home, name, at, true)?;
            ix.begin()?;
            Ok(ix)
        }
    }
}

/// Remove an index and its side files (and a rebuild or a copy left beside it). Notes are
/// never touched.
pub(crate) fn remove(home: &Home, name: &str) -> Result<bool> {
    remove_at(&beside(home, name))?;
    remove_at(&staging(home, name))?;
    remove_at(&file(home, name))
}

/// Put the index built [`beside`] `name`'s in its place, as one commit: a search sees the old
/// index or the new one, never none or a part.
pub(crate) fn switch(home: &Home, name: &str, fresh: Index) -> Result<()> {
    match fresh.backing {
        Backing::Sqlite(s) => sqlite::switch(home, name, s),
        // Rebuilt in a schema beside the base's.
        #[cfg(feature = "postgres")]
        Backing::Postgres(p) => p.switch(),
    }
}

/// Empty an index on a server, as new (`kb sync --full`): its tables are made again beside
/// the old ones, which [`switch`] replaces at the end.
pub(crate) fn reset(ix: &Index) -> Result<()> {
    match &ix.backing {
        Backing::Sqlite(_) => Ok(()),
        #[cfg(feature = "postgres")]
        Backing::Postgres(p) => p.reset(),
    }
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

/// The server of knowledge base `name`, when it lives on one: `kb.bases.NAME.store` as a
/// `postgres://` URL, or `postgres` for the URL in `AI_KB_DATABASE_URL`.
pub(crate) fn server(name: &str, base: &BaseConfig) -> Result<Option<String>> {
    let url = match base.store.as_deref() {
        None | Some("" | "sqlite") => return Ok(None),
        Some("postgres" | "postgresql") => match std::env::var("AI_KB_DATABASE_URL") {
            Ok(u) if is_server_url(&u) => u,
            _ => {
                return Err(Error::config(format!(
                    "knowledge base {name} lives on the PostgreSQL server of AI_KB_DATABASE_URL, which is not set to a postgres:// URL"
                ))
                .hint("export AI_KB_DATABASE_URL=postgres://USER@HOST/DATABASE"));
            }
        },
        Some(u) if is_server_url(u) => u.to_owned(),
        Some(other) => {
            return Err(Error::config(format!(
                "kb.bases.{name}.store is not a store ai knows: {}",
                redact(other)
            ))
            .hint("leave it out (a SQLite file), or give a postgres://USER@HOST/DATABASE URL"));
        }
    };
    if cfg!(feature = "postgres") {
        Ok(Some(url))
    } else {
        Err(Error::config(format!(
            "knowledge base {name} lives on PostgreSQL, but this ai was built without the postgres feature"
        ))
        .hint("install an ai built with default features"))
    }
}

/// Whether `s` is a PostgreSQL URL.
pub(crate) fn is_server_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// `s` with any password left out, for showing.
pub(crate) fn redact(s: &str) -> String {
    #[cfg(feature = "postgres")]
    {
        postgres::redact(s)
    }
    #[cfg(not(feature = "postgres"))]
    {
        s.split('@').next_back().unwrap_or_default().to_owned()
    }
}

/// Whether knowledge base `name` may have an index (a file that exists; on a server, it is
/// asked when opened).
pub(crate) fn exists(home: &Home, name: &str, base: &BaseConfig) -> bool {
    base.store
        .as_deref()
        .is_some_and(|s| !s.is_empty() && s != "sqlite")
        || file(home, name).exists()
}

/// Where knowledge base `name`'s index lives, as `kb list` shows it.
pub(crate) fn place(home: &Home, name: &str, base: &BaseConfig) -> String {
    match base.store.as_deref() {
        Some("postgres" | "postgresql") => std::env::var("AI_KB_DATABASE_URL")
            .map(|u| redact(&u))
            .unwrap_or_else(|_| "AI_KB_DATABASE_URL".into()),
        Some(s) if is_server_url(s) => redact(s),
        _ => file(home, name).display().to_string(),
    }
}

/// Latin letters without their marks, as the `unicode61` tokenizer folds them (`läuft` is
/// indexed as `lauft`), for looking terms up in its vocabulary.
pub(crate) fn strip_marks(term: &str) -> String {
    term.chars()
        .map(|c| match c {
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => 'a',
            'ç' | 'ć' | 'č' => 'c',
            'ď' => 'd',
            'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => 'e',
            'ì' | 'í' | 'î' | 'ï' | 'ī' | 'į' => 'i',
            'ñ' | 'ń' | 'ň' => 'n',
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => 'o',
            'ř' => 'r',
            'ś' | 'š' | 'ş' => 's',
            'ť' | 'ţ' => 't',
            'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' | 'ų' => 'u',
            'ý' | 'ÿ' => 'y',
            'ź' | 'ż' | 'ž' => 'z',
            c => c,
        })
        .collect()
}
