//! The plain data a turn starts from and ends with.

use std::time::Duration;

use crate::alias::Route;
use crate::error::{Error, Result};
use crate::present::{Done, Present};
use crate::target::Modes;

/// What one turn sends, and where its answer goes.
pub(crate) struct Turn {
    /// The model named by the call; `None`: the chat's own, or the default.
    pub(crate) route: Option<Route>,
    pub(crate) modes: Modes,
    pub(crate) present: Present,
    /// The new prompt (files, standard input and words, assembled).
    pub(crate) prompt: String,
    /// Title for a new chat (the prompt words, or the first line of the prompt).
    pub(crate) title: String,
    /// Images and PDFs sent with the prompt (`-F photo.png`).
    pub(crate) attachments: Vec<crate::media::Attachment>,
    /// Web pages quoted into the prompt (`-F https://…`), recorded with it.
    pub(crate) pages: Vec<crate::chat::record::AttachmentRec>,
    /// `--schema`: the reply must be JSON that fits it.
    pub(crate) schema: Option<serde_json::Value>,
}

impl Turn {
    /// What the prompt's record says was attached: the images and PDFs, then the web pages.
    pub(crate) fn records(&self) -> Vec<crate::chat::record::AttachmentRec> {
        self.attachments
            .iter()
            .map(crate::attach::record)
            .chain(self.pages.iter().cloned())
            .collect()
    }
}

/// The chat a turn belongs to.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A new chat: a generated ID, or this name.
    New(Option<String>),
    Existing(String),
}

/// A fresh prompt, or the resend of a chat's failed last turn (`ai chat retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Fresh,
    Retry,
}

/// The call's settings a turn uses, settled once from the command line and the config.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// `--system`: a new system prompt (for a chat: from now on).
    pub(crate) system: Option<String>,
    pub(crate) timeout: Duration,
    /// The timeout was asked for (`--timeout`): it wins over a provider's own.
    pub(crate) timeout_given: bool,
    pub(crate) no_wait: bool,
    pub(crate) dry_run: bool,
    /// `--kb` / `--no-kb`.
    pub(crate) kb: crate::kb::ground::Choice,
    /// `--tools`, `--data`, `--tools-file`, `--max-tool-rounds`, read.
    pub(crate) tools: Option<std::sync::Arc<crate::tools::Setup>>,
    /// A turn of `ai -i`, which asks about a full context itself: no warning naming shell
    /// commands.
    pub(crate) in_session: bool,
}

/// How a chat turn ended: its result, and the chat it wrote to (also when it failed).
pub(crate) struct Finished {
    pub(crate) result: Result<Option<Done>>,
    pub(crate) chat: Option<String>,
}

impl Finished {
    pub(super) fn early(e: Error) -> Finished {
        Finished {
            result: Err(e),
            chat: None,
        }
    }
}
