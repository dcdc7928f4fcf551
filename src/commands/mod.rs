//! The management commands: `init`, `list`, `default`, `completions`, the chat commands and the knowledge-base commands.

pub(crate) mod chat;
pub(crate) mod compact;
pub(crate) mod completions;
pub(crate) mod default;
pub(crate) mod export;
pub(crate) mod init;
pub(crate) mod kb;
pub(crate) mod list;
pub(crate) mod prompt;
pub(crate) mod retry;
pub(crate) mod usage;
