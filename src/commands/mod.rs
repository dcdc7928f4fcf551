//! The management commands: `init`, `list`, `default`, `completions`.

pub(crate) mod chat;
pub(crate) mod completions;
pub(crate) mod default;
pub(crate) mod export;
pub(crate) mod init;
pub(crate) mod list;
