//! The integration suite, one test binary: each test runs the built `ai` in a temp world with
//! fake backend CLIs or a scripted HTTP server (see `support/mod.rs` for how to write one). The
//! modules live in folders below `tests/`, so Cargo does not take each of them for a test binary
//! of its own.

/// The one test support module: world, command builder, fakes, chats, HTTP server, pty.
mod support;

#[path = "suite/attach.rs"]
mod attach;
#[path = "suite/attach_retry.rs"]
mod attach_retry;
#[path = "suite/attach_web.rs"]
mod attach_web;
#[path = "suite/backends.rs"]
mod backends;
#[path = "suite/cli_streams.rs"]
mod cli_streams;
#[path = "suite/cli_streams_hostile.rs"]
mod cli_streams_hostile;
#[path = "suite/commands.rs"]
mod commands;
#[path = "suite/completions.rs"]
mod completions;
#[path = "suite/config.rs"]
mod config;
#[path = "suite/config_check.rs"]
mod config_check;
#[path = "suite/config_file.rs"]
mod config_file;
#[path = "suite/errors.rs"]
mod errors;
#[path = "suite/everyday.rs"]
mod everyday;
#[path = "suite/files.rs"]
mod files;
#[path = "suite/guard.rs"]
mod guard;
#[path = "suite/hostile_bounds.rs"]
mod hostile_bounds;
#[path = "suite/hostile_signals.rs"]
mod hostile_signals;
#[path = "suite/kb.rs"]
mod kb;
#[path = "suite/kb_copy.rs"]
mod kb_copy;
#[path = "suite/kb_embed.rs"]
mod kb_embed;
#[path = "suite/kb_files.rs"]
mod kb_files;
#[path = "suite/kb_hostile.rs"]
mod kb_hostile;
#[path = "suite/kb_notes.rs"]
mod kb_notes;
#[path = "suite/kb_pg.rs"]
mod kb_pg;
#[path = "suite/kb_rerank.rs"]
mod kb_rerank;
#[path = "suite/layering.rs"]
mod layering;
#[path = "suite/local_hostile.rs"]
mod local_hostile;
#[path = "suite/local_models.rs"]
mod local_models;
#[path = "suite/mcp_serve.rs"]
mod mcp_serve;
#[path = "suite/modes.rs"]
mod modes;
#[path = "suite/process.rs"]
mod process;
#[path = "suite/prompts.rs"]
mod prompts;
#[path = "suite/run_confirm.rs"]
mod run_confirm;
#[path = "suite/saved_prompts.rs"]
mod saved_prompts;
#[path = "suite/schema.rs"]
mod schema;
#[path = "suite/serve.rs"]
mod serve;
#[path = "suite/serve_browser.rs"]
mod serve_browser;
#[path = "suite/serve_browser_faces.rs"]
mod serve_browser_faces;
#[path = "suite/serve_limits.rs"]
mod serve_limits;
#[path = "suite/serve_page.rs"]
mod serve_page;
#[path = "suite/serve_stream.rs"]
mod serve_stream;
#[path = "suite/session.rs"]
mod session;
#[path = "suite/session_commands.rs"]
mod session_commands;
#[path = "suite/several.rs"]
mod several;
#[path = "suite/terminal.rs"]
mod terminal;
#[path = "suite/tools_json.rs"]
mod tools_json;
#[path = "suite/words.rs"]
mod words;

/// Persistent chats (`tests/chat/`).
mod chat;

/// HTTP providers against a scripted server on 127.0.0.1 (`tests/http/`).
mod http;
