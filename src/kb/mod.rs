//! Knowledge bases: a folder of notes indexed in one SQLite file, searched by keywords (FTS5
//! BM25) and optionally by embeddings, to ground a turn's answer in the user's own notes.
//!
//! - `scan`: which files of the folder are notes (hidden, ignored, binary, large files skipped).
//! - `note`: a note's stable ID, title and ordering; its text normalized for hashing.
//! - `chunk`: a note split into passages under a token budget, along its markdown structure.
//! - `glob`: the small matcher behind `--include`/`--exclude` and `.gitignore` lines.
//! - `embed`: embeddings from the providers that have them (OpenAI-compatible, Azure, Gemini,
//!   Ollama), batched, retried, checked and normalized.
//! - `store`: the SQLite index; `vectors`: its quantized side file for vector search.
//! - `sync`: bringing an index up to date, incrementally; `search`: hybrid search.
//! - `copy`: a base moved to another store as it is (`ai kb copy`).
//! - `ground`: what a grounded turn adds to its prompt.

pub(crate) mod chunk;
pub(crate) mod copy;
pub(crate) mod document;
pub(crate) mod embed;
pub(crate) mod fresh;
mod glob;
pub(crate) mod ground;
pub(crate) mod lang;
pub(crate) mod linked;
pub(crate) mod local;
pub(crate) mod note;
mod progress;
pub(crate) mod rerank;
pub(crate) mod scan;
pub(crate) mod search;
pub(crate) mod store;
pub(crate) mod sync;
pub(crate) mod vectors;

use std::time::Instant;

use crate::config::kb::BaseConfig;
use crate::config::{Config, Home};
use crate::error::{Error, Result};
use crate::output::Ui;

pub(crate) use search::Hit;

/// The registration of knowledge base `name`, or an error listing the ones there are.
pub(crate) fn base<'a>(config: &'a Config, name: &str) -> Result<&'a BaseConfig> {
    config
        .kb
        .bases
        .get(name)
        .ok_or_else(|| unknown(config, name))
}

pub(crate) fn unknown(config: &Config, name: &str) -> Error {
    let known: Vec<&str> = config.kb.bases.keys().map(String::as_str).collect();
    let e = Error::not_found(format!("no knowledge base named {name}"));
    if known.is_empty() {
        e.hint("add one with: ai kb add NAME PATH (--no-kb leaves knowledge bases out of a call)")
    } else {
        e.hint(format!(
            "knowledge bases: {} (ai kb list; add one with: ai kb add NAME PATH; --no-kb leaves them out of a call)",
            known.join(", ")
        ))
    }
}

/// The embedder a sync of `base` uses (from its config).
pub(crate) fn sync_embedder(
    config: &Config,
    base: &BaseConfig,
    ui: &Ui,
) -> Result<Option<embed::Embedder>> {
    match &base.embed {
        Some(spec) => {
            let e = embed::Embedder::new(spec, base.dimensions, config)?
                .with_ui(*ui)
                .with_task(base.task);
            // A local model is loaded (downloaded on first use) before the sync starts.
            e.prepare()?;
            Ok(Some(e))
        }
        None => Ok(None),
    }
}

/// An index opened for searching, with the embedder its vectors came from (as the index
/// records it, whatever the config says now).
pub(crate) struct Searcher {
    pub(crate) index: store::Index,
    pub(crate) embedder: Option<embed::Embedder>,
}

impl Searcher {
    /// When the embedder cannot be made (its provider is gone from the config, its key is
    /// missing), a warning, and the base is searched by keywords.
    pub(crate) fn open(home: &Home, config: &Config, name: &str, ui: &Ui) -> Result<Searcher> {
        let configured = base(config, name)?;
        let index = store::Index::open_base(home, name, configured, false)?;
        if !index.stemmed()? {
            ui.warn(&format!(
                "knowledge base {name} was indexed by an older version of ai: its keywords are searched without stemming until: ai kb sync {name}"
            ));
        } else if index.meta("reindexing")?.is_some() {
            // A sync that indexes the keywords again (a newer version's) stopped before the end.
            ui.warn(&format!(
                "the keywords of knowledge base {name} are being indexed again, and a sync stopped before it finished: notes not yet indexed are not found by their words until: ai kb sync {name}"
            ));
        }
        let embedder = match index.meta("embed")? {
            Some(spec) if index.meta("dimensions")?.is_some() => {
                // The size is sent with a query only when indexing sent it: a model that
                // refuses `dimensions` (ada-002, most vLLM models) must still be searchable.
                // Indexes from before this was recorded: as the config asks.
                let asked = match index.meta("dimensions_asked")? {
                    Some(d) => d.parse().ok(),
                    None => configured.dimensions,
                };
                // A local model's size is its own.
                let asked = asked.filter(|_| !embed::is_local(&spec, config));
                match embed::Embedder::new(&spec, asked, config) {
                    Ok(e) => Some(e.with_ui(*ui).with_task(configured.task)),
                    Err(
                        e @ (Error::Usage { .. } | Error::Config { .. } | Error::NotFound { .. }),
                    ) => {
                        ui.warn(&format!(
                            "{}; searching {name} by keywords only",
                            e.to_string().trim_end_matches('.')
                        ));
                        None
                    }
                    Err(e) => return Err(e),
                }
            }
            _ => None,
        };
        Ok(Searcher { index, embedder })
    }

    /// Hybrid search; when the embedding provider cannot answer, a warning and keywords only
    /// (a grounded turn still gets its notes).
    pub(crate) fn search(
        &self,
        query: &str,
        k: usize,
        deadline: Option<Instant>,
        ui: &Ui,
    ) -> Result<Vec<Hit>> {
        match search::search(&self.index, query, k, self.embedder.as_ref(), deadline) {
            // A query the provider refuses (a usage error: a size it cannot give, a model it
            // does not know) must not end a grounded turn either.
            Err(e @ (Error::Backend { .. } | Error::Usage { .. } | Error::NotFound { .. }))
                if self.embedder.is_some() =>
            {
                ui.warn(&format!(
                    "{}; searching {} by keywords only{}",
                    e.to_string().trim_end_matches('.'),
                    self.index.name,
                    // How to get the model back (`ai kb model pull NAME`), when it says.
                    e.hint_text()
                        .map(|h| format!("\nhint: {h}"))
                        .unwrap_or_default()
                ));
                search::search(&self.index, query, k, None, deadline)
            }
            other => other,
        }
    }
}

/// Search several knowledge bases and keep the `k` best notes overall; with a reranker
/// (`--rerank`, config `kb.rerank`), the best [`rerank::DEPTH`] of them are rescored by it
/// first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn retrieve(
    home: &Home,
    config: &Config,
    names: &[String],
    query: &str,
    k: usize,
    reranker: Option<&rerank::Reranker>,
    deadline: Option<Instant>,
    ui: &Ui,
) -> Result<Vec<Hit>> {
    let depth = if reranker.is_some() {
        k.max(rerank::DEPTH)
    } else {
        k
    };
    let mut all = Vec::new();
    for name in names {
        let s = Searcher::open(home, config, name, ui)?;
        all.extend(s.search(query, depth, deadline, ui)?);
    }
    if names.len() > 1 {
        all.sort_by(|a, b| b.score.total_cmp(&a.score));
        all.truncate(depth);
    }
    if let Some(r) = reranker {
        all = r.rerank(query, all, config, deadline, ui)?;
    }
    all.truncate(k);
    Ok(all)
}

/// The reranker a call uses: `spec` (`--rerank`), else config `kb.rerank`; `off` for none.
pub(crate) fn reranker(
    spec: Option<&str>,
    home: &Home,
    config: &Config,
    ui: &Ui,
) -> Result<Option<rerank::Reranker>> {
    match spec.or(config.kb.rerank.as_deref()).map(str::trim) {
        None | Some("" | "off" | "none") => Ok(None),
        Some(s) => rerank::Reranker::open(s, home, config, ui).map(Some),
    }
}
