//! The clap definitions: every command, option and positional. Doc comments are the help text.
//! The rest of `cli` reads its tables (command words, options that take a value) from here.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// One short command for every AI model.
///
/// `ai MODEL "prompt"` sends a prompt to a model by its short alias and prints the reply.
/// Standard input and -F files are sent along with the prompt.
#[derive(Debug, Parser)]
#[command(
    name = "ai",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  ai echo \"hello\"                 try it with no AI installed\n  ai sonnet \"explain recursion\"\n  ai claude:opus@high \"review this\" -F src/\n  cat main.rs | ai gpt \"what does this do?\"\n  ai sonnet -- \"-v means verbose?\"     prompt words after -- are never options\n  ai -- models                     a one-word prompt that looks like a command goes after --\n  ai -c \"and then?\"                continue the last chat\n\nRun `ai list` for every alias."
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
    /// An image or a PDF is attached whole (also `-a`, `--attach`).
    #[arg(
        short = 'F',
        long = "file",
        short_alias = 'a',
        alias = "attach",
        value_name = "PATH[,PATH]",
        value_delimiter = ','
    )]
    pub(crate) files: Vec<PathBuf>,

    /// Keep a copy of each attached image or PDF in the chat's folder (otherwise the chat
    /// records only its name, type, size and SHA-256).
    #[arg(long, conflicts_with = "no_chat")]
    pub(crate) keep_attachments: bool,

    /// Print the exact program, arguments and prompt that would run; run nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Print only the reply and errors (no notices).
    // Global: `-q` works with every command, before or after its word.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,

    /// Print one JSON object (reply, model, provider, timing) instead of the raw reply.
    #[arg(long)]
    pub(crate) json: bool,

    /// JSON lines on stdout as the reply streams (for programs such as `ai serve`).
    // `{"type":"delta","text":…}` per piece, then `{"type":"done",…}` with the fields of
    // --json, or `{"type":"error","error":…,"hint":…,"exit_code":N}`. In the README, not in
    // --help.
    #[arg(long, hide = true, conflicts_with = "json")]
    pub(crate) json_stream: bool,

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

    /// Continue the most recently used chat, as `ai reply` does.
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["chat", "no_chat"])]
    pub(crate) continue_last: bool,

    /// Do not save this prompt as a chat.
    #[arg(long, conflicts_with = "chat")]
    pub(crate) no_chat: bool,

    /// Fail at once (exit 75) when the chat is in use by another call, instead of waiting.
    #[arg(long)]
    pub(crate) no_wait: bool,

    /// System prompt of a new chat (default: config "chat.system").
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub(crate) system: Option<String>,

    /// Ground the answer in a knowledge base (repeat for several); a chat remembers them.
    #[arg(long = "kb", value_name = "NAME", value_delimiter = ',')]
    pub(crate) kb: Vec<String>,

    /// No knowledge base for this call (not the chat's, nor config "kb.default").
    #[arg(long, conflicts_with = "kb")]
    pub(crate) no_kb: bool,

    /// A conversation at the terminal: each line you type is one turn of the chat (`ai -i
    /// MODEL`, `ai chat ID -i`).
    #[arg(short = 'i', long)]
    pub(crate) interactive: bool,

    /// Tool calling: --tools, --data, --tools-file, --tool, --mcp, --max-tool-rounds.
    #[command(flatten)]
    pub(crate) tooling: Box<ToolArgs>,

    /// Saved prompts and structured output: -p, -v, --schema.
    #[command(flatten)]
    pub(crate) prompting: Box<PromptArgs>,
}

/// A saved prompt and its variables, and the shape of the reply (boxed: most calls have none).
#[derive(Debug, Args, Default, Clone)]
pub(crate) struct PromptArgs {
    /// Use saved prompt NAME (`ai prompt list`): the input fills its {input}.
    #[arg(short = 'p', long = "prompt", value_name = "NAME")]
    pub(crate) saved_prompt: Option<String>,

    /// A variable of the saved prompt (repeat): -v lang=German.
    #[arg(short = 'v', long = "var", value_name = "NAME=VALUE", value_parser = crate::prompts::parse_var, requires = "saved_prompt")]
    pub(crate) vars: Vec<(String, String)>,

    /// The reply is JSON that fits this schema: a file, '{json schema}', or 'name str, age int,
    /// tags [str]'. Checked, asked again once, else exit 1.
    #[arg(long, value_name = "SCHEMA", allow_hyphen_values = true)]
    pub(crate) schema: Option<String>,
}

/// The tool-calling options of a prompt call (boxed: most calls have none).
#[derive(Debug, Args, Default, Clone)]
pub(crate) struct ToolArgs {
    /// Let the model search the knowledge bases itself, with tools (HTTP providers).
    #[arg(long)]
    pub(crate) tools: bool,

    /// A JSON document the model can query with tools (repeat: primary, secondary).
    #[arg(long = "data", value_name = "FILE.json")]
    pub(crate) data: Vec<PathBuf>,

    /// Domain tools over the --data documents, declared in a JSON file.
    #[arg(long, value_name = "FILE")]
    pub(crate) tools_file: Option<PathBuf>,

    /// Offer a command tool of config "tools.commands" (repeat); each run is asked for.
    #[arg(long = "tool", value_name = "NAME")]
    pub(crate) tool: Vec<String>,

    /// Start an MCP server of config "mcp.servers" for this call and offer its tools (repeat).
    #[arg(long = "mcp", value_name = "NAME")]
    pub(crate) mcp: Vec<String>,

    /// Tool rounds per turn, at most (default: config "tools.max_rounds", else 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) max_tool_rounds: Option<u32>,
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
    /// Serve the HTTP API for models, calls and chats on 127.0.0.1.
    Serve {
        /// Port to listen on (0: any free port; the address is printed).
        #[arg(default_value_t = 8765)]
        port: u16,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The bearer token clients must send, 16 characters or more (default:
        /// AI_CLI_SERVER_TOKEN, else a new one, printed at start).
        #[arg(long, value_name = "TOKEN", conflicts_with = "no_auth")]
        token: Option<String>,
        /// Require no token (loopback only).
        #[arg(long)]
        no_auth: bool,
        /// Model calls run at once; more are answered 429 with Retry-After.
        #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
        max_calls: u32,
        /// Open connections at once; more are answered 503 and closed.
        #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
        max_connections: u32,
        /// Stop a call (as Ctrl+C would, keeping its partial reply) after this many seconds.
        #[arg(long, value_name = "SECS", default_value = "1800", value_parser = parse_secs)]
        call_timeout: Duration,
        /// Close a connection whose request has not fully arrived after this many seconds.
        #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_secs)]
        idle_timeout: Duration,
        /// The most output of one `ai` child kept in memory (one line of it, or a whole list);
        /// beyond it the child is stopped and the call fails with 502.
        #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024, value_parser = clap::value_parser!(u64).range(1024..))]
        max_output: u64,
    },
    /// Tokens and cost of past replies, from what the chats record (estimated where the
    /// backend reported none, and marked so).
    Usage {
        /// Only replies of this last while: a number and s, m, h, d or w (e.g. 7d).
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        since: Option<Duration>,
        /// Group by model (provider:model), provider, or day.
        #[arg(long, value_enum, default_value_t = UsageBy::Model)]
        by: UsageBy,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Serve your notes, chats and models to an agent as MCP tools (stdin/stdout).
    Mcp {
        /// The knowledge bases to offer (repeat or comma-separate; default: all).
        #[arg(long = "kb", value_name = "NAME", value_delimiter = ',')]
        kb: Vec<String>,
        /// Offer no knowledge base.
        #[arg(long, conflicts_with = "kb")]
        no_kb: bool,
        /// The models `ask` may use (comma-separated aliases; default: every alias).
        #[arg(long, value_name = "ALIAS", value_delimiter = ',')]
        models: Vec<String>,
        /// Do not offer `ask`.
        #[arg(long)]
        no_ask: bool,
        /// Do not offer `list_chats` and `read_chat`.
        #[arg(long)]
        no_chats: bool,
        /// Stop an `ask` after this many seconds (default 600).
        #[arg(long, value_name = "SECS", value_parser = parse_secs)]
        timeout: Option<Duration>,
    },
    /// Knowledge bases: index a folder of notes, search it, ground answers in it (--kb NAME).
    Kb {
        #[command(subcommand)]
        action: KbAction,
    },
    /// Saved prompts: add, list, show, edit, remove; use one with -p NAME.
    Prompt {
        #[command(subcommand)]
        action: PromptAction,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PromptAction {
    /// Save a prompt: `ai prompt add summarize "Summarize in {lang=English}: {input}"`. Without
    /// TEXT, the whole file (front matter and all) is read from standard input.
    Add {
        /// Letters, digits, _ and -.
        name: String,
        /// The template: {input} is the call's input, {NAME} a variable, {NAME=default} one
        /// with a default.
        #[arg(allow_hyphen_values = true)]
        text: Option<String>,
        /// Its system prompt.
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        system: Option<String>,
        /// The model it uses when the call names none.
        #[arg(long, value_name = "ALIAS")]
        model: Option<String>,
        /// What it does, in a few words.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Replace a prompt of that name.
        #[arg(long)]
        force: bool,
    },
    /// List saved prompts (yours, then those of config "prompts.dirs").
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a saved prompt in the file format (`ai prompt show X | ai prompt add Y` copies it).
    Show {
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Edit a saved prompt in $VISUAL or $EDITOR.
    Edit { name: String },
    /// Delete a saved prompt of yours.
    Remove { name: String },
}

#[derive(Debug, Subcommand)]
pub(crate) enum KbAction {
    /// Register a folder of notes as knowledge base NAME and index it.
    Add {
        /// Letters, digits, - and _.
        name: String,
        /// The folder (a Zettelkasten, a vault, docs, a source tree).
        path: PathBuf,
        /// Also search by meaning, with embeddings from PROVIDER:MODEL (openai:text-embedding-3-small,
        /// gemini:gemini-embedding-001, ollama:nomic-embed-text, …), or a local model with no
        /// server or key: local, local:NAME (ai kb model list), local:/path/to/model-dir.
        /// Default: keywords only.
        #[arg(long, value_name = "PROVIDER:MODEL")]
        embed: Option<String>,
        /// Size of the embeddings, where the model lets you choose (768, 1536, 3072).
        #[arg(long, value_name = "N", requires = "embed")]
        dimensions: Option<u32>,
        /// Index only files matching GLOB (repeat; `*.md`, `docs/**`). Default: text and code files.
        #[arg(long, value_name = "GLOB")]
        include: Vec<String>,
        /// Leave out files or folders matching GLOB (repeat; `drafts/**`).
        #[arg(long, value_name = "GLOB")]
        exclude: Vec<String>,
        /// What it holds, in a few words.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// Keep the index on a PostgreSQL server with pgvector, shared by everyone who adds the
        /// same NAME there: postgres://USER@HOST/DATABASE (password from PGPASSWORD or
        /// ~/.pgpass), or `postgres` for the URL in AI_KB_DATABASE_URL. Default: a SQLite file.
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        /// Print the sync's counts as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Bring indexes up to date with their folders (all, or the NAMEs given).
    Sync {
        names: Vec<String>,
        /// Rebuild from scratch.
        #[arg(long)]
        full: bool,
        /// Print the counts as JSON.
        #[arg(long)]
        json: bool,
        /// After the sync, keep watching the folders and sync what changes (Ctrl+C ends it).
        #[arg(long, conflicts_with = "json")]
        watch: bool,
    },
    /// List knowledge bases.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Notes, passages, size on disk, embedding model and last sync of a knowledge base.
    Stats {
        name: String,
        /// List the files the sync leaves out by reason (generated notes by name).
        #[arg(long)]
        skipped: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search a knowledge base: the best notes and their passages.
    Search {
        name: String,
        /// The query.
        #[arg(required = true, num_args = 1.., value_name = "QUERY")]
        query: Vec<String>,
        /// How many notes (1 to 1000).
        #[arg(short = 'k', value_name = "N", default_value_t = 5,
              value_parser = clap::value_parser!(u16).range(1..=1000))]
        k: u16,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Rescore the best candidates with a reranker: `local` (a cross-encoder run in ai),
        /// `local:NAME`, or a model alias; `off` for none (default: config kb.rerank).
        #[arg(long, value_name = "RERANKER", num_args = 0..=1, default_missing_value = "local")]
        rerank: Option<String>,
    },
    /// Print one note.
    Show {
        name: String,
        /// The note's ID (or its path in the folder).
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Move a knowledge base's index to another store as it is, without embedding anything
    /// again (notes, passages, vectors, links, sync state); its config then points there. The
    /// index it leaves is not changed.
    Copy {
        name: String,
        /// Where to: postgres://USER@HOST/DATABASE (password from PGPASSWORD or ~/.pgpass),
        /// `postgres` for the URL in AI_KB_DATABASE_URL, or `sqlite` for a file in the home folder.
        #[arg(long, value_name = "STORE")]
        to: String,
        /// Replace the base's index that the target already holds.
        #[arg(long)]
        force: bool,
        /// Print what was copied as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Forget a knowledge base: deletes its index, never the notes.
    Remove { name: String },
    /// Local embedding models (--embed local): download, list, remove.
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ModelAction {
    /// Download a model from the Hugging Face Hub (a built-in NAME or OWNER/NAME), or check one
    /// already downloaded. Resumes an interrupted download.
    Pull { name: String },
    /// The built-in models, their sizes, and which are on disk.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Delete a downloaded model.
    Remove { name: String },
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
    /// Find chats by their words: every word, in any order and any case, in the title or
    /// the messages. Most recently used first.
    Search {
        /// The words to find.
        #[arg(required = true, num_args = 1.., value_name = "TEXT")]
        text: Vec<String>,
        /// Print JSON instead of text.
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
pub(crate) enum UsageBy {
    Model,
    Provider,
    Day,
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
            crate::builtin::BUILTIN
                .iter()
                .map(|(a, _, _)| clap::builder::PossibleValue::new(*a)),
        ))
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }
}
