//! The home folder, `config.json` and atomic file writes.
//!
//! The file is shared with the Python `ai-cli`: it is kept as a JSON document and only the keys
//! `ai` changes are rewritten, so keys either tool does not know survive every save.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

mod atomic;
mod check;
pub(crate) mod kb;
pub(crate) mod providers;
pub(crate) mod tools;
pub(crate) use atomic::{create_temp, remove_stale_temps, write_atomic, write_atomic_unsynced};

/// Default per-call timeout: 20 minutes, as the Python tool had.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// Where everything of `ai` lives: `AI_CLI_HOME`, else `~/.ai-cli`.
#[derive(Debug, Clone)]
pub(crate) struct Home {
    pub(crate) dir: PathBuf,
}

impl Home {
    pub(crate) fn locate() -> Result<Home> {
        if let Some(dir) = std::env::var_os("AI_CLI_HOME").filter(|v| !v.is_empty()) {
            return Ok(Home {
                dir: PathBuf::from(dir),
            });
        }
        match dirs::home_dir() {
            Some(home) => Ok(Home {
                dir: home.join(".ai-cli"),
            }),
            None => Err(Error::config("cannot find your home folder")
                .hint("set AI_CLI_HOME to the folder ai should use")),
        }
    }

    pub(crate) fn config_file(&self) -> PathBuf {
        self.dir.join("config.json")
    }

    /// Create the home folder (0700) if it is missing.
    pub(crate) fn ensure(&self) -> Result<()> {
        create_private_dir(&self.dir)
    }
}

pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
    {
        Ok(()) => Ok(()),
        Err(e) => Err(Error::io("create folder", dir, e)),
    }
}

/// How a custom CLI backend takes its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PromptVia {
    /// Written to the child's stdin, then closed (no size limit).
    #[default]
    Stdin,
    /// The last argument.
    Arg,
    /// The last argument, after `--` so a leading `-` is safe.
    AfterDashdash,
}

/// A CLI declared in config: `"backends": {"llm": {"program": "llm", "model_arg": "-m"}}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CustomBackend {
    /// Program name (looked up on PATH) or path.
    pub(crate) program: String,
    /// Arguments always given, before the model and the prompt.
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// Option that takes the model (`-m`), or one ending in `=` (`--model=`) joined to it.
    /// Without it the model is not passed.
    #[serde(default)]
    pub(crate) model_arg: Option<String>,
    /// `stdin` (default), `arg` or `after-dashdash`.
    #[serde(default)]
    pub(crate) prompt: PromptVia,
    /// Arguments added in `yolo` mode.
    #[serde(default)]
    pub(crate) yolo_args: Vec<String>,
    /// Arguments added in `json` mode.
    #[serde(default)]
    pub(crate) json_args: Vec<String>,
    /// Install hint shown when the program is missing.
    #[serde(default)]
    pub(crate) install: Option<String>,
    /// How its stdout is read: `text` (default), `claude-stream`, `codex-json`,
    /// `gemini-stream` or `qwen-stream` (the flags that ask for it go in `args`).
    #[serde(default)]
    pub(crate) output: providers::Format,
}

/// The typed view of the keys `ai` reads (see [`read_known`]). Everything else stays in
/// [`Config::doc`].
struct Known {
    aliases: BTreeMap<String, AliasTarget>,
    default_alias: Option<String>,
    backends: BTreeMap<String, CustomBackend>,
    /// Per-call timeout in seconds (and the value as written, for messages).
    timeout: Option<(f64, Value)>,
    chat: ChatSettings,
    context_tokens: BTreeMap<String, u64>,
    kb: kb::KbSettings,
    tools: ToolSettings,
    mcp: tools::McpSettings,
    budget: Option<Budget>,
    prompts: PromptSettings,
}

/// Config `"prompts"`: where saved prompts are found besides `<home>/prompts/`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PromptSettings {
    /// Folders of prompts: `NAME.md`/`NAME.txt` files, or fabric patterns (`NAME/system.md`).
    #[serde(default)]
    pub(crate) dirs: Vec<PathBuf>,
}

/// Config `"budget"`: a monthly spending limit, checked before each call to a paid model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Budget {
    /// US dollars per calendar month (UTC), reported and estimated costs together.
    pub(crate) monthly_usd: f64,
    /// What passing it does: `warn` (the default) or `fail` (refuse before sending).
    #[serde(default)]
    pub(crate) on_exceed: OnExceed,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OnExceed {
    #[default]
    Warn,
    Fail,
}

/// Read the keys `ai` knows, each checked on its own so an error names its key path. The
/// `providers` entries are checked here too (types, unknown fields, timeouts, header values),
/// so a bad one fails before anything is written, not when a turn first uses it.
fn read_known(doc: &Map<String, Value>) -> check::Checked<Known> {
    use check::{key, map_of, object, typed, whole};
    let chat = match object(doc.get("chat"), "chat")? {
        None => ChatSettings::default(),
        Some(c) => ChatSettings {
            save: key(c, "save").map_err(|e| format!("chat.{e}"))?,
            system: key(c, "system").map_err(|e| format!("chat.{e}"))?,
            window_tokens: match c.get("window_tokens") {
                None | Some(Value::Null) => None,
                Some(v) => {
                    Some(usize::try_from(whole(v, "chat.window_tokens", 0)?).unwrap_or(usize::MAX))
                }
            },
            on_overflow: key(c, "on_overflow").map_err(|e| format!("chat.{e}"))?,
            markdown: key(c, "markdown").map_err(|e| format!("chat.{e}"))?,
        },
    };
    let timeout = match doc.get("timeout") {
        None | Some(Value::Null) => None,
        Some(v) => Some((typed::<f64>(v, "timeout")?, v.clone())),
    };
    map_of(doc, "providers", check_provider)?;
    let tools: ToolSettings = key(doc, "tools")?.unwrap_or_default();
    let mcp: tools::McpSettings = key(doc, "mcp")?.unwrap_or_default();
    tools::check(&tools.commands, &tools.allow, &mcp)?;
    let budget: Option<Budget> = key(doc, "budget")?;
    if let Some(b) = &budget
        && !(b.monthly_usd.is_finite() && b.monthly_usd >= 0.0)
    {
        return Err(format!(
            "budget.monthly_usd: expected a number of dollars from 0, found {}",
            b.monthly_usd
        ));
    }
    Ok(Known {
        aliases: map_of(doc, "aliases", typed)?,
        default_alias: key(doc, "default_alias")?,
        backends: map_of(doc, "backends", typed)?,
        timeout,
        chat,
        context_tokens: map_of(doc, "context_tokens", |v, path| whole(v, path, 1))?,
        kb: key(doc, "kb")?.unwrap_or_default(),
        tools,
        mcp,
        budget,
        prompts: key(doc, "prompts")?.unwrap_or_default(),
    })
}

/// One `providers` entry: what `backend::http::provider::resolve` will read, checked now.
fn check_provider(v: &Value, path: &str) -> check::Checked<()> {
    use providers::ProviderConfig;
    if !v.is_object() {
        return Err(format!(
            "{path}: expected an object, found {}",
            check::show(v)
        ));
    }
    let p: ProviderConfig = check::typed(v, path)?;
    if let Some(t) = p.timeout
        && !(t > 0.0 && Duration::try_from_secs_f64(t).is_ok())
    {
        return Err(format!(
            "{path}.timeout: expected a positive number of seconds, found {}",
            check::show(&serde_json::json!(t))
        ));
    }
    for (name, value) in &p.headers {
        let bad = |s: &str| s.contains(['\r', '\n', '\0']);
        if bad(name) || bad(value) || name.is_empty() {
            return Err(format!(
                "{path}.headers.{name}: a header name or value cannot be empty or hold a line break"
            ));
        }
    }
    Ok(())
}

/// The `"chat"` object of config.json.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChatSettings {
    /// Save plain prompts as new chats too (default true).
    pub(crate) save: Option<bool>,
    /// Default system prompt of new chats.
    pub(crate) system: Option<String>,
    /// Estimated-token budget of the history sent with each turn (default 8000).
    pub(crate) window_tokens: Option<usize>,
    /// What a turn does when the history passes 85% of the model's context.
    pub(crate) on_overflow: Option<Overflow>,
    /// `ai -i` shows replies with their markdown styled on a terminal (default true).
    pub(crate) markdown: Option<bool>,
}

/// The `"tools"` object of config.json (tool calling).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolSettings {
    /// Tool rounds per turn, at most (default 10; `--max-tool-rounds`).
    #[serde(default)]
    pub(crate) max_rounds: Option<u32>,
    /// A tools file read by every call that has `--data` (`--tools-file` replaces it).
    #[serde(default)]
    pub(crate) file: Option<PathBuf>,
    /// Command tools (`tools.commands.NAME`); offered only when named by `--tool NAME` or
    /// listed in `allow`.
    #[serde(default)]
    pub(crate) commands: BTreeMap<String, tools::CommandSpec>,
    /// Command tools every call offers (to an HTTP provider), without `--tool`.
    #[serde(default)]
    pub(crate) allow: Vec<String>,
}

/// Default `tools.max_rounds`.
pub(crate) const DEFAULT_MAX_ROUNDS: u32 = 10;

/// `chat.on_overflow`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Overflow {
    /// Warn, and send the window as usual.
    #[default]
    Window,
    /// Summarize older turns first (`ai chat compact`), then send.
    Compact,
    /// Refuse the turn (the prompt is kept as pending).
    Fail,
}

/// Default `chat.window_tokens`.
pub(crate) const DEFAULT_WINDOW_TOKENS: usize = 8000;

/// An alias value: `["provider", "model"]` as the Python tool writes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct AliasTarget(pub(crate) String, pub(crate) String);

#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) path: PathBuf,
    /// The whole file as read; saves edit this document so unknown keys survive.
    doc: Map<String, Value>,
    pub(crate) aliases: BTreeMap<String, AliasTarget>,
    pub(crate) default_alias: Option<String>,
    pub(crate) backends: BTreeMap<String, CustomBackend>,
    pub(crate) timeout: Duration,
    pub(crate) chat: ChatSettings,
    /// Model context sizes by alias, `provider:model` or provider (see `context`).
    pub(crate) context_tokens: BTreeMap<String, u64>,
    /// Knowledge bases (`"kb"`).
    pub(crate) kb: kb::KbSettings,
    /// Tool calling (`"tools"`).
    pub(crate) tools: ToolSettings,
    /// MCP servers (`"mcp"`).
    pub(crate) mcp: tools::McpSettings,
    /// The monthly budget (`"budget"`).
    pub(crate) budget: Option<Budget>,
    /// Saved prompts (`"prompts"`).
    pub(crate) prompts: PromptSettings,
}

impl Config {
    /// Load `config.json`; a missing file is an empty config.
    pub(crate) fn load(home: &Home) -> Result<Config> {
        let path = home.config_file();
        let text = match read_regular(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            // Unreadable is a config problem (exit 3), as the README says, not a backend one.
            Err(e) => {
                return Err(
                    Error::config(format!("cannot read config {}: {e}", path.display())).hint(
                        "check that it is a readable file, or move it aside and run `ai init`",
                    ),
                );
            }
        };
        Config::parse(path, &text)
    }

    pub(crate) fn parse(path: PathBuf, text: &str) -> Result<Config> {
        let invalid = |what: String| {
            Error::config(format!("invalid config {}: {what}", path.display()))
                .hint("fix the file, or move it aside and run `ai init` to write a fresh one")
        };
        let doc: Map<String, Value> = if text.trim().is_empty() {
            Map::new()
        } else {
            match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => map,
                Ok(_) => return Err(invalid("the top level must be a JSON object".into())),
                Err(e) => return Err(invalid(describe_json_error(&e))),
            }
        };
        let known = read_known(&doc).map_err(invalid)?;
        let timeout = match known.timeout {
            None => DEFAULT_TIMEOUT,
            Some((secs, _)) if secs > 0.0 && Duration::try_from_secs_f64(secs).is_ok() => {
                Duration::from_secs_f64(secs)
            }
            Some((_, written)) => {
                return Err(invalid(format!(
                    "timeout: expected a positive number of seconds, found {}",
                    check::show(&written)
                )));
            }
        };
        Ok(Config {
            path,
            doc,
            aliases: known.aliases,
            default_alias: known.default_alias.filter(|a| !a.is_empty()),
            backends: known.backends,
            timeout,
            chat: known.chat,
            context_tokens: known.context_tokens,
            kb: known.kb,
            tools: known.tools,
            mcp: known.mcp,
            budget: known.budget,
            prompts: known.prompts,
        })
    }

    /// Read-modify-write config.json under a lock (`<home>/.config.lock`), so two calls that
    /// change it at once (`ai default` while `ai init` asks the network) never undo each other:
    /// the file is read afresh under the lock, `change` applied to it, and saved. Returns the
    /// saved config and what `change` returned.
    pub(crate) fn update<T>(
        home: &Home,
        change: impl FnOnce(&mut Config) -> Result<T>,
    ) -> Result<(Config, T)> {
        home.ensure()?;
        let _lock = lock_config(home)?;
        let mut config = Config::load(home)?;
        let out = change(&mut config)?;
        config.save()?;
        Ok((config, out))
    }

    /// Set (or, with `None`, remove) one top-level key in the document.
    pub(crate) fn set_key(&mut self, key: &str, value: Option<Value>) {
        match value {
            Some(v) => {
                self.doc.insert(key.to_owned(), v);
            }
            None => {
                self.doc.remove(key);
            }
        }
    }

    /// Register (or, with `None`, remove) a knowledge base under `kb.bases`, keeping every
    /// other key of the `"kb"` object as it is.
    pub(crate) fn set_kb_base(&mut self, name: &str, base: Option<&kb::BaseConfig>) -> Result<()> {
        let kb = self
            .doc
            .entry("kb")
            .or_insert_with(|| Value::Object(Map::new()));
        if !kb.is_object() {
            *kb = Value::Object(Map::new());
        }
        let Value::Object(kb) = kb else {
            unreachable!("made an object above")
        };
        let bases = kb
            .entry("bases")
            .or_insert_with(|| Value::Object(Map::new()));
        if !bases.is_object() {
            *bases = Value::Object(Map::new());
        }
        let Value::Object(bases) = bases else {
            unreachable!("made an object above")
        };
        match base {
            Some(b) => {
                let v = serde_json::to_value(b)
                    .map_err(|e| Error::config(format!("cannot encode config: {e}")))?;
                bases.insert(name.to_owned(), v);
                self.kb.bases.insert(name.to_owned(), b.clone());
            }
            None => {
                bases.remove(name);
                self.kb.bases.remove(name);
            }
        }
        Ok(())
    }

    pub(crate) fn key(&self, key: &str) -> Option<&Value> {
        self.doc.get(key)
    }

    /// Write the document atomically (temp file, fsync, rename), mode 0600.
    pub(crate) fn save(&self) -> Result<()> {
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir)?;
        }
        let mut text = serde_json::to_string_pretty(&self.doc)
            .map_err(|e| Error::config(format!("cannot encode config: {e}")))?;
        text.push('\n');
        write_atomic(&self.path, text.as_bytes())
    }
}

/// Read a file that must be a regular one (links followed): a FIFO is refused at once rather
/// than waited on (it is opened non-blocking, then its type is checked).
fn read_regular(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// How long a config change waits for another one to finish (they take milliseconds).
const CONFIG_LOCK_WAIT: Duration = Duration::from_secs(10);

/// Take the config lock, waiting a bounded time. The lock file is never removed (removing it
/// would let two writers lock two different files).
fn lock_config(home: &Home) -> Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = home.dir.join(".config.lock");
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| Error::io("open", &path, e))?;
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(fs::TryLockError::WouldBlock) if start.elapsed() < CONFIG_LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::busy(format!(
                    "{} is being changed by another ai call",
                    home.config_file().display()
                ))
                .hint("try again in a moment; check for a hung `ai init` (ps)"));
            }
            Err(fs::TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
        }
    }
}

/// serde_json's message already ends in "at line L column C"; say it our way.
fn describe_json_error(e: &serde_json::Error) -> String {
    format!(
        "line {}, column {}: {}",
        e.line(),
        e.column(),
        strip_serde_position(&e.to_string())
    )
}

fn strip_serde_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_line_and_column() {
        let err = Config::parse("c.json".into(), "{\n  \"aliases\": {,}\n}").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("line 2, column 15"), "{msg}");
        assert_eq!(err.exit_code(), 3);
    }

    #[test]
    fn keeps_unknown_keys() {
        let mut c = Config::parse("c.json".into(), r#"{"x":{"y":1},"default_alias":"a"}"#).unwrap();
        c.set_key("default_alias", None);
        assert_eq!(c.key("x"), Some(&serde_json::json!({"y":1})));
        assert!(c.key("default_alias").is_none());
    }

    #[test]
    fn python_alias_pairs() {
        let c = Config::parse(
            "c.json".into(),
            r#"{"aliases":{"l3":["ollama","llama3.2"]}}"#,
        )
        .unwrap();
        assert_eq!(
            c.aliases["l3"],
            AliasTarget("ollama".into(), "llama3.2".into())
        );
    }
}
