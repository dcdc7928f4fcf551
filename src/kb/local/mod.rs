//! Local embedding models (`--embed local`, `local:NAME`, `local:/path/to/model-dir`): no
//! server, no key. Two families, both read from the Hugging Face layout (`config.json`,
//! `tokenizer.json`, `model.safetensors`):
//!
//! - `static_model`: model2vec token-vector tables, mean pooled;
//! - `bert` (cargo feature `bert`, on by default): BERT-family sentence transformers, a real
//!   transformer forward pass with mean or CLS pooling as the model's `1_Pooling` says.
//!
//! `hub` knows the built-in names and fetches their files into `<home>/models/`.
//! A batch is split over all cores; each thread embeds its share one text at a time, so memory
//! stays bounded by one batch of texts and one text's activations per thread.

#[cfg(feature = "bert")]
pub(crate) mod bert;
#[cfg(feature = "bert")]
pub(crate) mod cross;
pub(crate) mod hub;
pub(crate) mod service;
mod static_model;
pub(crate) mod weights;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokenizers::Tokenizer;

use crate::error::{Error, Result};
use crate::output::Ui;
use crate::signal;

/// What a loaded model computes.
enum Family {
    Static(static_model::StaticModel),
    #[cfg(feature = "bert")]
    Bert(bert::SentenceModel),
}

/// Whether a model folder's config.json describes a static model (model2vec: a table of token
/// vectors, no transformer layers).
pub(crate) fn is_static_config(config: &serde_json::Value) -> bool {
    let model_type = config
        .get("model_type")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    model_type == "model2vec"
        || config.get("hidden_dim").is_some() && config.get("num_hidden_layers").is_none()
}

/// A local model loaded from its folder, ready to embed.
pub(crate) struct LocalModel {
    family: Family,
    dims: usize,
    /// Prefixes the model was trained with (e5: `query: ` / `passage: `).
    query_prefix: String,
    passage_prefix: String,
    /// The most tokens one input may hold.
    max_tokens: usize,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("dims", &self.dims)
            .field("family", &self.family_name())
            .finish_non_exhaustive()
    }
}

/// Which texts the caller embeds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Role {
    Passage,
    Query,
}

impl LocalModel {
    /// Load the model in `dir` (a folder in the Hub layout). Every way a folder can be unusable
    /// (a file missing, a damaged file, a tokenizer of another model) is an error with a hint.
    pub(crate) fn load(dir: &Path, spec: &str) -> Result<LocalModel> {
        let (config, tokenizer) = open_folder(dir, spec)?;
        let is_static = is_static_config(&config);
        let (query_prefix, passage_prefix) = prefixes(dir, spec);
        if is_static {
            let m = static_model::StaticModel::load(dir, tokenizer)?;
            return Ok(LocalModel {
                dims: m.dims(),
                family: Family::Static(m),
                query_prefix,
                passage_prefix,
                max_tokens: 512,
            });
        }
        #[cfg(feature = "bert")]
        {
            let m = bert::SentenceModel::load(dir, &config, tokenizer)?;
            Ok(LocalModel {
                dims: m.dims(),
                max_tokens: m.max_tokens(),
                family: Family::Bert(m),
                query_prefix,
                passage_prefix,
            })
        }
        #[cfg(not(feature = "bert"))]
        {
            let _ = tokenizer;
            let model_type = config
                .get("model_type")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_ascii_lowercase();
            Err(Error::usage(format!(
                "{} holds a {} model; this build of ai reads only static (model2vec) models",
                dir.display(),
                if model_type.is_empty() { "transformer" } else { &model_type }
            ))
            .hint("install ai with its default features (the `bert` feature) for transformer models, or use --embed local:potion-multilingual-128M"))
        }
    }

    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// The most tokens one input may hold.
    pub(crate) fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    pub(crate) fn family_name(&self) -> &'static str {
        match self.family {
            Family::Static(_) => "static",
            #[cfg(feature = "bert")]
            Family::Bert(_) => "bert",
        }
    }

    /// Texts per batch a sync hands over: a static model is cheap per text.
    pub(crate) fn batch(&self) -> usize {
        match self.family {
            Family::Static(_) => 1024,
            #[cfg(feature = "bert")]
            Family::Bert(_) => 64,
        }
    }

    /// One text's vector, L2-normalized.
    pub(crate) fn embed_one(&self, text: &str, role: Role) -> Result<Vec<f32>> {
        let prefix = match role {
            Role::Query => &self.query_prefix,
            Role::Passage => &self.passage_prefix,
        };
        let owned;
        let text = if prefix.is_empty() {
            text
        } else {
            owned = format!("{prefix}{text}");
            &owned
        };
        let mut v = match &self.family {
            Family::Static(m) => m.embed(text)?,
            #[cfg(feature = "bert")]
            Family::Bert(m) => m.embed(text)?,
        };
        // Finite weights can still overflow in a forward pass: a NaN vector never reaches an
        // index, where it would rank every note equal.
        if !v.iter().all(|x| x.is_finite()) {
            return Err(Error::backend(
                "the local model computed NaN or infinite values for a passage",
            )
            .hint("its weights are damaged or not of an embedding model: download it again, or use another model"));
        }
        crate::kb::vectors::normalize(&mut v);
        Ok(v)
    }

    /// Vectors for `texts`, in order, computed on all cores. Ctrl+C → `Error::Interrupted`
    /// between texts.
    pub(crate) fn embed(&self, texts: &[&str], role: Role) -> Result<Vec<Vec<f32>>> {
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(texts.len())
            .max(1);
        if threads == 1 {
            return texts.iter().map(|t| self.one(t, role)).collect();
        }
        let per = texts.len().div_ceil(threads);
        let parts: Vec<Result<Vec<Vec<f32>>>> = std::thread::scope(|s| {
            let handles: Vec<_> = texts
                .chunks(per)
                .map(|part| s.spawn(move || part.iter().map(|t| self.one(t, role)).collect()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::backend("a thread computing embeddings stopped"))
                    })
                })
                .collect()
        });
        let mut out = Vec::with_capacity(texts.len());
        for p in parts {
            out.extend(p?);
        }
        Ok(out)
    }

    fn one(&self, text: &str, role: Role) -> Result<Vec<f32>> {
        if signal::interrupted() {
            return Err(Error::Interrupted);
        }
        self.embed_one(text, role)
    }
}

/// A model folder's `config.json` and tokenizer, after checking that its three files are
/// there. Every way a folder can be unusable is an error with a hint.
pub(crate) fn open_folder(dir: &Path, spec: &str) -> Result<(serde_json::Value, Tokenizer)> {
    if !dir.is_dir() {
        return Err(
            Error::not_found(format!("no model folder at {}", dir.display()))
                .hint(manual_hint(spec)),
        );
    }
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        if !dir.join(file).is_file() {
            return Err(
                Error::usage(format!("the model folder {} has no {file}", dir.display()))
                    .hint(manual_hint(spec)),
            );
        }
    }
    let config = read_json(&dir.join("config.json"))?;
    let tok_path = dir.join("tokenizer.json");
    let tok_bytes = read_capped(&tok_path, MAX_TOKENIZER)?;
    let tokenizer = Tokenizer::from_bytes(&tok_bytes).map_err(|e| {
        Error::usage(format!(
            "{} is not a tokenizer ai can read: {}",
            dir.join("tokenizer.json").display(),
            crate::fmt::one_line(&e.to_string(), 200)
        ))
        .hint(manual_hint(spec))
    })?;
    Ok((config, tokenizer))
}

/// The query and passage prefixes: from `config_sentence_transformers.json`'s prompts when the
/// folder has them, else e5's for models named e5.
fn prefixes(dir: &Path, spec: &str) -> (String, String) {
    if let Ok(v) = read_json(&dir.join("config_sentence_transformers.json"))
        && let Some(p) = v.get("prompts").and_then(|p| p.as_object())
    {
        let get = |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or("").to_owned();
        let q = get("query");
        let d = if p.contains_key("passage") {
            get("passage")
        } else {
            get("document")
        };
        if !q.is_empty() || !d.is_empty() {
            return (q, d);
        }
    }
    let name = format!(
        "{spec} {}",
        dir.file_name().unwrap_or_default().to_string_lossy()
    )
    .to_ascii_lowercase();
    let e5 = name.contains("-e5-") || name.contains("/e5-") || name.contains(" e5-");
    if e5 {
        ("query: ".into(), "passage: ".into())
    } else {
        (String::new(), String::new())
    }
}

/// The largest `tokenizer.json` read (real ones take up to about 35 MB).
pub(crate) const MAX_TOKENIZER: u64 = 100_000_000;
/// The largest `config.json` (and other small JSON file of a model) read.
pub(crate) const MAX_CONFIG: u64 = 1_000_000;

/// A file's bytes, refused with a hint when it is larger than `max` (checked while reading, so
/// a file that grows or a device that never ends cannot exhaust memory).
pub(crate) fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| Error::io("read", path, e))?;
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", path, e))?;
    if bytes.len() as u64 > max {
        return Err(Error::usage(format!(
            "{} is larger than the {} such a file may take",
            path.display(),
            human(max)
        ))
        .hint("it is not a file of a local embedding model: download the model again (ai kb model pull NAME), or replace the file"));
    }
    Ok(bytes)
}

pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value> {
    let bytes = read_capped(path, MAX_CONFIG)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::usage(format!("{} is not valid JSON: {e}", path.display()))
            .hint("it may be damaged: download the model again (ai kb model pull NAME)")
    })
}

/// How to get a model by hand.
pub(crate) fn manual_hint(spec: &str) -> String {
    let name = spec.strip_prefix("local:").unwrap_or(spec);
    match hub::builtin(name) {
        Some(b) => format!(
            "download it with: ai kb model pull {}; or by hand: put config.json, tokenizer.json and model.safetensors of https://huggingface.co/{} into a folder and use --embed local:/that/folder",
            b.name, b.repo
        ),
        None => "a model folder needs config.json, tokenizer.json and model.safetensors from the model's page on huggingface.co; use it with --embed local:/that/folder".to_owned(),
    }
}

/// What `local…` in an `--embed` spec names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A built-in name (its Hub repo and pinned files).
    Builtin(&'static hub::Builtin),
    /// Another Hub repo, `owner/name`, taken as is.
    Repo(String),
    /// A folder on disk.
    Folder(PathBuf),
}

impl Source {
    /// `rest` is what follows `local:` (empty for plain `local`).
    pub(crate) fn parse(rest: &str) -> Result<Source> {
        let rest = rest.trim();
        if rest.is_empty() {
            return Ok(Source::Builtin(hub::default_model()));
        }
        if rest.starts_with('/') || rest.starts_with('.') || rest.starts_with('~') {
            let path = match rest.strip_prefix("~/") {
                Some(tail) => dirs::home_dir().unwrap_or_default().join(tail),
                None => PathBuf::from(rest),
            };
            let path = std::path::absolute(&path).unwrap_or(path);
            return Ok(Source::Folder(path));
        }
        if let Some(b) = hub::builtin(rest) {
            return Ok(Source::Builtin(b));
        }
        let valid = |s: &str| {
            !s.is_empty()
                && !s.starts_with('.')
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        match rest.split_once('/') {
            Some((owner, name)) if valid(owner) && valid(name) => Ok(Source::Repo(rest.to_owned())),
            _ => Err(Error::not_found(format!(
                "no built-in local model named '{}'",
                crate::fmt::one_line(rest, 80)
            ))
            .hint(format!(
                "built-in: {} (ai kb model list); or a Hub repo OWNER/NAME, or a folder: --embed local:/path/to/model",
                hub::BUILTIN.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// The spec a knowledge base records: `local:NAME`, `local:OWNER/NAME` or `local:/abs/path`.
    pub(crate) fn spec(&self) -> String {
        match self {
            Source::Builtin(b) => format!("local:{}", b.name),
            Source::Repo(r) => format!("local:{r}"),
            Source::Folder(p) => format!("local:{}", p.display()),
        }
    }

    /// Where a Hub model lives once downloaded (`None` for a folder).
    pub(crate) fn hub_dir(&self, home: &Path) -> Option<PathBuf> {
        match self {
            Source::Builtin(b) => Some(hub::model_dir(home, b.repo)),
            Source::Repo(r) => Some(hub::model_dir(home, r)),
            Source::Folder(_) => None,
        }
    }

    /// The model, loaded once per process and shared (`ai serve`, `ai mcp` and `ai -i` embed
    /// every grounded turn's query with the model the first one loaded), downloaded first when
    /// it is a Hub model not yet on disk. Loaded again only when its files changed on disk (a
    /// new pull, an edited folder).
    pub(crate) fn shared(&self, home: &Path, ui: &Ui) -> Result<Arc<LocalModel>> {
        let dir = match self {
            Source::Folder(p) => p.clone(),
            Source::Builtin(_) | Source::Repo(_) => hub::ensure(home, self, ui)?,
        };
        let stamp = Stamp::of(&dir);
        // Held while loading: two threads wanting one model load it once.
        let mut loaded = LOADED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, _, m)) = loaded
            .iter()
            .find(|(d, s, _)| *d == dir && stamp.as_ref() == Some(s))
        {
            return Ok(Arc::clone(m));
        }
        let model = Arc::new(LocalModel::load(&dir, &self.spec())?);
        let n = LOADS.fetch_add(1, Ordering::SeqCst) + 1;
        if debug_loads() {
            ui.notice(&format!(
                "ai: debug: loaded local model {} ({} in this process)",
                self.spec(),
                if n == 1 {
                    "first load".to_owned()
                } else {
                    format!("load {n}")
                }
            ));
        }
        loaded.retain(|(d, _, _)| *d != dir);
        if let Some(stamp) = stamp {
            loaded.push((dir, stamp, Arc::clone(&model)));
        }
        Ok(model)
    }
}

/// The models this process has loaded, by folder, with the state of their files then.
static LOADED: Mutex<Vec<(PathBuf, Stamp, Arc<LocalModel>)>> = Mutex::new(Vec::new());
/// How many times this process has loaded a local model (shown with `AI_DEBUG=models`).
static LOADS: AtomicUsize = AtomicUsize::new(0);

/// `AI_DEBUG` names `models`: say on stderr each time a local model is loaded.
fn debug_loads() -> bool {
    std::env::var("AI_DEBUG").is_ok_and(|v| {
        v.split(',')
            .any(|w| w.trim().eq_ignore_ascii_case("models"))
    })
}

/// The size and modification time of a model folder's files: a loaded model is reused only
/// while they are unchanged.
#[derive(PartialEq, Eq, Debug)]
struct Stamp(Vec<(u64, Option<std::time::SystemTime>)>);

impl Stamp {
    fn of(dir: &Path) -> Option<Stamp> {
        let files = [
            "config.json",
            "tokenizer.json",
            "model.safetensors",
            "1_Pooling/config.json",
            "config_sentence_transformers.json",
            "sentence_bert_config.json",
        ];
        let mut out = Vec::with_capacity(files.len());
        for (i, f) in files.iter().enumerate() {
            match std::fs::metadata(dir.join(f)) {
                Ok(m) => out.push((m.len(), m.modified().ok())),
                Err(_) if i >= 3 => out.push((0, None)),
                Err(_) => return None,
            }
        }
        Some(Stamp(out))
    }
}

#[cfg(test)]
pub(crate) mod tests;

/// A byte count for people: 31 MB, 1.2 GB.
pub(crate) fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kB", b / 1e3)
    } else {
        format!("{bytes} bytes")
    }
}
