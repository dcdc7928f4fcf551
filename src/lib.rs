//! `ai`: one short command for every AI model.
//!
//! The whole program lives in this library so that the fuzz targets (`fuzz/`) can reach its
//! parsers; `main.rs` only calls [`main`]. Nothing here is a stable API.
//!
//! One process runs one call (review R2-2). Three things are process-wide on purpose and are
//! set only at the start of a call or by the call's own turn: `--json-stream` mode
//! (`output::set_json_stream`), the chat the call writes to (`output::set_call_chat`, named by
//! the `--json-stream` error line) and the signal state (`signal`). `ai a b c "…"` runs its
//! turns on threads (`several.rs`): each sets the call's chat, the last one winning, which is
//! harmless only because the one reader, `--json-stream`, refuses several models (tested in
//! `tests/suite/several.rs`). A host that needs more than one turn at a time runs
//! `ai --json-stream` children, as `ai serve` does; an in-process host would first have to
//! pass these down a turn instead.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod alias;
mod args;
mod attach;
mod backend;
mod builtin;
mod call;
mod chat;
mod cli;
mod commands;
mod compact;
mod config;
mod context;
mod conversation;
mod ctx;
mod error;
mod fmt;
#[doc(hidden)]
pub mod fuzz;
mod input;
mod kb;
mod mcp;
mod mdterm;
mod media;
mod modes;
mod output;
mod present;
mod prices;
mod prompts;
mod reserved;
mod route;
mod sanitize;
mod schema;
mod serve;
mod session;
mod several;
mod signal;
mod target;
mod tools;
mod turn;
mod usage;
mod web;

use crate::cli::{ChatAction, Cli, Command, Entry};
use crate::error::Result;
use crate::output::Ui;

/// Run `ai` with the process's arguments; returns the exit code.
pub fn main() -> i32 {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `ai __complete models|chats`: candidates for the completion scripts. Kept out of clap, so
    // the scripts clap writes never offer it.
    if args.get(1).is_some_and(|a| a == "__complete") {
        let kind = args
            .get(2)
            .map(|k| k.to_string_lossy().into_owned())
            .unwrap_or_default();
        let done = match kind.as_str() {
            "chats" => ctx::Ctx::load(true).and_then(|ctx| commands::chat::complete(&ctx)),
            _ => commands::completions::complete(&kind),
        };
        return i32::from(done.is_err());
    }
    // `ai __pdf-text`: the bounded child that reads a PDF for a knowledge base.
    if args.get(1).is_some_and(|a| a == "__pdf-text") {
        return kb::document::pdf_child();
    }
    // Bare `ai` at a terminal: there is nothing to send; show what can be done.
    if args.len() == 1 && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        let help = <Cli as clap::CommandFactory>::command().render_help();
        let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{help}"));
        return error::code::USAGE;
    }
    let literal = cli::words_after_dashdash(&args);
    let (args, hidden) = cli::protect_prompts(args);
    let mut cli = parse(args);
    if !hidden.is_empty() {
        restore_words(&mut cli, &hidden);
    }
    signal::install();
    match run(cli, literal) {
        Ok(()) => 0,
        Err(err) => {
            if !matches!(
                err,
                error::Error::BrokenPipe | error::Error::Interrupted | error::Error::Exit(_)
            ) {
                output::print_error(&err);
            } else if matches!(err, error::Error::Interrupted) {
                // Nothing is said on stderr, but a program reading --json-stream learns it.
                output::print_error_line(&err);
            }
            err.exit_code()
        }
    }
}

/// `Cli::parse_from` after the argv pre-pass (`hoist_options`), with one clap command built
/// for both and for the reserved-word tables: building it costs as much as the rest of
/// `ai echo` together. Errors print and exit as `parse_from`'s do.
fn parse(args: Vec<std::ffi::OsString>) -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let cmd = Cli::command();
    reserved::seed(&cmd);
    let args = cli::hoist_options(&cmd, args);
    let mut matches = cmd.get_matches_from(&args);
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut Cli::command()).exit())
}

fn run(cli: Cli, words_after_dashdash: usize) -> Result<()> {
    let literal_from = |words: &[String]| words.len().saturating_sub(words_after_dashdash);
    let ui = Ui::new(cli.call.quiet);
    match cli.command {
        // `-i`: a session of turns (nothing of its line editor runs otherwise).
        None if cli.call.interactive => session::run(
            continued(Entry::Top, &cli.call)?,
            &cli.call,
            &cli.words,
            literal_from(&cli.words),
        ),
        Some(Command::Chat {
            action: None,
            call,
            words,
        }) if call.interactive => session::run(
            continued(Entry::Chat, &call)?,
            &call,
            &words,
            literal_from(&words),
        ),
        Some(Command::Reply { call, words }) if call.interactive => {
            session::run(Entry::Reply, &call, &words, literal_from(&words))
        }
        None => call::run(
            continued(Entry::Top, &cli.call)?,
            &cli.call,
            &cli.words,
            literal_from(&cli.words),
        ),
        // Options written before a command word were moved after it (`cli::hoist_options`), so
        // a command's options are its own; only the global `-q` is also seen at the top.
        Some(Command::Chat {
            action: None,
            call,
            words,
        }) => call::run(
            continued(Entry::Chat, &call)?,
            &call,
            &words,
            literal_from(&words),
        ),
        Some(Command::Chat {
            action: Some(action),
            ..
        }) => chat_command(action, cli.call.quiet),
        Some(Command::Reply { call, words }) => {
            call::run(Entry::Reply, &call, &words, literal_from(&words))
        }
        Some(Command::Init) => commands::init::run(),
        Some(Command::List { json, providers }) => commands::list::run(json, providers),
        Some(Command::Default { alias, clear }) => {
            commands::default::run(alias.as_deref(), clear, &ui)
        }
        Some(Command::Completions { shell }) => commands::completions::run(shell),
        Some(Command::Usage { since, by, json }) => commands::usage::run(since, by, json, &ui),
        Some(Command::Kb { action }) => commands::kb::run(action, cli.call.quiet),
        Some(Command::Prompt { action }) => commands::prompt::run(action, cli.call.quiet),
        Some(Command::Mcp {
            kb,
            no_kb,
            models,
            no_ask,
            no_chats,
            timeout,
        }) => mcp::run(&mcp::Options {
            kb,
            no_kb,
            models,
            no_ask,
            no_chats,
            timeout,
        }),
        Some(Command::Serve {
            port,
            host,
            token,
            no_auth,
            max_calls,
            max_connections,
            call_timeout,
            idle_timeout,
            max_output,
        }) => serve::run(
            serve::Options {
                host,
                port,
                token,
                no_auth,
                limits: serve::Limits {
                    max_calls: max_calls as usize,
                    max_connections: max_connections as usize,
                    call_timeout,
                    idle_timeout,
                    max_output: usize::try_from(max_output).unwrap_or(usize::MAX),
                },
            },
            &ui,
        ),
    }
}

/// `-c`/`--continue` makes a call continue the most recent chat, as `ai reply` does; with
/// `ai chat` (which names a chat, or starts one) it is a contradiction.
fn continued(entry: Entry, call: &cli::CallArgs) -> Result<Entry> {
    if !call.continue_last {
        return Ok(entry);
    }
    match entry {
        Entry::Chat => Err(error::Error::usage(
            "-c continues the most recent chat, and `ai chat` names a chat or starts one",
        )
        .hint("leave out one of them: ai -c \"…\" or ai chat ID \"…\"")),
        Entry::Top | Entry::Reply => Ok(Entry::Reply),
    }
}

/// Put prompt arguments that start with `-` back where clap saw placeholders.
fn restore_words(cli: &mut Cli, hidden: &[String]) {
    cli::restore(&mut cli.words, hidden);
    match &mut cli.command {
        Some(Command::Chat {
            action: Some(ChatAction::Rename { title, .. }),
            ..
        }) => cli::restore(title, hidden),
        Some(Command::Chat {
            action: Some(ChatAction::Search { text, .. }),
            ..
        }) => cli::restore(text, hidden),
        Some(Command::Chat { words, .. } | Command::Reply { words, .. }) => {
            cli::restore(words, hidden)
        }
        _ => {}
    }
}

fn chat_command(action: ChatAction, quiet: bool) -> Result<()> {
    use commands::chat;
    if let ChatAction::Retry { id, model, call } = action {
        if call.continue_last {
            return Err(error::Error::usage("-c cannot be used with `chat retry`")
                .hint("name the chat: ai chat retry ID"));
        }
        if call.prompting.saved_prompt.is_some() || call.prompting.schema.is_some() {
            return Err(
                error::Error::usage("-p and --schema cannot be used with `chat retry`")
                    .hint("a retry resends the prompt as it was saved"),
            );
        }
        return commands::retry::run(&call, &id, model.as_deref());
    }
    let ctx = ctx::Ctx::load(quiet)?;
    match action {
        ChatAction::List { json, limit } => chat::list(&ctx, json, limit),
        ChatAction::Search { text, json, limit } => {
            chat::search(&ctx, &text.join(" "), json, limit)
        }
        ChatAction::Show { id, json, stats } => chat::show(&ctx, &id, json, stats),
        ChatAction::Export { id, format } => commands::export::export(&ctx, &id, format),
        ChatAction::Import { file } => commands::export::import(&ctx, &file),
        ChatAction::Delete { ids, no_wait } => chat::delete(&ctx, &ids, no_wait),
        ChatAction::Rename { id, title } => chat::rename(&ctx, &id, &title.join(" ")),
        ChatAction::Gc {
            older_than,
            dry_run,
        } => chat::gc(&ctx, older_than, dry_run),
        ChatAction::New {
            model,
            system,
            name,
        } => chat::new(&ctx, model.as_deref(), system.as_deref(), name.as_deref()),
        ChatAction::Compact {
            id,
            keep,
            timeout,
            no_wait,
        } => commands::compact::run(&ctx, &id, keep, timeout, no_wait),
        ChatAction::Retry { .. } => Ok(()),
    }
}
