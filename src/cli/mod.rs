//! The command line: clap definitions ([`args`]), the tables read from them ([`tables`]), the
//! argument pre-pass clap needs ([`argv`]) and the positional grammar ([`grammar`]).

mod args;
mod argv;
mod grammar;
mod tables;

pub(crate) use args::*;
pub(crate) use argv::{hoist_options, protect_prompts, restore, words_after_dashdash};
pub(crate) use grammar::{ChatRef, Entry, Modes, resolve_words};
pub(crate) use tables::is_reserved;
// The one list of reserved words, for the chat store's names (chat/store.rs still keeps its own
// `RESERVED_NAMES`; it should call `cli::is_reserved` instead).
#[allow(unused_imports)]
pub(crate) use tables::reserved_words;
