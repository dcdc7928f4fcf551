//! Persistent chats: the file format, the store, the window.

pub(crate) mod file;
pub(crate) mod id;
pub(crate) mod legacy;
pub(crate) mod lock;
pub(crate) mod open;
pub(crate) mod parse;
pub(crate) mod read;
pub(crate) mod record;
pub(crate) mod scan;
pub(crate) mod search;
pub(crate) mod store;
pub(crate) mod window;
