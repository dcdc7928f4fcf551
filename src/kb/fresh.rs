//! Fresh by default: before a grounded turn, a walk of the folder that reads only metadata
//! finds the notes changed since the last sync (new, edited, gone). A few changes in a base
//! without embeddings are synced at once (keywords cost milliseconds); otherwise the user is
//! told on stderr how many notes the index does not know yet.

use std::collections::HashMap;

use super::{scan, store, sync};
use crate::config::Home;
use crate::config::kb::BaseConfig;
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

/// Before a grounded turn: sync a base without embeddings when few of its notes changed, else
/// say how many changed. Never fails the turn: a check that cannot run is a warning.
pub(crate) fn refresh(home: &Home, name: &str, base: &BaseConfig, ui: &Ui) {
    let n = match changed(home, name, base) {
        Ok(0) => return,
        Ok(n) => n,
        Err(e) => {
            ui.warn(&format!("cannot check {name} for changed notes: {e}"));
            return;
        }
    };
    if base.embed.is_none() && n <= SYNC_AT_ONCE {
        match sync::run(home, name, base, None, false, &Ui::new(true)) {
            Ok(_) => return,
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
