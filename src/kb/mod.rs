//! Knowledge bases: a folder of notes indexed in one SQLite file, searched by keywords (FTS5
//! BM25) and optionally by embeddings, to ground a turn's answer in the user's own notes.
//!
//! - `scan`: which files of the folder are notes (hidden, ignored, binary, large files skipped).
//! - `note`: a note's stable ID, title and ordering; its text normalized for hashing.
//! - `chunk`: a note split into passages under a token budget, along its markdown structure.
//! - `glob`: the small matcher behind `--include`/`--exclude` and `.gitignore` lines.

// The sync engine (store, sync, search) calls these; until it is wired, parts look unused.
#![allow(dead_code)]

pub(crate) mod chunk;
mod glob;
pub(crate) mod note;
pub(crate) mod scan;
