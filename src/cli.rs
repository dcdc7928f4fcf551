//! Command-line definitions (clap derive; doc comments are the help text) and the positional
//! grammar: raw words → models, mode words and prompt, resolved in one tested function.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::alias::{self, Route};
use crate::config::Config;
use crate::error::{Error, Result};

/// One short command for every AI model.
///
/// `ai MODEL "prompt"` sends a prompt to a model by its short alias and prints the reply.
/// Standard input and -F files are sent along with the prompt.
#[derive(Debug, Parser)]
#[command(
    name = "ai",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  ai echo \"hello\"                 try it with no AI installed\n  ai sonnet \"explain recursion\"\n  ai claude:opus@high \"review this\" -F src/\n  cat main.rs | ai gpt \"what does this do?\"\n  ai sonnet -- \"-v means verbose?\"     prompt words after -- are never options\n\nRun `ai list` for every alias."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

    #[command(flatten)]
    pub(crate) call: CallArgs,

    /// Model aliases (`sonnet`, `provider:model`, `opus@high`), mode words, then the prompt.
    #[arg(value_name = "MODEL|PROMPT", value_parser = WordParser)]
    pub(crate) words: Vec<String>,
}

/// Options of a prompt call.
#[derive(Debug, Args, Default, Clone)]
pub(crate) struct CallArgs {
    /// Send files as context: a file, or a folder's top-level files (repeat, or join with commas).
    #[arg(
        short = 'F',
        long = "file",
        value_name = "PATH[,PATH]",
        value_delimiter = ','
    )]
    pub(crate) files: Vec<PathBuf>,

    /// Print the exact program, arguments and prompt that would run; run nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Print only the reply and errors (no notices).
    #[arg(short, long)]
    pub(crate) quiet: bool,

    /// Print one JSON object (reply, model, provider, timing) instead of the raw reply.
    #[arg(long)]
    pub(crate) json: bool,

    /// Let the backend act without asking (each CLI's auto-approve flag).
    #[arg(long)]
    pub(crate) yolo: bool,

    /// Stop the backend after this many seconds (default: config "timeout", else 1200).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub(crate) timeout: Option<Duration>,

    /// Do not read standard input, even when it is not a terminal.
    #[arg(long)]
    pub(crate) no_stdin: bool,
}

fn parse_secs(s: &str) -> std::result::Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Detect installed backend CLIs and local Ollama models; write the config.
    Init,
    /// Show every alias by provider, and whether it can be used now.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show, set or clear the model used when a call names none.
    Default {
        /// Alias to make the default.
        #[arg(value_parser = WordParser)]
        alias: Option<String>,
        /// Remove the default.
        #[arg(long, conflicts_with = "alias")]
        clear: bool,
    },
    /// Print a shell completion script (completes aliases too).
    Completions {
        /// The shell to complete for.
        shell: Shell,
    },
    /// Candidates for shell completion (used by the completion scripts).
    #[command(name = "__complete", hide = true)]
    Complete {
        /// What to list: `models`.
        kind: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// Accepts any word, but offers the built-in aliases and reserved words to shell completion.
#[derive(Clone)]
struct WordParser;

impl clap::builder::TypedValueParser for WordParser {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<String, clap::Error> {
        // Invalid UTF-8 is replaced rather than refused: a prompt is text.
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            alias::BUILTIN
                .iter()
                .map(|(a, _, _)| clap::builder::PossibleValue::new(*a)),
        ))
    }
}

/// Mode words (`json`, `yolo`, …) and their flags.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Modes {
    pub(crate) json: bool,
    pub(crate) yolo: bool,
}

/// The positional words, resolved.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Words {
    pub(crate) models: Vec<Route>,
    pub(crate) modes: Modes,
    /// Prompt words, joined by single spaces (may be empty: the prompt can come from stdin).
    pub(crate) prompt: String,
}

/// Resolve the raw words. `literal_from` is the index of the first word that came after `--`:
/// from there on every word is prompt text.
pub(crate) fn resolve_words(
    words: &[String],
    literal_from: usize,
    config: &Config,
) -> Result<Words> {
    let mut models = Vec::new();
    let mut modes = Modes::default();
    let mut i = 0;
    while i < words.len().min(literal_from) {
        let w = words[i].as_str();
        match w {
            "json" => modes.json = true,
            "yolo" => modes.yolo = true,
            "cmd" | "run" => {
                return Err(Error::usage(format!("the `{w}` mode is not available yet"))
                    .hint(format!("to send the word as a prompt, write: ai -- {w} …")));
            }
            "chat" | "reply" => {
                return Err(
                    Error::usage(format!("chats (`{w}`) are not available yet")).hint(format!(
                        "to send the word as a prompt, write: ai … -- {w} …"
                    )),
                );
            }
            _ if alias::RESERVED.contains(&w) => break,
            _ => match alias::resolve(w, config)? {
                Some(route) => models.push(route),
                None => {
                    let more_follow = i + 1 < words.len();
                    if models.is_empty() && more_follow && alias::looks_like_model(w, config) {
                        return Err(alias::unknown(w, config));
                    }
                    break;
                }
            },
        }
        i += 1;
    }
    if models.len() > 1 {
        let names: Vec<&str> = models.iter().map(|r| r.label.as_str()).collect();
        return Err(Error::usage(format!(
            "several models at once ({}) are not available yet",
            names.join(", ")
        ))
        .hint("name one model, or write the prompt after -- if a word was meant as text"));
    }
    Ok(Words {
        models,
        modes,
        prompt: words[i..].join(" "),
    })
}

/// Where `--` ends option parsing in the raw arguments: the number of words after it.
pub(crate) fn words_after_dashdash(args: &[std::ffi::OsString]) -> usize {
    match args.iter().skip(1).position(|a| a == "--") {
        Some(pos) => args.len() - 2 - pos,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn cfg() -> Config {
        Config::parse("c.json".into(), "{}").unwrap()
    }

    fn w(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn model_then_prompt() {
        let r = resolve_words(&w(&["sonnet", "explain", "recursion"]), usize::MAX, &cfg()).unwrap();
        assert_eq!(r.models.len(), 1);
        assert_eq!(r.prompt, "explain recursion");
    }

    #[test]
    fn no_model_is_prompt_for_default() {
        let r = resolve_words(&w(&["explain", "recursion"]), usize::MAX, &cfg()).unwrap();
        assert!(r.models.is_empty());
        assert_eq!(r.prompt, "explain recursion");
    }

    #[test]
    fn typo_is_unknown_alias() {
        let e = resolve_words(&w(&["sonet", "hi"]), usize::MAX, &cfg()).unwrap_err();
        assert_eq!(e.exit_code(), 4);
        assert!(e.hint_text().unwrap().contains("sonnet"));
    }

    #[test]
    fn modes_and_dashdash() {
        let r = resolve_words(&w(&["yolo", "sonnet", "json", "sonnet"]), 3, &cfg()).unwrap();
        assert!(r.modes.yolo && r.modes.json);
        assert_eq!(r.prompt, "sonnet");
        let r = resolve_words(&w(&["sonnet", "list", "files"]), usize::MAX, &cfg()).unwrap();
        assert_eq!(r.prompt, "list files");
    }

    #[test]
    fn dashdash_position() {
        let a: Vec<std::ffi::OsString> = ["ai", "sonnet", "--", "-x", "--"]
            .iter()
            .map(Into::into)
            .collect();
        assert_eq!(words_after_dashdash(&a), 2);
        let a: Vec<std::ffi::OsString> = ["ai", "sonnet", "x"].iter().map(Into::into).collect();
        assert_eq!(words_after_dashdash(&a), 0);
    }
}
