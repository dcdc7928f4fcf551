//! Bringing an index up to date with its folder, incrementally.
//!
//! A file whose size and mtime match the index is not read. A file that is read is matched to
//! the index by its stable note ID, not its path: the same normalized text under a new path,
//! title or ordering is a metadata change (nothing re-embedded); changed text replaces the note's
//! passages, keeping the vectors of passages whose text did not change. Notes are written in
//! transactions of a few hundred, and embeddings one committed batch at a time, so Ctrl+C (or a
//! crash) leaves a consistent index that the next sync continues.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::time::Instant;

use super::chunk;
use super::document;
use super::embed::{self, Embedder, Input, Purpose};
use super::lang;
use super::note::{self, Note};
use super::progress::Progress;
use super::scan::{self, Entry, Skipped};
use super::store::{self, Index, Keywords, Known, NoteRow, PassageRow, Tx, fold};
use super::vectors;
use crate::config::Home;
use crate::config::kb::BaseConfig;
use crate::error::{self, Error, Result};
use crate::output::Ui;
use crate::signal;

/// What a sync did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub(crate) struct Counts {
    pub(crate) added: u64,
    pub(crate) updated: u64,
    pub(crate) deleted: u64,
    pub(crate) unchanged: u64,
    pub(crate) metadata: u64,
    /// Notes in the index afterwards.
    pub(crate) notes: u64,
    pub(crate) chunks: u64,
    /// Passages sent for embedding in this sync.
    pub(crate) embedded: u64,
    /// Files not indexed, by reason.
    pub(crate) skipped: Skipped,
}

impl Counts {
    /// `added 3 · updated 1 · deleted 0 · unchanged 142 · metadata 12 · 146 notes`
    pub(crate) fn line(&self) -> String {
        format!(
            "added {} · updated {} · deleted {} · unchanged {} · metadata {} · {} note{}",
            self.added,
            self.updated,
            self.deleted,
            self.unchanged,
            self.metadata,
            self.notes,
            if self.notes == 1 { "" } else { "s" }
        )
    }
}

/// Notes per transaction.
const NOTES_PER_COMMIT: usize = 256;

/// The lock that lets one sync of a knowledge base run at a time (searches do not take it).
pub(crate) fn lock(home: &Home, name: &str) -> Result<File> {
    let dir = store::dir(home);
    crate::config::create_private_dir(&dir)?;
    let path = dir.join(format!(".{name}.lock"));
    let f = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io("open", path.clone(), e))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::busy(format!(
            "knowledge base {name} is being synced by another call"
        ))
        .hint("wait for it to finish, then run the sync again if needed")),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", path, e)),
    }
}

/// A note's aliases as the index keeps them: one a line.
fn aliases_line(note: &Note) -> String {
    note.aliases.join("\n")
}

/// Sync knowledge base `name` with its folder.
pub(crate) fn run(
    home: &Home,
    name: &str,
    base: &BaseConfig,
    embedder: Option<&Embedder>,
    full: bool,
    ui: &Ui,
) -> Result<Counts> {
    run_with(home, name, base, embedder, full, true, ui)
}

/// Sync the notes of knowledge base `name` and their keywords, chunked for `embedder`, leaving
/// new passages without vectors for the next sync that embeds (a freshness check before a
/// turn, which must not wait on an embedding provider).
pub(crate) fn run_keywords(
    home: &Home,
    name: &str,
    base: &BaseConfig,
    embedder: &Embedder,
    ui: &Ui,
) -> Result<Counts> {
    run_with(home, name, base, Some(embedder), false, false, ui)
}

fn run_with(
    home: &Home,
    name: &str,
    base: &BaseConfig,
    embedder: Option<&Embedder>,
    full: bool,
    embed: bool,
    ui: &Ui,
) -> Result<Counts> {
    let _lock = lock(home, name)?;
    // Ctrl+C ends the sync at the next note or batch, after a commit (a second one ends `ai`).
    let _defer = signal::Defer::start();
    let root = &base.path;
    if !root.is_dir() {
        return Err(Error::not_found(format!(
            "the folder of knowledge base {name} is missing: {}",
            root.display()
        ))
        .hint(format!(
            "restore it, or remove the knowledge base with: ai kb remove {name}"
        )));
    }
    let mut full = full;
    let on_server = store::server(name, base)?.is_some();
    // On a server: one connection for the whole sync, holding the base's sync lock.
    let mut shared = None;
    if on_server {
        // A rebuild does not read the tables it replaces (they may be damaged).
        let rebuild = if full {
            Index::connect_to_rebuild(name, base)?
        } else {
            None
        };
        let ix = match rebuild {
            Some(ix) => ix,
            None => Index::open_base(home, name, base, true)?,
        };
        if let Err(e) = ix.lock_sync() {
            return Err(e.into());
        }
        shared = Some(ix);
    }
    if !full && (on_server || store::file(home, name).exists()) {
        let opened;
        let ix = match &shared {
            Some(ix) => ix,
            None => {
                opened = Index::open(home, name, false)?;
                &opened
            }
        };
        if ix.meta("chunker")?.as_deref() != Some(store::CHUNKER) {
            ui.notice(&format!(
                "ai: knowledge base {name} was chunked by another version; rebuilding it"
            ));
            full = true;
        } else if !ix.keywords_current()? {
            ui.notice(&format!(
                "ai: knowledge base {name} was indexed by an older version; indexing its keywords again (passages and embeddings are kept)"
            ));
            ix.migrate_keywords()?;
        }
    }
    // A rebuild of an index in use is built beside it and switched in at the end: searches and
    // grounded turns meanwhile keep the whole old index, never none or a part.
    let rebuilding = full && (on_server || store::file(home, name).exists());
    let ix = if let Some(ix) = shared {
        // A server's tables are rebuilt in a schema beside them, under the sync lock.
        if full {
            store::reset(&ix)?;
        }
        ix
    } else if rebuilding {
        // What a rebuild that died left there.
        let path = store::beside(home, name);
        store::remove_at(&path)?;
        Index::open_at(home, name, path, true)?
    } else {
        if full {
            store::remove(home, name)?;
        }
        Index::open(home, name, true)?
    };
    check_embedding(&ix, embedder, base)?;
    ix.prepare_sync()?;
    // A Ctrl+C during its conversions (which roll back on one) stops here, before any write.
    error::stop_if_interrupted()?;

    let filter = scan::Filter::new(&base.include, &base.exclude)?;
    let (entries, skipped) = scan::scan(root, &filter)?;
    let mut counts = Counts {
        skipped,
        ..Counts::default()
    };

    let known = ix.known()?;
    // Documents that gave no text, as they were then: not parsed again until they change.
    let unread: HashMap<String, (i64, i64, String)> = ix
        .unread()?
        .into_iter()
        .map(|(path, size, mtime, why)| (path, (size, mtime, why)))
        .collect();
    let by_path: HashMap<&str, &str> = known
        .iter()
        .map(|(id, k)| (k.path.as_str(), id.as_str()))
        .collect();
    let mut seen: HashSet<String> = HashSet::with_capacity(entries.len());
    // Passages fit the embedding model's input: its limit is in real tokens, and the chunker
    // counts about 4 bytes a token, the embedder 3 (German and code run denser).
    let budget = embedder.map_or(chunk::DEFAULT_BUDGET, |e| {
        chunk::DEFAULT_BUDGET
            .min(e.max_input_tokens() * 3 / 4)
            .max(64)
    });

    let mut progress = Progress::new(ui, "notes", entries.len() as u64);
    let mut tx = Some(begin(&ix)?);
    let mut in_tx = 0usize;
    let scanned: HashSet<&str> = entries.iter().map(|e| e.rel.as_str()).collect();
    // Files that claim an ID another scanned file holds in the index wait until that file has
    // spoken: the holder keeps its ID, whatever sorts first (a swap still swaps).
    let mut order: Vec<usize> = (0..entries.len()).collect();
    let mut deferred = vec![false; entries.len()];
    let mut at = 0;
    while at < order.len() {
        let i = order[at];
        at += 1;
        let entry = &entries[i];
        progress.set((at - 1).min(entries.len()) as u64);
        if signal::interrupted() {
            break;
        }
        // Unchanged by size and mtime: not even read.
        if let Some(id) = by_path.get(entry.rel.as_str())
            && let Some(k) = known.get(*id)
            && k.size == entry.size as i64
            && k.mtime == entry.mtime_ns
            && !seen.contains(*id)
        {
            seen.insert((*id).to_owned());
            counts.unchanged += 1;
            continue;
        }
        if let Some((size, mtime, reason)) = unread.get(entry.rel.as_str())
            && *size == entry.size as i64
            && *mtime == entry.mtime_ns
        {
            counts.skipped.no_text += 1;
            counts
                .skipped
                .no_text_paths
                .push((entry.rel.clone(), reason.clone()));
            continue;
        }
        let stat = (entry.size as i64, entry.mtime_ns);
        let note = match read_entry(entry, &mut counts.skipped) {
            Read::Note(n) => {
                if unread.contains_key(entry.rel.as_str()) {
                    ix.set_unread(&entry.rel, stat, None)?;
                }
                n
            }
            Read::Unread(why) => {
                ix.set_unread(&entry.rel, stat, Some(why.reason()))?;
                counts.skipped.no_text += 1;
                counts
                    .skipped
                    .no_text_paths
                    .push((entry.rel.clone(), why.reason().to_owned()));
                continue;
            }
            Read::Skipped => continue,
            // A file that could not be read this time keeps what the index has of it: a
            // passing error must not delete a note (and its vectors).
            Read::Failed => {
                if let Some(id) = by_path.get(entry.rel.as_str()) {
                    seen.insert((*id).to_owned());
                }
                continue;
            }
        };
        if !deferred[i]
            && !seen.contains(&note.id)
            && known
                .get(&note.id)
                .is_some_and(|k| k.path != entry.rel && scanned.contains(k.path.as_str()))
        {
            deferred[i] = true;
            order.push(i);
            continue;
        }
        if seen.contains(&note.id) {
            counts.skipped.duplicate += 1;
            ui.warn(&format!(
                "{}: note ID {} is already used by another file; skipped",
                entry.rel, note.id
            ));
            continue;
        }
        let t = tx.as_ref().expect("a transaction is open");
        match known.get(&note.id) {
            Some(k) if k.hash == note.hash => {
                let meta_changed = k.path != entry.rel
                    || k.title != note.title
                    || k.ordering != note.ordering
                    || k.aliases != aliases_line(&note);
                update_note_meta(&ix, t, k, entry, &note)?;
                if meta_changed {
                    counts.metadata += 1;
                } else {
                    counts.unchanged += 1;
                }
            }
            Some(k) => {
                replace_note(&ix, t, Some(k), entry, &note, budget)?;
                counts.updated += 1;
            }
            None => {
                replace_note(&ix, t, None, entry, &note, budget)?;
                counts.added += 1;
            }
        }
        seen.insert(note.id);
        in_tx += 1;
        if in_tx >= NOTES_PER_COMMIT {
            commit(tx.take())?;
            tx = Some(begin(&ix)?);
            in_tx = 0;
        }
    }
    // Also a Ctrl+C the signal thread has not seen yet: the deletions below are only for a
    // scan that was not stopped.
    let interrupted = signal::interrupted_now();
    if !interrupted {
        // Only a complete scan may say what is gone.
        let t = tx.as_ref().expect("a transaction is open");
        for (id, k) in &known {
            // A folder that could not be listed says nothing about its notes: they are kept
            // (with their vectors), as an unreadable file keeps its note.
            if !seen.contains(id) && !counts.skipped.unlisted_covers(&k.path) {
                delete_note(&ix, t, k.n)?;
                counts.deleted += 1;
            }
        }
        for path in unread.keys() {
            if !scanned.contains(path.as_str()) {
                ix.set_unread(path, (0, 0), None)?;
            }
        }
        // Every note's keywords are indexed again, when a migration had emptied them.
        ix.set_meta("reindexing", None)?;
    }
    commit(tx.take())?;
    progress.finish();
    if interrupted {
        return Err(Error::Interrupted);
    }

    let mut dims = 0;
    if let Some(e) = embedder {
        if embed {
            counts.embedded = embed_missing(&ix, e, ui)?;
        }
        dims = ix
            .meta("dimensions")?
            .and_then(|d| d.parse::<usize>().ok())
            .unwrap_or(0);
    }
    counts.notes = ix.notes()?;
    counts.chunks = ix.passages()?;
    let langs = ix.languages()?;
    ix.set_meta("languages", Some(&langs.join(",")))?;
    ix.set_meta("last_sync", Some(&chrono::Utc::now().to_rfc3339()))?;
    if let Some(notice) = ix.finish_sync(dims)? {
        ui.notice(&notice);
    }
    if rebuilding {
        drop(tx);
        // Stopped before the switch: the index in use stays as it was.
        error::stop_if_interrupted()?;
        store::switch(home, name, ix)?;
    }
    Ok(counts)
}

/// A knowledge base keeps one embedding model and size: it refuses to mix them.
fn check_embedding(ix: &Index, embedder: Option<&Embedder>, base: &BaseConfig) -> Result<()> {
    let recorded = ix.meta("embed")?;
    let wanted = embedder.map(|e| e.spec().to_owned());
    let dimensions = embedder.and_then(Embedder::dimensions).or(base.dimensions);
    let chunks = ix.passages()?;
    if recorded != wanted && chunks > 0 {
        let show = |s: &Option<String>| s.clone().unwrap_or_else(|| "no embeddings".into());
        return Err(Error::usage(format!(
            "knowledge base {} was indexed with {}, but its config now asks for {}",
            ix.name,
            show(&recorded),
            show(&wanted)
        ))
        .hint(format!(
            "rebuild it {}: ai kb sync --full {}",
            if wanted.is_some() {
                "with the new model"
            } else {
                "without embeddings"
            },
            ix.name
        )));
    }
    if let (Some(d), Some(recorded)) = (dimensions, ix.meta("dimensions")?)
        && recorded != d.to_string()
        && chunks > 0
    {
        return Err(Error::usage(format!(
            "knowledge base {} holds {recorded}-dimension vectors, but its config asks for {d}",
            ix.name
        ))
        .hint(format!("rebuild it with: ai kb sync --full {}", ix.name)));
    }
    ix.set_meta("embed", wanted.as_deref())?;
    if chunks == 0 {
        if let Some(d) = dimensions {
            ix.size_vectors(d as usize)?;
        }
        ix.set_meta(
            "dimensions",
            base.dimensions.map(|d| d.to_string()).as_deref(),
        )?;
        // Whether the size was asked for: queries send `dimensions` only then, as indexing
        // does (many models refuse the field).
        ix.set_meta(
            "dimensions_asked",
            Some(
                base.dimensions
                    .map_or("no".to_owned(), |d| d.to_string())
                    .as_str(),
            ),
        )?;
    }
    Ok(())
}

/// What reading a file gave.
enum Read {
    /// A document (HTML, PDF) that gave no text, and why. Counted by the caller.
    Unread(document::Unread),
    Note(Note),
    /// Not a note (any more): too large, binary. Counted.
    Skipped,
    /// Could not be read this time. Counted.
    Failed,
}

/// Read and identify a file.
fn read_entry(entry: &Entry, skipped: &mut Skipped) -> Read {
    let max = scan::max_bytes(entry.kind);
    let bytes = match scan::read_file(None, &entry.path, max) {
        Ok(b) => b,
        Err(_) => {
            skipped.unreadable += 1;
            return Read::Failed;
        }
    };
    if bytes.len() as u64 > max {
        skipped.large += 1;
        return Read::Skipped;
    }
    if entry.kind == chunk::Kind::Pdf {
        return match document::pdf(&bytes) {
            Ok((title, body)) => Read::Note(note::document(&entry.rel, title, body)),
            // Ctrl+C ended the child too: that says nothing of the file.
            Err(_) if signal::interrupted() => Read::Failed,
            Err(why) => Read::Unread(why),
        };
    }
    if scan::is_binary(&bytes[..bytes.len().min(8192)]) {
        skipped.binary += 1;
        return Read::Skipped;
    }
    let text = scan::decode(&bytes);
    if entry.kind == chunk::Kind::Html {
        // Turning HTML into text takes time that grows with the square of its nesting.
        if crate::web::too_deep(text.as_bytes()).is_some() {
            return Read::Unread(document::Unread::TooCostly);
        }
        let (title, body) = document::html(&text);
        if body.trim().is_empty() {
            return Read::Unread(document::Unread::NoText);
        }
        return Read::Note(note::document(&entry.rel, title, body));
    }
    Read::Note(note::read(&entry.rel, &text, entry.kind))
}

fn begin(ix: &Index) -> Result<Tx<'_>> {
    ix.transaction()
}

fn commit(tx: Option<Tx<'_>>) -> Result<()> {
    match tx {
        Some(t) => t.commit(),
        None => Ok(()),
    }
}

/// A note's row as the index keeps it.
fn row<'a>(entry: &'a Entry, note: &'a Note, aliases: &'a str) -> NoteRow<'a> {
    NoteRow {
        id: &note.id,
        path: &entry.rel,
        title: &note.title,
        ordering: note.ordering.as_deref(),
        hash: &note.hash,
        size: entry.size as i64,
        mtime: entry.mtime_ns,
        aliases,
        lang: note.lang.code(),
    }
}

fn update_note_meta(ix: &Index, _t: &Tx<'_>, k: &Known, entry: &Entry, note: &Note) -> Result<()> {
    let aliases = aliases_line(note);
    let mut r = row(entry, note, &aliases);
    // The text is unchanged: the note keeps its hash.
    r.hash = &k.hash;
    ix.update_note(k.n, &r)?;
    ix.set_links(k.n, &note.links)?;
    if k.title != note.title || k.aliases != aliases || k.lang.as_deref() != Some(note.lang.code())
    {
        // Title and aliases are searchable, and the language says how words are stemmed:
        // index the passages again (an index that was migrated has no keywords for them yet).
        for (c, heading, text) in ix.passages_of(k.n)? {
            ix.unindex(c)?;
            index_text(ix, c, note, &heading, &text)?;
        }
    }
    Ok(())
}

/// Index one passage: its words as stems of the note's language (with the note's title and
/// aliases), its trigrams as folded text. Embedded notes and images (`![[…]]`) are no text of
/// the passage.
fn index_text(ix: &Index, c: i64, note: &Note, heading: &str, text: &str) -> Result<()> {
    let k = keywords(&note.title, &note.aliases, note.lang, heading, text);
    ix.index_keywords(c, &k)?;
    Ok(())
}

/// What the keyword tables hold of a passage with `heading` and `text` in a note with `title`,
/// `aliases` and language `lang` (also what `kb copy` indexes from the rows it copies).
pub(crate) fn keywords(
    title: &str,
    aliases: &[impl AsRef<str>],
    lang: lang::Lang,
    heading: &str,
    text: &str,
) -> Keywords {
    let text = note::without_embeds(text);
    let stems = lang::Stems::new(lang);
    let aliases = aliases
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<&str>>()
        .join(" ; ");
    let gram_title = if aliases.is_empty() {
        fold(title)
    } else {
        fold(&format!("{title} ; {aliases}"))
    };
    Keywords {
        title: stems.text(title),
        aliases: stems.text(&aliases),
        heading: stems.text(heading),
        text: stems.text(&text),
        gram_title,
        gram_heading: fold(heading),
        gram_text: fold(&text),
    }
}

fn delete_note(ix: &Index, _t: &Tx<'_>, n: i64) -> Result<()> {
    Ok(ix.delete_note(n)?)
}

/// The hash that decides whether a passage must be embedded again.
fn chunk_hash(heading: &str, text: &str) -> String {
    let mut s = String::with_capacity(heading.len() + text.len() + 1);
    s.push_str(heading);
    s.push('\n');
    s.push_str(text);
    note::hash(&s)
}

/// Write a new or changed note and its passages; passages whose text is unchanged keep their
/// vectors.
fn replace_note(
    ix: &Index,
    _t: &Tx<'_>,
    old: Option<&Known>,
    entry: &Entry,
    note: &Note,
    budget: usize,
) -> Result<()> {
    let aliases = aliases_line(note);
    let (n, mut kept) = match old {
        Some(k) => {
            let kept = ix.vectors_of(k.n)?;
            let had_vectors = !kept.is_empty();
            ix.delete_passages(k.n)?;
            ix.update_note(k.n, &row(entry, note, &aliases))?;
            if had_vectors {
                ix.vectors_changed()?;
            }
            (k.n, kept)
        }
        None => (ix.insert_note(&row(entry, note, &aliases))?, HashMap::new()),
    };
    ix.set_links(n, &note.links)?;
    let chunks = chunk::split(&note.body, note.first_line, entry.kind, budget);
    let mut reused = false;
    let found: Vec<(String, Option<Vec<f32>>)> = chunks
        .iter()
        .map(|ch| {
            let hash = chunk_hash(&ch.heading, &ch.text);
            let vector = kept.remove(&hash);
            reused |= vector.is_some();
            (hash, vector)
        })
        .collect();
    // All of the note's passages at once (one round trip to a server).
    let rows: Vec<(PassageRow<'_>, Keywords)> = chunks
        .iter()
        .zip(&found)
        .enumerate()
        .map(|(seq, (ch, (hash, vector)))| {
            (
                PassageRow {
                    seq: seq as i64,
                    heading: &ch.heading,
                    start_line: ch.start_line,
                    end_line: ch.end_line,
                    text: &ch.text,
                    hash,
                    vector: vector.as_deref(),
                },
                keywords(&note.title, &note.aliases, note.lang, &ch.heading, &ch.text),
            )
        })
        .collect();
    ix.insert_passages(n, &rows)?;
    if reused {
        ix.vectors_changed()?;
    }
    Ok(())
}

/// Embed every passage that has no vector yet, one committed batch at a time.
fn embed_missing(ix: &Index, e: &Embedder, ui: &Ui) -> Result<u64> {
    // Only the IDs and sizes up front: the texts are read a batch at a time, so a sync of a
    // large folder holds one batch in memory, not every passage.
    let todo: Vec<(i64, usize)> = ix.unembedded()?;
    if todo.is_empty() {
        return Ok(0);
    }
    let tokens: Vec<usize> = todo
        .iter()
        .map(|(_, bytes)| embed::estimate_tokens_of(*bytes))
        .collect();
    let batches = embed::batches(&tokens, e.max_batch(), e.max_batch_tokens());
    let mut progress = Progress::new(ui, "passages embedded", todo.len() as u64).with_rate();
    let mut dims: Option<usize> = ix.meta("dimensions")?.and_then(|d| d.parse().ok());
    let mut done = 0u64;
    let started = Instant::now();
    for range in &batches {
        progress.set(done);
        if signal::interrupted() {
            progress.finish();
            return Err(Error::Interrupted);
        }
        let cs: Vec<i64> = range.clone().map(|j| todo[j].0).collect();
        let texts: Vec<(String, String)> = ix
            .embed_inputs(&cs)?
            .into_iter()
            .map(|(heading, text, title)| (embed_text(&heading, &text), title))
            .collect();
        let inputs: Vec<Input<'_>> = texts
            .iter()
            .map(|(text, title)| Input {
                text,
                title: Some(title.as_str()),
            })
            .collect();
        let got = e.embed(&inputs, Purpose::Document, None).inspect_err(|_| {
            progress.finish();
        })?;
        if got.len() != inputs.len() {
            progress.finish();
            return Err(Error::backend(format!(
                "{} returned {} vectors for {} passages",
                e.spec(),
                got.len(),
                inputs.len()
            )));
        }
        let len = got.first().map_or(0, Vec::len);
        match dims {
            Some(d) if d != len => {
                progress.finish();
                return Err(Error::backend(format!(
                    "{} returned {len}-dimension vectors, but knowledge base {} holds {d}",
                    e.spec(),
                    ix.name
                ))
                .hint(format!(
                    "set \"dimensions\" to match, or rebuild with: ai kb sync --full {}",
                    ix.name
                )));
            }
            _ => {}
        }
        let t = begin(ix)?;
        if dims.is_none() {
            ix.set_meta("dimensions", Some(&len.to_string()))?;
            dims = Some(len);
        }
        let rows: Vec<(i64, Vec<f32>)> = range
            .clone()
            .zip(got)
            .map(|(j, mut v)| {
                vectors::normalize(&mut v);
                (todo[j].0, v)
            })
            .collect();
        ix.set_vectors(&rows)?;
        ix.vectors_changed()?;
        t.commit()?;
        done += range.len() as u64;
    }
    progress.finish();
    if done > 0 {
        ui.notice(&format!(
            "ai: embedded {done} passage{} with {} in {:.1}s ({:.0} passages/s)",
            if done == 1 { "" } else { "s" },
            e.spec(),
            started.elapsed().as_secs_f64(),
            done as f64 / started.elapsed().as_secs_f64().max(0.001)
        ));
    }
    Ok(done)
}

/// What is embedded for a passage: its heading path, then its text.
pub(crate) fn embed_text(heading: &str, text: &str) -> String {
    if heading.is_empty() {
        text.to_owned()
    } else {
        format!("{heading}\n\n{text}")
    }
}
