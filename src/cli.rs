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

    /// Model aliases (`sonnet`, `provider:model`, `opus@high`; `ai list` shows them all), mode
    /// words (`json`, `cmd`, `run`, `yolo`, `chat`, `reply`), then the prompt.
    #[arg(value_name = "MODEL|PROMPT", value_parser = WordParser, hide_possible_values = true)]
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

    /// The reply is one shell command for this system, printed bare.
    #[arg(long)]
    pub(crate) cmd: bool,

    /// Like --cmd, then show it, ask, and run it with your shell (exit with its code).
    #[arg(long)]
    pub(crate) run: bool,

    /// With run: do not ask before running the command.
    #[arg(short = 'y', long)]
    pub(crate) yes: bool,

    /// Stop the backend after this many seconds (default: config "timeout", else 1200).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub(crate) timeout: Option<Duration>,

    /// Do not read standard input, even when it is not a terminal.
    #[arg(long)]
    pub(crate) no_stdin: bool,

    /// Continue chat ID (or start a chat with this name: letters, digits, - and _).
    #[arg(long, value_name = "ID")]
    pub(crate) chat: Option<String>,

    /// Do not save this prompt as a chat.
    #[arg(long, conflicts_with = "chat")]
    pub(crate) no_chat: bool,

    /// Fail at once (exit 75) when the chat is in use by another call, instead of waiting.
    #[arg(long)]
    pub(crate) no_wait: bool,

    /// System prompt of a new chat (default: config "chat.system").
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub(crate) system: Option<String>,
}

impl CallArgs {
    /// Options given before a subcommand (`ai -q chat …`) joined with those after it.
    pub(crate) fn merge(mut self, later: CallArgs) -> CallArgs {
        self.files.extend(later.files);
        self.dry_run |= later.dry_run;
        self.quiet |= later.quiet;
        self.json |= later.json;
        self.yolo |= later.yolo;
        self.cmd |= later.cmd;
        self.run |= later.run;
        self.yes |= later.yes;
        self.timeout = later.timeout.or(self.timeout);
        self.no_stdin |= later.no_stdin;
        self.chat = later.chat.or(self.chat);
        self.no_chat |= later.no_chat;
        self.no_wait |= later.no_wait;
        self.system = later.system.or(self.system);
        self
    }
}

fn parse_secs(s: &str) -> std::result::Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && Duration::try_from_secs_f64(v).is_ok() => {
            Ok(Duration::from_secs_f64(v))
        }
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
        /// Only the providers (every CLI and HTTP API, with or without an alias).
        #[arg(long)]
        providers: bool,
    },
    /// Show, set or clear the model used when a call names none.
    Default {
        /// Alias to make the default.
        #[arg(value_parser = WordParser, hide_possible_values = true)]
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
    /// Continue a chat (`ai chat ID [MODEL] "prompt"`), start one, or manage them.
    #[command(args_conflicts_with_subcommands = true)]
    Chat {
        #[command(subcommand)]
        action: Option<ChatAction>,
        #[command(flatten)]
        call: CallArgs,
        /// Chat ID (none starts a new chat), then optionally a model, then the prompt.
        #[arg(value_name = "ID|MODEL|PROMPT", value_parser = WordParser, hide_possible_values = true)]
        words: Vec<String>,
    },
    /// Continue the most recently used chat.
    Reply {
        #[command(flatten)]
        call: CallArgs,
        /// Optionally a model, then the prompt.
        #[arg(value_name = "MODEL|PROMPT", value_parser = WordParser, hide_possible_values = true)]
        words: Vec<String>,
    },
    /// Serve the HTTP API (GET /health, /models, /providers; POST /call) on 127.0.0.1.
    Serve {
        /// Port to listen on (0: any free port; the address is printed).
        #[arg(default_value_t = 8765)]
        port: u16,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The bearer token clients must send (default: AI_CLI_SERVER_TOKEN, else a new one,
        /// printed at start).
        #[arg(long, value_name = "TOKEN", conflicts_with = "no_auth")]
        token: Option<String>,
        /// Require no token (loopback only).
        #[arg(long)]
        no_auth: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ChatAction {
    /// List chats, most recently used first.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Show at most N chats (0: all).
        #[arg(long, value_name = "N", default_value_t = 50)]
        limit: usize,
    },
    /// Show a chat's messages.
    Show {
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Counts instead of messages: messages, estimated tokens, reported usage, models.
        #[arg(long)]
        stats: bool,
    },
    /// Print a chat as Markdown or JSON (both import back unchanged).
    Export {
        id: String,
        #[arg(long, value_enum, default_value_t = ExportFormat::Md)]
        format: ExportFormat,
    },
    /// Create a chat from an export (FILE, or - for standard input); prints its ID.
    Import { file: String },
    /// Delete chats (waits for a turn in progress on them).
    Delete {
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
        /// Fail at once when a chat is in use.
        #[arg(long)]
        no_wait: bool,
    },
    /// Give a chat a title.
    Rename {
        id: String,
        /// The new title.
        #[arg(required = true, num_args = 1.., value_name = "TITLE")]
        title: Vec<String>,
    },
    /// Resend the prompt of a turn that failed.
    Retry {
        id: String,
        /// Send it to this model instead of the one it was meant for.
        #[arg(value_parser = WordParser, hide_possible_values = true)]
        model: Option<String>,
        #[command(flatten)]
        call: CallArgs,
    },
    /// Summarize all but the newest exchanges with the chat's own model; the summary is sent in
    /// their place from then on (the messages stay on disk).
    Compact {
        id: String,
        /// Exchanges to keep as they are.
        #[arg(long, value_name = "N", default_value_t = 4)]
        keep: u64,
        /// Stop the backend after this many seconds.
        #[arg(long, value_name = "SECS", value_parser = parse_secs)]
        timeout: Option<Duration>,
        /// Fail at once when the chat is in use.
        #[arg(long)]
        no_wait: bool,
    },
    /// Delete chats not used for a while.
    Gc {
        /// Age: a number and s, m, h, d or w (e.g. 30d).
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Duration,
        /// Only print what would be deleted.
        #[arg(long)]
        dry_run: bool,
    },
    /// Create an empty chat and print its ID (for scripts).
    New {
        /// The chat's model.
        #[arg(value_parser = WordParser, hide_possible_values = true)]
        model: Option<String>,
        /// The chat's system prompt.
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        system: Option<String>,
        /// A name instead of a generated ID.
        #[arg(long)]
        name: Option<String>,
    },
}

pub(crate) fn parse_age(s: &str) -> std::result::Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not an age like 30d, 12h or 2w"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => return Err(format!("'{s}' is not an age like 30d, 12h or 2w")),
    };
    Ok(Duration::from_secs(n.saturating_mul(secs)))
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ExportFormat {
    Md,
    Json,
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
    /// `cmd`: the reply is one shell command.
    pub(crate) cmd: bool,
    /// `run`: as `cmd`, then run it.
    pub(crate) run: bool,
}

/// Which command the words came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// `ai [MODEL…] [chat [ID]] PROMPT`
    Top,
    /// `ai chat [ID] [MODEL] PROMPT`
    Chat,
    /// `ai reply [MODEL] PROMPT`
    Reply,
}

/// Which chat a call continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChatRef {
    /// A plain prompt: saved as a new chat unless `--no-chat` or config `chat.save: false`.
    Plain,
    /// `chat` with no ID: a new chat.
    New,
    /// A new chat with this name (`--chat NAME`).
    Named(String),
    /// An existing chat (its canonical ID).
    Existing(String),
    /// `reply`: the most recently used chat.
    Last,
}

/// The positional words, resolved.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Words {
    pub(crate) models: Vec<Route>,
    pub(crate) modes: Modes,
    pub(crate) chat: ChatRef,
    /// Prompt words, joined by single spaces (may be empty: the prompt can come from stdin).
    pub(crate) prompt: String,
}

/// Resolve the raw words. `literal_from` is the index of the first word that came after `--`:
/// from there on every word is prompt text. `find_chat` maps a word to the ID of an existing
/// chat (case-insensitively); `chat_flag` is the value of `--chat`.
pub(crate) fn resolve_words(
    entry: Entry,
    words: &[String],
    literal_from: usize,
    chat_flag: Option<&str>,
    config: &Config,
    find_chat: &dyn Fn(&str) -> Option<String>,
) -> Result<Words> {
    let mut models = Vec::new();
    let mut modes = Modes::default();
    let mut chat = match entry {
        Entry::Top => ChatRef::Plain,
        Entry::Chat => ChatRef::New,
        Entry::Reply => ChatRef::Last,
    };
    let keywords_end = words.len().min(literal_from);
    let mut i = 0;
    if entry == Entry::Chat
        && i < keywords_end
        && let Some(id) = chat_id_word(&words[i], find_chat)?
    {
        chat = ChatRef::Existing(id);
        i += 1;
    }
    while i < keywords_end {
        let w = words[i].as_str();
        match w {
            "json" => modes.json = true,
            "yolo" => modes.yolo = true,
            "cmd" => modes.cmd = true,
            "run" => modes.run = true,
            "chat" if entry == Entry::Top && chat == ChatRef::Plain => {
                chat = ChatRef::New;
                if i + 1 < keywords_end
                    && let Some(id) = chat_id_word(&words[i + 1], find_chat)?
                {
                    chat = ChatRef::Existing(id);
                    i += 1;
                }
            }
            "reply" if entry == Entry::Top && chat == ChatRef::Plain => chat = ChatRef::Last,
            _ if alias::RESERVED.contains(&w) => break,
            _ => match alias::resolve(w, config)? {
                Some(route) => models.push(route),
                None => {
                    // A near-miss alias is a mistyped model only when the call is shaped like
                    // one: `provider:model`, `@effort`, or a single (or quoted) prompt after it.
                    // `ai code review this` is a prompt, not a typo of `codex`.
                    let next = words.get(i + 1);
                    let call_shaped = w.contains(':')
                        || w.contains('@')
                        || i + 2 == words.len()
                        || next.is_some_and(|n| n.chars().any(char::is_whitespace));
                    if models.is_empty()
                        && next.is_some()
                        && call_shaped
                        && alias::looks_like_model(w, config)
                    {
                        return Err(alias::unknown(w, config));
                    }
                    break;
                }
            },
        }
        i += 1;
    }
    if let Some(flag) = chat_flag {
        if chat != ChatRef::Plain {
            return Err(
                Error::usage("--chat and a `chat`/`reply` word name the chat twice")
                    .hint("use one of them"),
            );
        }
        chat = match find_chat(flag) {
            Some(id) => ChatRef::Existing(id),
            None => new_chat_name(flag)?,
        };
    }
    Ok(Words {
        models,
        modes,
        chat,
        prompt: words[i..].join(" "),
    })
}

/// After `chat`: an existing chat's ID, an error for an ID-shaped word naming none, or `None`
/// (the word starts the model or prompt).
fn chat_id_word(word: &str, find_chat: &dyn Fn(&str) -> Option<String>) -> Result<Option<String>> {
    if let Some(id) = find_chat(word) {
        return Ok(Some(id));
    }
    if crate::chat::store::id_shaped(word) {
        return Err(Error::not_found(format!("no chat '{word}'")).hint(format!(
            "`ai chat list` shows your chats; to send '{word}' as text, quote the whole prompt or put it after --"
        )));
    }
    Ok(None)
}

/// `--chat NAME` for a chat that does not exist yet.
fn new_chat_name(name: &str) -> Result<ChatRef> {
    use crate::chat::store;
    store::check_id(name)?;
    if store::id_shaped(name) {
        return Err(Error::not_found(format!("no chat '{name}'"))
            .hint("`ai chat list` shows your chats; a new chat's name needs a letter-only part or a - or _"));
    }
    if store::RESERVED_NAMES.contains(&name) {
        return Err(Error::usage(format!(
            "'{name}' cannot be a chat name (it is a chat command)"
        )));
    }
    Ok(ChatRef::Named(name.to_owned()))
}

/// Options that take the next argument as their value.
const TAKES_VALUE: &[&str] = &[
    "-F",
    "--file",
    "--timeout",
    "--chat",
    "--system",
    "--limit",
    "--older-than",
    "--name",
];

/// Marks a hidden prompt argument (see [`protect_prompts`]).
const HIDDEN: &str = "\u{1}ai-prompt-";

/// An argument that starts with `-` but holds whitespace ("-v means verbose?") is prompt text,
/// never an option cluster. Such arguments are hidden from clap behind placeholders, which
/// [`restore`] turns back into the text. `--opt=value` forms and option values are left alone.
pub(crate) fn protect_prompts(
    args: Vec<std::ffi::OsString>,
) -> (Vec<std::ffi::OsString>, Vec<String>) {
    let mut hidden = Vec::new();
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    let mut literal = false;
    for (i, arg) in args.into_iter().enumerate() {
        let text = arg.to_string_lossy().into_owned();
        let option_form = text.starts_with("--")
            && text
                .split_once('=')
                .is_some_and(|(name, _)| !name.chars().any(char::is_whitespace));
        let protect = i > 0
            && !literal
            && !value_next
            && text.starts_with('-')
            && text.chars().any(char::is_whitespace)
            && !option_form;
        value_next = !literal && TAKES_VALUE.contains(&text.as_str());
        literal |= text == "--";
        if protect {
            out.push(std::ffi::OsString::from(format!(
                "{HIDDEN}{}",
                hidden.len()
            )));
            hidden.push(text);
        } else {
            out.push(arg);
        }
    }
    (out, hidden)
}

/// Put hidden prompt arguments back.
pub(crate) fn restore(words: &mut [String], hidden: &[String]) {
    for w in words.iter_mut() {
        if let Some(text) = w
            .strip_prefix(HIDDEN)
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|i| hidden.get(i))
        {
            *w = text.clone();
        }
    }
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

    fn chats(word: &str) -> Option<String> {
        ["K7Q", "ABC", "work"]
            .iter()
            .find(|c| c.eq_ignore_ascii_case(word))
            .map(|c| (*c).to_owned())
    }

    fn resolve(entry: Entry, words: &[&str], literal: usize, flag: Option<&str>) -> Result<Words> {
        resolve_words(entry, &w(words), literal, flag, &cfg(), &chats)
    }

    fn resolve_words_top(words: &[String], literal: usize, _: &Config) -> Result<Words> {
        resolve_words(Entry::Top, words, literal, None, &cfg(), &chats)
    }

    #[test]
    fn chat_forms() {
        let r = resolve(
            Entry::Top,
            &["sonnet", "chat", "k7q", "hi"],
            usize::MAX,
            None,
        )
        .unwrap();
        assert_eq!(
            (r.chat, r.prompt.as_str(), r.models.len()),
            (ChatRef::Existing("K7Q".into()), "hi", 1)
        );
        let r = resolve(Entry::Chat, &["K7Q", "gpt", "more"], usize::MAX, None).unwrap();
        assert_eq!(
            (r.chat, r.models[0].label.as_str()),
            (ChatRef::Existing("K7Q".into()), "gpt")
        );
        let r = resolve(Entry::Chat, &["fix", "this", "bug"], usize::MAX, None).unwrap();
        assert_eq!((r.chat, r.prompt.as_str()), (ChatRef::New, "fix this bug"));
        let r = resolve(Entry::Top, &["sonnet", "hi"], usize::MAX, Some("k7q")).unwrap();
        assert_eq!(r.chat, ChatRef::Existing("K7Q".into()));
        let r = resolve(Entry::Top, &["hi"], usize::MAX, Some("notes")).unwrap();
        assert_eq!(r.chat, ChatRef::Named("notes".into()));
        let r = resolve(Entry::Reply, &["opus", "more"], usize::MAX, None).unwrap();
        assert_eq!((r.chat, r.models.len()), (ChatRef::Last, 1));
        // Three-letter aliases beside IDs: `gpt` is a model, not a chat.
        let r = resolve(Entry::Chat, &["gpt", "hello"], usize::MAX, None).unwrap();
        assert_eq!((r.chat, r.models.len()), (ChatRef::New, 1));
    }

    #[test]
    fn chat_traps() {
        let e = resolve(Entry::Chat, &["Z9Z", "hello"], usize::MAX, None).unwrap_err();
        assert_eq!(e.exit_code(), 4);
        let r = resolve(Entry::Chat, &["Z9Z", "hello"], 0, None).unwrap();
        assert_eq!((r.chat, r.prompt.as_str()), (ChatRef::New, "Z9Z hello"));
        assert_eq!(
            resolve(Entry::Top, &["hi"], usize::MAX, Some("../../etc/passwd"))
                .unwrap_err()
                .exit_code(),
            2
        );
        assert_eq!(
            resolve(Entry::Top, &["hi"], usize::MAX, Some("Q1Q"))
                .unwrap_err()
                .exit_code(),
            4
        );
        assert!(resolve(Entry::Top, &["chat", "K7Q", "hi"], usize::MAX, Some("ABC")).is_err());
    }

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn model_then_prompt() {
        let r =
            resolve_words_top(&w(&["sonnet", "explain", "recursion"]), usize::MAX, &cfg()).unwrap();
        assert_eq!(r.models.len(), 1);
        assert_eq!(r.prompt, "explain recursion");
    }

    #[test]
    fn no_model_is_prompt_for_default() {
        let r = resolve_words_top(&w(&["explain", "recursion"]), usize::MAX, &cfg()).unwrap();
        assert!(r.models.is_empty());
        assert_eq!(r.prompt, "explain recursion");
    }

    #[test]
    fn english_first_words_are_prompts() {
        for words in [
            &["code", "review", "this"][..],
            &["open", "the", "door"],
            &["fast", "way", "to", "sort"],
        ] {
            let r = resolve_words_top(&w(words), usize::MAX, &cfg()).unwrap();
            assert!(r.models.is_empty(), "{words:?}");
            assert_eq!(r.prompt, words.join(" "));
        }
        // Shaped like a call with a mistyped model: an error with a suggestion.
        assert_eq!(
            resolve_words_top(&w(&["sonet", "explain this"]), usize::MAX, &cfg())
                .unwrap_err()
                .exit_code(),
            4
        );
        assert_eq!(
            resolve_words_top(&w(&["codx", "hi"]), usize::MAX, &cfg())
                .unwrap_err()
                .exit_code(),
            4
        );
    }

    #[test]
    fn typo_is_unknown_alias() {
        let e = resolve_words_top(&w(&["sonet", "hi"]), usize::MAX, &cfg()).unwrap_err();
        assert_eq!(e.exit_code(), 4);
        assert!(e.hint_text().unwrap().contains("sonnet"));
    }

    #[test]
    fn modes_and_dashdash() {
        let r = resolve_words_top(&w(&["yolo", "sonnet", "json", "sonnet"]), 3, &cfg()).unwrap();
        assert!(r.modes.yolo && r.modes.json);
        assert_eq!(r.prompt, "sonnet");
        let r = resolve_words_top(&w(&["sonnet", "list", "files"]), usize::MAX, &cfg()).unwrap();
        assert_eq!(r.prompt, "list files");
    }

    #[test]
    fn hyphen_prompts_are_protected() {
        let a: Vec<std::ffi::OsString> = [
            "ai",
            "sonnet",
            "-v means verbose?",
            "-q",
            "--system",
            "-be terse now",
            "--chat=a b",
            "--",
            "-x y",
        ]
        .iter()
        .map(Into::into)
        .collect();
        let (out, hidden) = protect_prompts(a);
        assert_eq!(hidden, vec!["-v means verbose?"]);
        assert_eq!(out[3], "-q");
        assert_eq!(out[5], "-be terse now");
        assert_eq!(out[8], "-x y");
        let cli = Cli::try_parse_from(&out).unwrap();
        let mut words = cli.words.clone();
        restore(&mut words, &hidden);
        assert_eq!(words, vec!["sonnet", "-v means verbose?", "-x y"]);
        assert_eq!(cli.call.system.as_deref(), Some("-be terse now"));
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
