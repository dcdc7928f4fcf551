//! Knowledge bases: a folder of notes indexed in one SQLite file, searched by keywords (FTS5
//! BM25) and optionally by embeddings, to ground a turn's answer in the user's own notes.
//!
//! - `scan`: which files of the folder are notes (hidden, ignored, binary, large files skipped).
//! - `note`: a note's stable ID, title and ordering; its text normalized for hashing.
//! - `chunk`: a note split into passages under a token budget, along its markdown structure.
//! - `embed`: vectors for passages and queries from the HTTP providers (OpenAI and compatible,
//!   Azure, Gemini, Ollama), batched, retried and checked.

// Called by the kb commands and the sync, which are written alongside it.
#[allow(dead_code)]
pub(crate) mod embed;
