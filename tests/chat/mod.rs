//! Integration tests for persistent chats: the built `ai` binary, run hermetically (a temporary
//! `AI_CLI_HOME` and `HOME`, a cleared environment, fake backend CLIs on the child's PATH only),
//! checked by its exit codes, its outputs and the chat files it leaves. The worlds come from
//! `tests/support` (`Env::echo`, or `Env::empty` plus `env.fake(…)`).

mod concurrency;
mod crash;
mod engine;
mod grammar;
mod hostile2;
mod legacy;
mod legacy_keep;
mod listing;
mod long;
mod manage;
mod review;
mod safety;
mod storage;
mod window;
