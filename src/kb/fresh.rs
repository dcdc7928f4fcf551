//! Fresh by default: before a grounded turn, a walk of the folder that reads only metadata
//! finds the notes changed since the last sync (new, edited, gone). A few changes are synced
//! at once: their keywords (milliseconds), and their embeddings when the base's model is local
//! (no provider to wait on or pay); with a provider over the network their new passages are
//! found by keywords until `ai kb sync` embeds them. More changes than that: the user is told
//! on stderr how many notes the index does not know yet.

use std::collections::HashMap;

use super::{embed, scan, store, sync};
use crate::config::kb::BaseConfig;
use crate::config::{Config, Home};
use crate::error::{Error, Result};
use crate::output::Ui;

/// Changed notes a turn syncs itself (keywords only); more are left to `ai kb sync`.
pub(crate) const SYNC_AT_ONCE: usize = 50;

/// How many files differ from the index by path, size or mtime (a stat-only walk).
pub(crate) fn changed(home: &Home, name: &str, base: &BaseConfig) -> Result<usize> {
    let filter = scan::Filter::new(&base.include, &base.exclude)?;
    let (entries, skipped) = scan::scan(&base.path, &filter)?;
    let ix = store::Index::open_base(home, name, base, false)?;
    let mut known: HashMap<String, (i64, i64)> = ix.stats_by_path()?;
    // Documents that gave no text are known as they were then.
    for (path, size, mtime, _) in ix.unread()? {
        known.insert(path, (size, mtime));
    }
    let mut n = 0;
    for e in &entries {
        match known.remove(&e.rel) {
            Some((size, mtime)) if size == e.size as i64 && mtime == e.mtime_ns => {}
            _ => n += 1,
        }
    }
    // A note below a folder the walk could not list is kept by a sync, not gone.
    let gone = known.keys().filter(|p| !skipped.unlisted_covers(p)).count();
    Ok(n + gone)
}

/// Before a grounded turn: sync a base when few of its notes changed (embedding them when its
/// model is local), else say how many changed. Never fails the turn: a check that cannot run is
/// a warning.
pub(crate) fn refresh(home: &Home, config: &Config, name: &str, base: &BaseConfig, ui: &Ui) {
    let n = match changed(home, name, base) {
        Ok(0) => return,
        Ok(n) => n,
        Err(e) => {
            ui.warn(&format!("cannot check {name} for changed notes: {e}"));
            return;
        }
    };
    if n <= SYNC_AT_ONCE {
        let quiet = Ui::new(true);
        let synced = match &base.embed {
            None => sync::run(home, name, base, None, false, &quiet).map(|_| true),
            Some(spec) if embed::is_local(spec, config) => {
                crate::kb::sync_embedder(config, base, &quiet).and_then(|e| {
                    sync::run(home, name, base, e.as_ref(), false, &quiet).map(|_| true)
                })
            }
            Some(_) => crate::kb::sync_embedder(config, base, &quiet).and_then(|e| match e {
                Some(e) => sync::run_keywords(home, name, base, &e, &quiet).map(|c| {
                    if c.added + c.updated > 0 {
                        ui.notice(&format!(
                            "ai: {} note{} of {name} synced by keywords; their embeddings wait for: ai kb sync {name}",
                            c.added + c.updated,
                            if c.added + c.updated == 1 { "" } else { "s" }
                        ));
                    }
                    true
                }),
                None => Ok(false),
            }),
        };
        match synced {
            Ok(true) => return,
            Ok(false) => {}
            // Another sync is at it: it brings the changes.
            Err(Error::Busy { .. }) => return,
            Err(e) => ui.warn(&format!("cannot sync {name}: {e}")),
        }
    }
    ui.notice(&format!(
        "ai: {n} note{} changed since the last sync of {name} (ai kb sync {name})",
        if n == 1 { "" } else { "s" }
    ));
}
