//! Tool calling: the tools `ai` itself runs for a model on an HTTP provider, and how one call is
//! checked and run. The bounded loop of rounds is in `turn::send`; the wire shapes are in each
//! protocol's renderer and interpreter (`backend::http`).
//!
//! - [`kb`]: knowledge bases as tools (`--kb NAME --tools`);
//! - [`json`]: JSON documents (`--data FILE.json`) and their generic tools;
//! - [`file`]: domain tools declared in a tools file (`--tools-file FILE`);
//! - [`command`]: programs declared in config (`tools.commands`, `--tool NAME`), run after a yes;
//! - [`mcp`]: the tools of MCP servers declared in config (`mcp.servers`, `--mcp NAME`);
//! - [`schema`]: arguments checked against a tool's parameters;
//! - [`approve`]: the one approval path for tools that act, and who is asked.
//!
//! Every family is gathered into one registry per turn ([`Toolbox`]): each tool with its
//! declaration, where a call goes, whether it acts, and whether config lets it run without
//! asking. One policy decides ([`Toolbox::gate`]): a tool that only reads runs; one that acts
//! runs after `--yolo`, an allow list of config, or a yes from the face's [`approve::Approver`].
//!
//! Nothing a model sends makes a call fail hard: arguments that are not JSON, an unknown tool,
//! arguments that do not fit the schema, a tool that fails — each is an error result the model
//! reads, and the loop goes on.

pub(crate) mod approve;
pub(crate) mod command;
pub(crate) mod data;
pub(crate) mod file;
pub(crate) mod json;
pub(crate) mod kb;
pub(crate) mod mcp;
pub(crate) mod schema;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::{Value, json};

use crate::cli::CallArgs;
use crate::config::{Config, DEFAULT_MAX_ROUNDS};
use crate::conversation::{ToolCall, ToolDef};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::kb::Hit;

/// A result longer than this is stored and sent cut, with a note saying so.
pub(crate) const MAX_RESULT: usize = 32 * 1024;

/// An MCP tool whose description and schema are longer than this is not offered.
const MAX_DECLARATION: usize = 64 * 1024;

/// The MCP tools of a call are offered up to this many bytes of declarations in all.
const MAX_DECLARATIONS: usize = 1024 * 1024;

/// The generic tools over `--data` documents.
pub(crate) const JSON_KEYS: &str = "json_keys";
pub(crate) const JSON_VALUE: &str = "json_value";
pub(crate) const JSON_FIND: &str = "json_find";

/// What a call asked for, read once before anything is sent (files are read and checked here,
/// so a bad one fails before a chat is touched).
pub(crate) struct Setup {
    /// `--tools`: the knowledge bases as tools.
    pub(crate) kb_tools: bool,
    /// `--tools`, `--data` or `--tools-file` was given: only an HTTP provider can serve it.
    pub(crate) asked: bool,
    pub(crate) docs: Vec<json::Document>,
    pub(crate) domain: file::Domain,
    /// Command tools: named by `--tool`, or allowed by config.
    pub(crate) commands: Vec<command::CommandTool>,
    /// MCP servers started for this call (`--mcp`), stopped when it is dropped.
    pub(crate) mcp: Vec<Connected>,
    pub(crate) max_rounds: u32,
    /// How long starting the MCP servers took: part of what the first turn reports as its
    /// time (`elapsed_ms`), since the user waited for it.
    startup: Mutex<Option<std::time::Duration>>,
    /// Who is asked before a tool that acts runs (the face's choice).
    approver: Arc<dyn approve::Approver>,
}

impl std::fmt::Debug for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setup")
            .field("kb_tools", &self.kb_tools)
            .field("commands", &self.commands)
            .field("mcp", &self.mcp)
            .field("max_rounds", &self.max_rounds)
            .finish_non_exhaustive()
    }
}

impl Setup {
    /// The start-up time of the servers, once (for the first turn that asks).
    pub(crate) fn take_startup(&self) -> std::time::Duration {
        self.startup
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or_default()
    }
}

/// A running MCP server and the tools it offers.
#[derive(Debug)]
pub(crate) struct Connected {
    server: Mutex<mcp::Server>,
    /// The server's name in config.
    name: String,
    tools: Vec<mcp::RemoteTool>,
    /// `mcp.servers.NAME.allow`: tools that run without asking.
    allow: Vec<String>,
}

/// Read `--data`, `--tools-file` (or config `tools.file`), the command tools (`--tool`, config
/// `tools.allow`) and the round limit, and start the MCP servers of `--mcp` (a server that
/// does not start or answer is an error here, before anything is sent). A tool that acts is
/// asked for on the terminal (or refused under `ai serve` and `ai mcp`).
pub(crate) fn setup(config: &Config, args: &CallArgs) -> Result<Arc<Setup>> {
    setup_asking(config, args, approve::for_call())
}

/// [`setup`], with tools that act asked for by `approver` (`ai -i` asks in the session).
pub(crate) fn setup_asking(
    config: &Config,
    args: &CallArgs,
    approver: Arc<dyn approve::Approver>,
) -> Result<Arc<Setup>> {
    let max_rounds = args
        .tooling
        .max_tool_rounds
        .or(config.tools.max_rounds)
        .unwrap_or(DEFAULT_MAX_ROUNDS)
        .max(1);
    if args.tooling.data.len() > 2 {
        return Err(Error::usage(format!(
            "--data was given {} times; it takes two documents at most (primary, secondary)",
            args.tooling.data.len()
        )));
    }
    let mut docs = Vec::new();
    for (path, label) in args.tooling.data.iter().zip(["primary", "secondary"]) {
        docs.push(json::Document {
            label,
            path: path.clone(),
            value: json::read(path)?,
        });
    }
    let file: Option<PathBuf> = args.tooling.tools_file.clone().or_else(|| {
        (!docs.is_empty())
            .then(|| config.tools.file.clone())
            .flatten()
    });
    let domain = match &file {
        Some(f) if docs.is_empty() => {
            return Err(Error::usage(format!(
                "the tools file {} needs a document to read: give one with --data FILE.json",
                f.display()
            )));
        }
        Some(f) => file::load(
            f,
            docs.len() > 1,
            &[JSON_KEYS, JSON_VALUE, JSON_FIND, kb::LIST, kb::SEARCH],
        )?,
        None => file::Domain::default(),
    };
    let mut reserved = vec![JSON_KEYS, JSON_VALUE, JSON_FIND, kb::LIST, kb::SEARCH];
    reserved.extend(domain.tools.iter().map(|t| t.name.as_str()));
    let commands = command::select(config, &args.tooling.tool, &reserved)?;
    let mut servers = Vec::new();
    for name in &args.tooling.mcp {
        if servers.iter().any(|(n, _)| n == &name) {
            continue;
        }
        let Some(spec) = config.mcp.servers.get(name) else {
            let known: Vec<&str> = config.mcp.servers.keys().map(String::as_str).collect();
            return Err(Error::usage(format!(
                "--mcp {}: there is no MCP server of that name",
                crate::fmt::one_line(name, 64)
            ))
            .hint(if known.is_empty() {
                "declare one in config.json under \"mcp.servers\" (see \"MCP servers\" in the README)".to_owned()
            } else {
                format!("the MCP servers in config.json are: {}", known.join(", "))
            }));
        };
        servers.push((name, spec));
    }
    // Started last: every check above fails before a server is started.
    let mut mcp = Vec::new();
    let mut taken: std::collections::HashSet<String> =
        reserved.iter().map(|s| (*s).to_owned()).collect();
    // The bytes of the MCP tools' declarations offered so far.
    let mut declared = 0usize;
    taken.extend(commands.iter().map(|c| c.name.clone()));
    let starting = Instant::now();
    // `--timeout` bounds a server's start too (its own timeout may be shorter).
    let bound = args.timeout.unwrap_or(config.timeout);
    for (name, spec) in servers {
        let mcp::Started {
            server,
            tools,
            offers_tools,
        } = mcp::start(name, spec, Some(bound))?;
        if !offers_tools || tools.is_empty() {
            crate::output::Ui::new(args.quiet).warn(&format!(
                "MCP server {name} offers no tools (only resources or prompts, which ai does not use)"
            ));
        }
        // A name already taken keeps its first owner; a nameless tool cannot be called. Either
        // is said, not dropped in silence.
        let mut left_out = Vec::new();
        let more = tools.len() > mcp::MAX_TOOLS;
        let tools: Vec<mcp::RemoteTool> = tools
            .into_iter()
            .take(mcp::MAX_TOOLS)
            .filter(|t| {
                if t.name.is_empty() {
                    left_out.push("a tool with no name".to_owned());
                    return false;
                }
                // Each declaration goes with every request of the turn: bounded, each and all.
                let size = t.description.len() + t.schema.to_string().len();
                if size > MAX_DECLARATION {
                    left_out.push(format!(
                        "{} (its description and schema are {}, over {})",
                        crate::fmt::one_line(&t.name, 64),
                        crate::fmt::human_size(size as u64),
                        crate::fmt::human_size(MAX_DECLARATION as u64)
                    ));
                    return false;
                }
                if declared + size > MAX_DECLARATIONS {
                    left_out.push(format!(
                        "{} (the tools offered are {} already)",
                        crate::fmt::one_line(&t.name, 64),
                        crate::fmt::human_size(declared as u64)
                    ));
                    return false;
                }
                if !taken.insert(t.exposed.clone()) {
                    left_out.push(format!(
                        "{} (its name is taken)",
                        crate::fmt::one_line(&t.name, 64)
                    ));
                    return false;
                }
                declared += size;
                true
            })
            .collect();
        if more {
            left_out.push(format!(
                "every tool past the first {} (it offers more)",
                mcp::MAX_TOOLS
            ));
        }
        if !left_out.is_empty() {
            // Named up to a point: a server of thousands gets a line, not a page.
            let n = left_out.len();
            let mut shown: Vec<String> = left_out.into_iter().take(10).collect();
            if n > 10 {
                shown.push(format!("and {} more", n - 10));
            }
            crate::output::Ui::new(args.quiet).warn(&format!(
                "MCP server {name}: not offered: {}",
                shown.join(", ")
            ));
        }
        mcp.push(Connected {
            server: Mutex::new(server),
            name: name.clone(),
            tools,
            allow: spec.allow.clone(),
        });
    }
    let startup = (!mcp.is_empty()).then(|| starting.elapsed());
    Ok(Arc::new(Setup {
        kb_tools: args.tooling.tools,
        asked: args.tooling.tools
            || !args.tooling.data.is_empty()
            || args.tooling.tools_file.is_some()
            || !args.tooling.tool.is_empty()
            || !args.tooling.mcp.is_empty(),
        docs,
        domain,
        commands,
        mcp,
        max_rounds,
        startup: Mutex::new(startup),
        approver,
    }))
}

/// The providers that run tools, for the error a CLI backend gets.
pub(crate) const PROVIDERS: &str = "openai, openrouter, azure, glm and other OpenAI-compatible servers, anthropic, gemini-api, ollama-api";

/// The tools of one turn: one registry of every family, with one approval path.
pub(crate) struct Toolbox {
    /// What the model is offered, in order (the declarations sent with each request).
    pub(crate) defs: Vec<ToolDef>,
    /// For each of `defs`: where a call goes and whether it needs a yes.
    entries: Vec<Entry>,
    pub(crate) max_rounds: u32,
    /// `--yolo`: tools that act run without asking.
    pub(crate) yolo: bool,
    setup: Arc<Setup>,
    bases: Option<kb::Bases>,
}

/// Where a call of one tool goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    KbList,
    KbSearch,
    JsonKeys,
    JsonValue,
    JsonFind,
    /// A domain tool of the tools file (by its index).
    Domain(usize),
    /// A command tool (by its index).
    Command(usize),
    /// An MCP tool: the server's index, the tool's index.
    Mcp(usize, usize),
}

/// One tool of the registry.
#[derive(Debug, Clone, Copy)]
struct Entry {
    family: Family,
    /// It acts (a command; an MCP tool its server does not mark read-only): a yes is needed.
    acts: bool,
    /// Config lets it run without asking (`mcp.servers.NAME.allow`).
    allowed: bool,
}

/// One call, run.
pub(crate) struct Ran {
    pub(crate) content: String,
    pub(crate) is_error: bool,
    pub(crate) truncated: bool,
    pub(crate) ms: u64,
    /// The line shown on stderr: `searching notes for "backup" … 3 results`.
    pub(crate) line: String,
}

impl Toolbox {
    /// The tools of a turn: the knowledge bases `kb_names` (when they are tools), the data
    /// tools, the domain tools, the command tools and the MCP tools, in that order. A name
    /// offered twice keeps its first owner (setup refuses or says such clashes; this is the
    /// last guard, so a call can never reach a tool other than the one the model saw).
    /// `None` when there are none.
    pub(crate) fn new(setup: &Arc<Setup>, kb_names: Option<Vec<String>>) -> Option<Toolbox> {
        let mut defs = Vec::new();
        let mut entries = Vec::new();
        let mut add = |def: ToolDef, family: Family, acts: bool, allowed: bool| {
            if defs.iter().any(|d: &ToolDef| d.name == def.name) {
                return;
            }
            defs.push(def);
            entries.push(Entry {
                family,
                acts,
                allowed,
            });
        };
        let bases = kb_names.map(|names| {
            for def in kb::defs(&names) {
                let family = if def.name == kb::LIST {
                    Family::KbList
                } else {
                    Family::KbSearch
                };
                add(def, family, false, false);
            }
            kb::Bases::new(names)
        });
        if !setup.docs.is_empty() {
            for def in data_defs(setup) {
                let family = match def.name.as_str() {
                    JSON_KEYS => Family::JsonKeys,
                    JSON_VALUE => Family::JsonValue,
                    _ => Family::JsonFind,
                };
                add(def, family, false, false);
            }
        }
        for (i, t) in setup.domain.tools.iter().enumerate() {
            let def = ToolDef {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            };
            add(def, Family::Domain(i), false, false);
        }
        for (i, c) in setup.commands.iter().enumerate() {
            let def = ToolDef {
                name: c.name.clone(),
                description: c.description.clone(),
                parameters: c.parameters.clone(),
            };
            add(def, Family::Command(i), true, false);
        }
        for (s, connected) in setup.mcp.iter().enumerate() {
            for (i, t) in connected.tools.iter().enumerate() {
                let def = ToolDef {
                    name: t.exposed.clone(),
                    description: t.description.clone(),
                    parameters: t.schema.clone(),
                };
                // A tool the server does not mark read-only acts (the server is not trusted
                // to say otherwise); `mcp.servers.NAME.allow` names those that run unasked.
                let allowed = connected.allow.contains(&t.name);
                add(def, Family::Mcp(s, i), !t.read_only, allowed);
            }
        }
        (!defs.is_empty()).then(|| Toolbox {
            defs,
            entries,
            max_rounds: setup.max_rounds,
            yolo: false,
            setup: Arc::clone(setup),
            bases,
        })
    }

    /// `--data` documents were given (they are read anew by each call, never remembered).
    pub(crate) fn has_data(&self) -> bool {
        !self.setup.docs.is_empty()
    }

    /// Run one call. Never fails: what goes wrong is the result the model reads.
    pub(crate) fn run(
        &mut self,
        ctx: &Ctx,
        call: &ToolCall,
        deadline: Option<Instant>,
        sources: &mut Vec<Hit>,
    ) -> Ran {
        let started = Instant::now();
        let name = crate::fmt::one_line(&call.name, 64);
        let (result, line, bounded) = match self.dispatch(ctx, call, deadline, sources) {
            Ok(Done {
                text,
                line,
                bounded,
            }) => ((text, false), line, bounded),
            Err(why) => {
                let line = format!("{name} … error: {}", crate::fmt::one_line(&why, 100));
                ((why, true), line, false)
            }
        };
        let (content, truncated) = cut(result.0, &call.name);
        Ran {
            content,
            is_error: result.1,
            truncated: truncated || bounded,
            ms: started.elapsed().as_millis() as u64,
            line,
        }
    }

    /// The one policy: a tool that only reads runs; one that acts runs with `--yolo`, when
    /// config allows it, or after a yes from the face's approver. `Err`: the result the model
    /// reads (not confirmed, declined).
    fn gate(&self, name: &str, entry: Entry, args: &Value) -> std::result::Result<(), String> {
        if !entry.acts || entry.allowed || self.yolo {
            return Ok(());
        }
        let (kind, allow_key) = match entry.family {
            Family::Mcp(s, _) => (
                "MCP tool",
                Some(format!("mcp.servers.{}.allow", self.setup.mcp[s].name)),
            ),
            _ => ("command tool", None),
        };
        self.setup.approver.approve(&approve::Ask {
            name,
            kind,
            args,
            allow_key,
        })
    }

    fn dispatch(
        &mut self,
        ctx: &Ctx,
        call: &ToolCall,
        deadline: Option<Instant>,
        sources: &mut Vec<Hit>,
    ) -> std::result::Result<Done, String> {
        let Some(at) = self.defs.iter().position(|d| d.name == call.name) else {
            let names: Vec<&str> = self.defs.iter().map(|d| d.name.as_str()).collect();
            return Err(format!(
                "unknown tool {:?}; the tools are: {}",
                crate::fmt::one_line(&call.name, 64),
                names.join(", ")
            ));
        };
        let entry = self.entries[at];
        let args: Value = match serde_json::from_str(&call.arguments) {
            Ok(v @ Value::Object(_)) => v,
            Ok(other) => {
                return Err(format!(
                    "the arguments must be a JSON object, not {}",
                    schema::kind(&other)
                ));
            }
            Err(e) => return Err(format!("the arguments are not valid JSON: {e}")),
        };
        schema::check(&args, &self.defs[at].parameters)
            .map_err(|e| format!("invalid arguments: {e}"))?;
        self.gate(&call.name, entry, &args)?;
        let setup = Arc::clone(&self.setup);
        let docs = &setup.docs;
        let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("");
        match entry.family {
            Family::KbList => {
                let bases = self.bases.as_ref().ok_or_else(String::new)?;
                let (text, n) = bases.list(ctx);
                Ok(Done::new(text, format!("listing knowledge bases … {n}")))
            }
            Family::KbSearch => {
                let bases = self.bases.as_mut().ok_or_else(String::new)?;
                let query = arg("query");
                let which = args
                    .get("collection_name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| (bases.names.len() == 1).then(|| bases.names[0].clone()))
                    .unwrap_or_default();
                let shown = format!(
                    "searching {} for \"{}\"",
                    crate::fmt::one_line(&which, 40),
                    crate::fmt::one_line(query, 60)
                );
                let found = bases.search(ctx, &args, deadline, sources)?;
                let n = found.kept;
                let mut line = format!("{shown} … {n} result{}", if n == 1 { "" } else { "s" });
                if found.left_out > 0 {
                    line.push_str(&format!(
                        " ({} more left out: the result is kept under {} KiB)",
                        found.left_out,
                        MAX_RESULT / 1024
                    ));
                }
                Ok(Done {
                    text: found.text,
                    line,
                    bounded: found.left_out > 0,
                })
            }
            Family::JsonKeys => {
                let chosen = json::choose(docs, &args)?;
                let path = arg("path");
                let mut out = Vec::new();
                let mut count = 0;
                for d in chosen.iter().copied() {
                    match json::keys(&d.value, path) {
                        Ok((text, n)) => {
                            count += n;
                            out.push((d, text));
                        }
                        Err(e) if chosen.len() == 1 => return Err(e),
                        Err(e) => out.push((d, e)),
                    }
                }
                Ok(Done::new(
                    json::labelled(out),
                    format!("json: keys {} … {count}", shown_path(path)),
                ))
            }
            Family::JsonValue => {
                let chosen = json::choose(docs, &args)?;
                let path = arg("pointer");
                let mut out = Vec::new();
                let mut found = false;
                for d in chosen.iter().copied() {
                    match json::value(&d.value, path) {
                        Ok(text) => {
                            found = true;
                            out.push((d, text));
                        }
                        Err(e) => out.push((d, e)),
                    }
                }
                if !found {
                    return Err(out.into_iter().map(|(_, e)| e).next().unwrap_or_default());
                }
                Ok(Done::new(
                    json::labelled(out),
                    format!("json: {} … ok", shown_path(path)),
                ))
            }
            Family::JsonFind => {
                let chosen = json::choose(docs, &args)?;
                let text = arg("text");
                if text.is_empty() {
                    return Err("text: give the text to look for".into());
                }
                let max = args
                    .get("max_results")
                    .and_then(Value::as_u64)
                    .map_or(50, |m| m.clamp(1, 500) as usize);
                let mut out = Vec::new();
                let mut total = 0;
                for d in chosen.iter().copied() {
                    let (t, n) = json::find(&d.value, text, max);
                    total += n;
                    out.push((d, t));
                }
                Ok(Done::new(
                    json::labelled(out),
                    format!(
                        "json: find \"{}\" … {total} path{}",
                        crate::fmt::one_line(text, 60),
                        if total == 1 { "" } else { "s" }
                    ),
                ))
            }
            Family::Command(i) => {
                let tool = &setup.commands[i];
                let out = command::run(tool, &args, deadline)?;
                Ok(Done {
                    text: out.text,
                    line: format!("command {} … ok", tool.name),
                    bounded: out.cut,
                })
            }
            Family::Mcp(s, i) => {
                let connected = &setup.mcp[s];
                let tool = &connected.tools[i];
                let mut server = connected
                    .server
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let text = server.call(&tool.name, args.clone(), deadline)?;
                let line = format!(
                    "mcp {}: {} … ok",
                    server.name,
                    crate::fmt::one_line(&tool.name, 64)
                );
                Ok(Done::new(text, line))
            }
            Family::Domain(i) => {
                let tool = &setup.domain.tools[i];
                let obj = args.as_object().cloned().unwrap_or_default();
                match setup.domain.run(tool, docs, &obj) {
                    Ok((text, pointer)) => Ok(Done::new(text, format!("json: {pointer} … ok"))),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// A call that ran: the result text, the line shown on stderr, and whether the tool itself
/// left part of what it found out to stay under [`MAX_RESULT`] (its text says so).
struct Done {
    text: String,
    line: String,
    bounded: bool,
}

impl Done {
    fn new(text: String, line: String) -> Done {
        Done {
            text,
            line,
            bounded: false,
        }
    }
}

fn shown_path(p: &str) -> String {
    let p = crate::fmt::one_line(p.trim(), 80);
    if p.is_empty() { "/".to_owned() } else { p }
}

/// The generic data tools, each with a `document` argument.
fn data_defs(setup: &Setup) -> Vec<ToolDef> {
    let two = setup.docs.len() > 1;
    let doc = json::document_property(two);
    let which = if two {
        "the primary and secondary JSON documents"
    } else {
        "the JSON document"
    };
    vec![
        ToolDef {
            name: JSON_KEYS.into(),
            description: format!(
                "The keys under a path of {which} (a JSON pointer such as /sql; \"\" or / for the top), each with its type and size."
            ),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "a JSON pointer, e.g. /sql; \"\" or / for the top"},
                "document": doc}, "required": ["path"]}),
        },
        ToolDef {
            name: JSON_VALUE.into(),
            description: format!(
                "The value at a JSON pointer of {which} (e.g. /sql/abc123/elapsed). Long arrays and strings are summarized with counts."
            ),
            parameters: json!({"type": "object", "properties": {
                "pointer": {"type": "string", "description": "a JSON pointer, e.g. /sql/abc123"},
                "document": doc}, "required": ["pointer"]}),
        },
        ToolDef {
            name: JSON_FIND.into(),
            description: format!(
                "The paths of {which} whose key or value contains a text (ignoring case)."
            ),
            parameters: json!({"type": "object", "properties": {
                "text": {"type": "string", "description": "the text to look for"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 500},
                "document": doc}, "required": ["text"]}),
        },
    ]
}

/// A result cut to [`MAX_RESULT`] bytes (at a character boundary), and whether it was. The
/// note says what to ask `tool` for instead. (Knowledge-base passages are kept whole by
/// [`kb::fit`] before this; it is the last bound, for every tool.)
pub(crate) fn cut(mut text: String, tool: &str) -> (String, bool) {
    if text.len() <= MAX_RESULT {
        return (text, false);
    }
    let total = text.len();
    let mut at = MAX_RESULT;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    let ask = match tool {
        JSON_KEYS => " Ask for the keys of a deeper path.",
        JSON_VALUE => " Ask for a deeper pointer, e.g. one key or one array item.",
        JSON_FIND => " Ask for fewer paths (max_results), or look for a more precise text.",
        kb::SEARCH => " Ask for fewer passages (max_results).",
        _ => "",
    };
    text.push_str(&format!(
        "\n… (cut: the result was {} KiB; the first {} KiB are kept.{ask})",
        total.div_ceil(1024),
        MAX_RESULT / 1024
    ));
    (text, true)
}

/// One call as `--json` reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct CallLog {
    pub(crate) name: String,
    pub(crate) arguments: String,
    /// `ok` or `error`.
    pub(crate) status: &'static str,
    pub(crate) ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_cut_at_a_character_boundary() {
        let (t, cut_) = cut("é".repeat(MAX_RESULT), JSON_VALUE);
        assert!(cut_);
        assert!(t.contains("(cut: the result was 64 KiB"));
        assert!(t.ends_with("Ask for a deeper pointer, e.g. one key or one array item.)"));
        let (t, _) = cut("x".repeat(MAX_RESULT + 1), "get_sql_stats");
        assert!(t.ends_with("the first 32 KiB are kept.)"), "{t}");
        let (t, cut_) = cut("short".into(), JSON_KEYS);
        assert_eq!((t.as_str(), cut_), ("short", false));
    }
}
