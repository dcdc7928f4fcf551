//! Where a prompt goes and what it asks for: the types a model word and the mode words resolve
//! to. Plain data, below alias resolution and the grammar (which make them) and the backends
//! (which use them).

/// The backend CLIs `ai` knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cli {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Ollama,
}

impl Cli {
    pub(crate) const ALL: [Cli; 5] = [Cli::Claude, Cli::Codex, Cli::Gemini, Cli::Qwen, Cli::Ollama];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::Qwen => "qwen",
            Cli::Ollama => "ollama",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Cli> {
        Cli::ALL.into_iter().find(|c| c.name() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Provider {
    Cli(Cli),
    /// A CLI declared under `backends` in config.
    Custom(String),
    /// An HTTP API (built in, or declared under "providers" in config).
    Http(String),
    Echo,
}

impl Provider {
    pub(crate) fn name(&self) -> &str {
        match self {
            Provider::Cli(c) => c.name(),
            Provider::Custom(n) => n,
            Provider::Http(n) => n,
            Provider::Echo => "echo",
        }
    }
}

/// Where a prompt goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// What the user typed (`sonnet`, `claude:opus`, `opus@high`).
    pub(crate) label: String,
    pub(crate) provider: Provider,
    pub(crate) model: String,
    /// `@effort` suffix, for the CLIs that take one.
    pub(crate) effort: Option<String>,
}

/// Mode words (`json`, `yolo`, …) and their flags: what a request asks of its backend.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Modes {
    pub(crate) json: bool,
    pub(crate) yolo: bool,
    /// `cmd`: the reply is one shell command.
    pub(crate) cmd: bool,
    /// `run`: as `cmd`, then run it.
    pub(crate) run: bool,
}

/// How a model is asked for JSON (the `json` word) where its API has no switch for it.
pub(crate) const JSON_ASK: &str = "Answer with one valid JSON value and nothing else.";
