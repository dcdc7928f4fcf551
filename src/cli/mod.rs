//! The command line: the argument pre-pass clap needs ([`argv`]) and the positional grammar
//! ([`grammar`]), over the clap definitions (`crate::args`) and the tables read from them
//! (`crate::reserved`). Those two sit outside this module, below alias resolution, which needs
//! the reserved words while the grammar needs aliases.

mod argv;
mod grammar;
mod suggest;

pub(crate) use crate::args::*;
/// The one list of reserved words (command words at every depth, `help`, the mode words), read
/// from the clap definitions: never aliases, never chat names.
pub(crate) use crate::reserved::is_reserved;
pub(crate) use argv::{hoist_options, protect_prompts, restore, words_after_dashdash};
pub(crate) use grammar::{ChatRef, Entry, Modes, resolve_words};
