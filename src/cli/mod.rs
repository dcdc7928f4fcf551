//! The command line: clap definitions ([`args`]), the tables read from them ([`tables`]), the
//! argument pre-pass clap needs ([`argv`]) and the positional grammar ([`grammar`]).

mod args;
mod argv;
mod grammar;
mod tables;

pub(crate) use args::*;
pub(crate) use argv::{hoist_options, protect_prompts, restore, words_after_dashdash};
pub(crate) use grammar::{ChatRef, Entry, Modes, resolve_words};
/// The one list of reserved words (command words at every depth, `help`, the mode words), read
/// from the clap definitions: never aliases, never chat names.
pub(crate) use tables::is_reserved;
