//! `ai kb copy NAME --to STORE`: a knowledge base moved to another store (a SQLite file in the
//! home folder, a PostgreSQL server) as it is: its notes, passages, vectors with the model and
//! size that made them, links, documents without text and sync state, with their row numbers,
//! so searches rank as before and the next sync of an unchanged folder has nothing to do.
//! Nothing is embedded again; the keyword tables are made from the passages (as a sync makes
//! them), since a SQLite index keeps no text of them.
//!
//! Safe at every step: the base's sync lock is held throughout and the source is read in one
//! consistent state, never written. The target is written in one transaction (on a server, the
//! base's schema is made inside it; as a SQLite file, a file beside the index, put in place at
//! the end), its counts are checked against the source's before it is committed, and only then
//! does the config point the base at it. A copy stopped at any moment (Ctrl+C, killed, the
//! server gone) leaves the base where it was and no half base in the target.

use std::collections::HashMap;

use serde::Serialize;

use super::lang::Lang;
use super::store::{self, Index};
use super::sync;
use crate::config::{Config, Home};
use crate::error::{self, Error, Result};
use crate::output::Ui;
use crate::signal;

/// Rows per read and per write.
const PAGE: usize = 500;

/// What a copy moved.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Copied {
    pub(crate) notes: u64,
    pub(crate) chunks: u64,
    pub(crate) embedded: u64,
    pub(crate) links: u64,
    /// Documents without text, remembered so they are not parsed again.
    pub(crate) unread: u64,
}

/// The store `--to` names, as `kb.bases.NAME.store` says it: `None` for a SQLite file.
fn target_store(name: &str, to: &str) -> Result<Option<String>> {
    match to.trim() {
        "sqlite" | "sqlite3" => Ok(None),
        s if s == "postgres" || s == "postgresql" || store::is_server_url(s) => {
            Ok(Some(s.to_owned()))
        }
        other => Err(Error::usage(format!(
            "--to {} is not a store ai knows",
            store::redact(other)
        ))
        .hint(format!(
            "ai kb copy {name} --to postgres://USER@HOST/DATABASE (or postgres, for AI_KB_DATABASE_URL), or --to sqlite"
        ))),
    }
}

/// Copy knowledge base `name` to the store `to` names and point its config there.
pub(crate) fn run(
    home: &Home,
    config: &Config,
    name: &str,
    to: &str,
    force: bool,
    ui: &Ui,
) -> Result<Copied> {
    let base = super::base(config, name)?.clone();
    let wanted = target_store(name, to)?;
    let mut target_base = base.clone();
    target_base.store = wanted.clone();
    let from_server = store::server(name, &base)?;
    let to_server = store::server(name, &target_base)?;
    match (&from_server, &to_server) {
        (None, None) => {
            return Err(Error::usage(format!(
                "knowledge base {name} already lives in a SQLite file ({})",
                store::place(home, name, &base)
            ))
            .hint(format!(
                "copy it to a server with: ai kb copy {name} --to postgres://USER@HOST/DATABASE"
            )));
        }
        (Some(_), Some(_)) => {
            return Err(Error::usage(format!(
                "knowledge base {name} already lives on a server ({}); ai kb copy moves a base between a SQLite file and a server",
                store::place(home, name, &base)
            ))
            .hint(format!(
                "copy it to SQLite first (ai kb copy {name} --to sqlite), then from there to the other server"
            )));
        }
        _ => {}
    }
    // No sync of this base from this home while it is copied (one on another machine, of a
    // base on a server, is kept out by the server's lock below).
    let _lock = sync::lock(home, name)?;
    // Ctrl+C stops the copy at its next page, which rolls it back.
    let _defer = signal::Defer::start();
    let source = Index::open_base(home, name, &base, false)?;
    source.lock_sync()?;
    if source.meta("chunker")?.as_deref() != Some(store::CHUNKER) || !source.keywords_current()? {
        return Err(Error::usage(format!(
            "knowledge base {name} was indexed by another version of ai"
        ))
        .hint(format!("bring it up to date first: ai kb sync {name}")));
    }
    let from = store::place(home, name, &base);
    let into = store::place(home, name, &target_base);
    source.records().begin_reading()?;
    let target = store::create_copy(home, name, &target_base, force)?;
    let copied = fill(&source, &target, force);
    let copied = match copied {
        Ok(c) => c,
        Err(e) => {
            target.rollback();
            if to_server.is_none() {
                drop(target);
                let _ = store::remove_at(&store::staging(home, name));
            }
            source.rollback();
            return Err(e);
        }
    };
    source.rollback();
    drop(source);
    if to_server.is_none() {
        // The side file of vectors, written before the index is put in place.
        let dims = target
            .meta("dimensions")?
            .and_then(|d| d.parse().ok())
            .unwrap_or(0);
        target.finish_sync(dims)?;
        store::switch(home, name, target)?;
    } else {
        drop(target);
    }
    // The base lives there now.
    Config::update(home, |config| config.set_kb_base(name, Some(&target_base)))?;
    ui.notice(&format!(
        "ai: knowledge base {name} copied from {from} to {into}: {} notes, {} passages ({} with vectors), {} links; it is searched and synced there now, and the index at {from} is left as it was",
        copied.notes, copied.chunks, copied.embedded, copied.links
    ));
    Ok(copied)
}

/// Copy every row of `source` (reading) into `target` (in its transaction), check the counts,
/// and commit the target.
fn fill(source: &Index, target: &Index, force: bool) -> Result<Copied> {
    let (src, dst) = (source.records(), target.records());
    // Meta, but for what belongs to a store: its schema version, the SQLite side file's
    // generation, the passages PostgreSQL counts as they are written.
    for (key, value) in src.meta_all()? {
        if !["schema", "vectors", "passages"].contains(&key.as_str()) {
            target.set_meta(&key, Some(&value))?;
        }
    }
    // Notes, with what their passages' keywords are made from.
    struct Of {
        title: String,
        aliases: String,
        lang: Option<Lang>,
    }
    let mut notes: HashMap<i64, Of> = HashMap::new();
    let mut after = i64::MIN;
    loop {
        error::stop_if_interrupted()?;
        let rows = src.notes_after(after, PAGE)?;
        let Some(last) = rows.last() else { break };
        after = last.n;
        for r in &rows {
            notes.insert(
                r.n,
                Of {
                    title: r.title.clone(),
                    aliases: r.aliases.clone(),
                    // A note whose language is not recorded was not indexed by keywords yet
                    // (marked for the next sync to read again): neither is its copy.
                    lang: r.lang.as_deref().and_then(Lang::from_code),
                },
            );
        }
        dst.put_notes(&rows)?;
    }
    let mut dims = 0;
    let mut after = i64::MIN;
    loop {
        error::stop_if_interrupted()?;
        let rows = src.passages_after(after, PAGE)?;
        let Some(last) = rows.last() else { break };
        after = last.c;
        let rows: Vec<_> = rows
            .into_iter()
            .map(|p| {
                if let Some(v) = &p.vector {
                    dims = v.len();
                }
                let k = notes.get(&p.note).and_then(|of| {
                    let aliases: Vec<&str> = of.aliases.lines().collect();
                    of.lang
                        .map(|lang| sync::keywords(&of.title, &aliases, lang, &p.heading, &p.text))
                });
                (p, k)
            })
            .collect();
        dst.put_passages(&rows)?;
    }
    drop(notes);
    let mut after = i64::MIN;
    loop {
        error::stop_if_interrupted()?;
        let rows = src.links_after(after, PAGE * 4)?;
        let Some((last, _)) = rows.last() else { break };
        after = *last;
        let rows: Vec<_> = rows.into_iter().map(|(_, l)| l).collect();
        dst.put_links(&rows)?;
    }
    let unread = source.unread()?;
    for (path, size, mtime, why) in &unread {
        target.set_unread(path, (*size, *mtime), Some(why))?;
    }
    error::stop_if_interrupted()?;
    dst.finish_copy(dims)?;
    // Verified before it counts: the target holds what the source holds.
    let counts = |ix: &Index, unread: u64| -> Result<Copied> {
        Ok(Copied {
            notes: ix.notes()?,
            chunks: ix.passages()?,
            embedded: ix.embedded()?,
            links: ix.records().link_count()?,
            unread,
        })
    };
    let want = counts(source, unread.len() as u64)?;
    let got = counts(target, target.unread()?.len() as u64)?;
    if want != got {
        return Err(Error::backend(format!(
            "the copy of knowledge base {} does not hold what the original does (copied {got:?}, original {want:?}); nothing was changed",
            source.name
        ))
        .hint("this is a bug in ai: please report it with the command that failed"));
    }
    error::stop_if_interrupted()?;
    dst.switch_copy(force)?;
    target.commit()?;
    Ok(got)
}
