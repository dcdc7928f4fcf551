//! `ai`: one short command for every AI model.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod alias;
mod backend;
mod call;
mod cli;
mod commands;
mod config;
mod error;
mod input;
mod output;
mod signal;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::Result;
use crate::output::Ui;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let literal = cli::words_after_dashdash(&args);
    let cli = Cli::parse_from(&args);
    signal::install();
    let code = match run(cli, literal) {
        Ok(()) => 0,
        Err(err) => {
            if !matches!(err, error::Error::BrokenPipe | error::Error::Interrupted) {
                output::print_error(&err);
            }
            err.exit_code()
        }
    };
    std::process::exit(code);
}

fn run(cli: Cli, words_after_dashdash: usize) -> Result<()> {
    let ui = Ui::new(cli.call.quiet);
    match cli.command {
        None => {
            let literal_from = cli.words.len().saturating_sub(words_after_dashdash);
            call::run(&cli.call, &cli.words, literal_from)
        }
        Some(Command::Init) => commands::init::run(),
        Some(Command::List { json }) => commands::list::run(json),
        Some(Command::Default { alias, clear }) => {
            commands::default::run(alias.as_deref(), clear, &ui)
        }
        Some(Command::Completions { shell }) => commands::completions::run(shell),
        Some(Command::Complete { kind }) => commands::completions::complete(&kind),
    }
}
