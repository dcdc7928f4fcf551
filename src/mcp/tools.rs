//! The tools of `ai mcp`: their schemas and descriptions (written for a model), and each call,
//! run as a child `ai` with JSON output. Results are bounded for the client (agents cap a tool
//! result, Claude Code at 25,000 tokens): passages and notes are cut with a note saying so.

use std::sync::PoisonError;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{Exposed, Out, Running};
use crate::serve::child::{self, Ending, Flow};

/// A result longer than this (bytes) is cut, with a note (about 12,000 tokens).
pub(crate) const MAX_TEXT: usize = 48 * 1024;
/// A passage of a search hit longer than this (characters) is cut.
const MAX_PASSAGE: usize = 1500;
/// `k` at most.
const MAX_K: u64 = 20;
/// `limit` of `list_chats` at most.
const MAX_CHATS: u64 = 200;
/// Output of one child kept at most.
const MAX_OUTPUT: usize = 16 << 20;
/// A text argument that goes on `ai`'s command line (a query, an ID, a model) longer than this
/// (bytes) is refused: one over 128 KiB cannot be passed to a program at all.
const MAX_ARG: usize = 16 * 1024;
/// An error text longer than this (bytes) is cut: an error echoes what it was given.
const MAX_ERROR: usize = 4 * 1024;
/// How long a child other than `ask` may run.
const QUICK: Duration = Duration::from_secs(120);
/// Progress notifications at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

pub(crate) const LIST_KB: &str = "list_knowledge_bases";
pub(crate) const SEARCH: &str = "search_notes";
pub(crate) const READ_NOTE: &str = "read_note";
pub(crate) const ASK: &str = "ask";
pub(crate) const LIST_CHATS: &str = "list_chats";
pub(crate) const READ_CHAT: &str = "read_chat";

/// The server's instructions: what it offers, in a sentence or two.
pub(crate) fn instructions(exposed: &Exposed) -> String {
    let mut parts = Vec::new();
    if !exposed.bases.is_empty() {
        parts.push(format!(
            "Search the user's notes (knowledge bases: {}) with search_notes, then read a whole note with read_note.",
            exposed.bases.join(", ")
        ));
    }
    if exposed.ask {
        parts.push("Ask another AI model with ask; its answer is saved as a chat the user can continue, and you can continue it by passing its chat ID.".to_owned());
    }
    if exposed.chats {
        parts.push("list_chats and read_chat show the user's saved chats.".to_owned());
    }
    if parts.is_empty() {
        "This server offers no tools: the user exposed nothing.".to_owned()
    } else {
        parts.join(" ")
    }
}

/// The tool `name` is offered.
pub(crate) fn offered(exposed: &Exposed, name: &str) -> bool {
    list(exposed)
        .iter()
        .any(|t| t["name"].as_str() == Some(name))
}

/// The tools offered, as `tools/list` gives them.
pub(crate) fn list(exposed: &Exposed) -> Vec<Value> {
    let mut out = Vec::new();
    let read_only = json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false});
    if !exposed.bases.is_empty() {
        let base = json!({"type": "string", "enum": exposed.bases,
            "description": "The knowledge base (list_knowledge_bases names them)."});
        out.push(json!({
            "name": LIST_KB,
            "title": "List knowledge bases",
            "description": "The user's knowledge bases (folders of notes) that can be searched: name, description, number of notes.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": read_only,
        }));
        out.push(json!({
            "name": SEARCH,
            "title": "Search notes",
            "description": format!("Search the user's notes for a query (words or a question; matched by keywords, and by meaning where the base has embeddings). Returns the best hits, each with the note's ID, title, ordering, path, a score for ranking and a passage (cut at {MAX_PASSAGE} characters). Read a whole note with read_note(base, id)."),
            "inputSchema": {"type": "object", "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "base": base,
                "k": {"type": "integer", "minimum": 1, "maximum": MAX_K,
                      "description": format!("How many notes (default 5, at most {MAX_K}).")}},
                "required": ["query"]},
            "annotations": read_only,
        }));
        out.push(json!({
            "name": READ_NOTE,
            "title": "Read a note",
            "description": format!("The whole text of one note, by the ID (or path) a search hit gave. A note over {} KiB is cut, with a note saying so.", MAX_TEXT / 1024),
            "inputSchema": {"type": "object", "properties": {
                "base": base,
                "id": {"type": "string", "description": "The note's ID or its path in the folder, as search_notes gave it."}},
                "required": ["base", "id"]},
            "annotations": read_only,
        }));
    }
    if exposed.ask {
        let mut model = json!({"type": "string"});
        let mut required = vec!["prompt"];
        match &exposed.models {
            Some(m) => {
                model["enum"] = json!(m);
                model["description"] = json!(format!(
                    "The model to ask, by the user's alias{}.",
                    if m.len() == 1 { " (only this one)" } else { "" }
                ));
                if m.len() > 1 {
                    required.push("model");
                }
            }
            None => {
                model["description"] = json!(
                    "The model to ask, by alias: sonnet, opus, gpt, gemini, codex, … or provider:model (openai:gpt-5, ollama:llama3). Leave it out for the user's default model, or the chat's own when continuing."
                );
            }
        }
        let mut props = json!({
            "model": model,
            "prompt": {"type": "string", "description": "The question or task, complete: the model sees only this chat, not your conversation."},
            "chat": {"type": "string", "description": "A chat ID a previous ask returned, to continue that conversation. Leave it out to start a new chat."},
        });
        if !exposed.bases.is_empty() {
            props["kb"] = json!({"type": "string", "enum": exposed.bases,
                "description": "Ground the answer in this knowledge base: the best passages are given to the model with the prompt."});
        }
        out.push(json!({
            "name": ASK,
            "title": "Ask another model",
            "description": "Ask another AI model (through the user's own CLIs and API keys) and get its reply and the chat ID. Each ask is one turn of a saved chat: pass the chat ID back to continue it, and the user can continue it from the shell too. May take a minute or more.",
            "inputSchema": {"type": "object", "properties": props, "required": required},
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true},
        }));
    }
    if exposed.chats {
        out.push(json!({
            "name": LIST_CHATS,
            "title": "List chats",
            "description": "The user's saved chats with AI models, most recently used first: ID, title, model, when, number of messages.",
            "inputSchema": {"type": "object", "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_CHATS,
                          "description": format!("How many (default 20, at most {MAX_CHATS}).")}}},
            "annotations": read_only,
        }));
        out.push(json!({
            "name": READ_CHAT,
            "title": "Read a chat",
            "description": format!("The messages of one saved chat, by ID. A long chat keeps its latest messages (about {} KiB), with a note saying how many were left out.", MAX_TEXT / 1024),
            "inputSchema": {"type": "object", "properties": {
                "id": {"type": "string", "description": "The chat ID (list_chats gives them)."}},
                "required": ["id"]},
            "annotations": read_only,
        }));
    }
    out
}

/// Run one `tools/call`: the result object (`isError` for a tool's failure, which the model
/// reads).
pub(crate) fn call(exposed: &Exposed, params: &Value, running: &Running, out: &Out) -> Value {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return failed("the arguments must be a JSON object"),
    };
    let token = params
        .pointer("/_meta/progressToken")
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned();
    // Tests of a panic in a call (debug builds only: a release build has no such hook).
    #[cfg(debug_assertions)]
    if std::env::var_os("AI_CLI_DEBUG_PANIC_TOOL").is_some_and(|t| t == name) {
        panic!("a panic asked for by AI_CLI_DEBUG_PANIC_TOOL");
    }
    let done = match name {
        LIST_KB => list_kb(exposed, running),
        SEARCH => search(exposed, args, running),
        READ_NOTE => read_note(exposed, args, running),
        ASK => ask(exposed, args, running, out, token),
        LIST_CHATS => list_chats(exposed, args, running),
        READ_CHAT => read_chat(exposed, args, running),
        _ => Err("no such tool".to_owned()),
    };
    match done {
        Ok(text) => json!({"content": [{"type": "text", "text": text}], "isError": false}),
        Err(why) => failed(&why),
    }
}

fn failed(why: &str) -> Value {
    let mut text = why.to_owned();
    if text.len() > MAX_ERROR {
        let mut at = MAX_ERROR;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push_str(" … (error cut)");
    }
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

type Done = std::result::Result<String, String>;

/// A text argument that goes on `ai`'s command line: at most [`MAX_ARG`] bytes.
fn text_arg<'a>(
    args: &'a Map<String, Value>,
    key: &str,
) -> std::result::Result<Option<&'a str>, String> {
    match long_text_arg(args, key)? {
        Some(s) if s.len() > MAX_ARG => Err(format!(
            "{key}: longer than {} KiB; give a shorter one",
            MAX_ARG / 1024
        )),
        s => Ok(s),
    }
}

/// A text argument of any length (the prompt, which goes on stdin).
fn long_text_arg<'a>(
    args: &'a Map<String, Value>,
    key: &str,
) -> std::result::Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.contains('\0') => Err(format!("{key}: holds a NUL character")),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{key}: expected a string")),
    }
}

fn count_arg(
    args: &Map<String, Value>,
    key: &str,
    default: u64,
    max: u64,
) -> std::result::Result<u64, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }) {
            // `k` capped, not refused: the client gets what fits.
            Some(n) if n >= 1 => Ok(n.min(max)),
            _ => Err(format!("{key}: expected a whole number from 1 to {max}")),
        },
    }
}

/// A knowledge base the user exposed, or the reason it cannot be reached.
fn base_arg<'a>(
    exposed: &'a Exposed,
    args: &Map<String, Value>,
) -> std::result::Result<Option<&'a str>, String> {
    match text_arg(args, "base")? {
        None => Ok(None),
        Some(b) => exposed
            .bases
            .iter()
            .find(|x| x.as_str() == b)
            .map(|x| Some(x.as_str()))
            .ok_or_else(|| {
                format!(
                    "there is no knowledge base {:?} here; the bases are: {}",
                    crate::fmt::one_line(b, 64),
                    exposed.bases.join(", ")
                )
            }),
    }
}

/// Run `ai ARGS` to its end: its stdout, or its error (and hint) as the result text.
fn run_ai(
    exposed: &Exposed,
    args: &[&str],
    running: &Running,
) -> std::result::Result<Vec<u8>, String> {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let started = child::start(&exposed.exe, "mcp", &args, None, MAX_OUTPUT)
        .map_err(|e| format!("ai could not run: {e}"))?;
    watch(&started, running);
    let mut out = Vec::new();
    let outcome = started.supervise(None, QUICK, &mut |line| {
        if out.len() + line.len() > MAX_OUTPUT {
            return Flow::TooLarge;
        }
        out.extend_from_slice(line);
        Flow::Go
    });
    match outcome.ending {
        Ending::Exited(0) => Ok(out),
        Ending::Exited(code) => {
            let (message, hint) = crate::serve::reply::scraped(&outcome.stderr, code);
            Err(match hint {
                Some(h) => format!("{message} ({h})"),
                None => message,
            })
        }
        Ending::Gone => Err("stopped: the call was cancelled".to_owned()),
        Ending::TimedOut => Err(format!(
            "it took longer than {}",
            crate::fmt::human_duration(QUICK)
        )),
        Ending::TooLarge => Err("its output was too large".to_owned()),
    }
}

/// Let a cancellation reach the child; one that came before it started stops it at once.
fn watch(started: &child::Running, running: &Running) {
    *running
        .stopper
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Some(started.stopper());
    if running.is_cancelled() {
        running.cancel();
    }
}

fn parsed(out: &[u8]) -> std::result::Result<Value, String> {
    serde_json::from_slice(out)
        .map_err(|e| format!("ai answered with something that is not JSON: {e}"))
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn list_kb(exposed: &Exposed, running: &Running) -> Done {
    let all = parsed(&run_ai(exposed, &["kb", "list", "--json"], running)?)?;
    let rows: Vec<Value> = all
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            r["name"]
                .as_str()
                .is_some_and(|n| exposed.bases.iter().any(|b| b == n))
        })
        .map(|r| {
            // The folder stays on the user's side: the name is what the tools take.
            json!({"name": r["name"], "description": r.get("description").cloned().unwrap_or(Value::Null),
                   "notes": r.get("notes").cloned().unwrap_or(Value::Null),
                   "search": if r.get("embed").is_some_and(|e| !e.is_null()) { "keywords and meaning" } else { "keywords" }})
        })
        .collect();
    Ok(pretty(&Value::Array(rows)))
}

fn search(exposed: &Exposed, args: &Map<String, Value>, running: &Running) -> Done {
    let query = text_arg(args, "query")?.unwrap_or("");
    if query.trim().is_empty() {
        return Err("query: give what to look for".to_owned());
    }
    let k = count_arg(args, "k", 5, MAX_K)?;
    let bases: Vec<&str> = match base_arg(exposed, args)? {
        Some(b) => vec![b],
        None => exposed.bases.iter().map(String::as_str).collect(),
    };
    let k_text = k.to_string();
    let mut hits: Vec<Value> = Vec::new();
    let mut cut = 0;
    for base in bases {
        let out = run_ai(
            exposed,
            &["kb", "search", base, "-k", &k_text, "--json", "--", query],
            running,
        )?;
        for mut h in parsed(&out)?.as_array().cloned().unwrap_or_default() {
            if let Some(p) = h["passage"].as_str()
                && p.chars().count() > MAX_PASSAGE
            {
                let kept: String = p.chars().take(MAX_PASSAGE).collect();
                h["passage"] = json!(format!(
                    "{kept} … (passage cut; read_note gives the whole note)"
                ));
                cut += 1;
            }
            let mut hit = json!({"base": base, "id": h["id"], "title": h["title"]});
            if let Some(o) = h.get("ordering").filter(|o| !o.is_null()) {
                hit["ordering"] = o.clone();
            }
            hit["path"] = h["path"].clone();
            hit["score"] = h["score"].clone();
            if let Some(s) = h
                .get("heading")
                .filter(|s| s.as_str().is_some_and(|s| !s.is_empty()))
            {
                hit["heading"] = s.clone();
            }
            hit["passage"] = h["passage"].clone();
            hits.push(hit);
        }
    }
    if hits.is_empty() {
        return Ok(format!(
            "no notes match {:?}",
            crate::fmt::one_line(query, 200)
        ));
    }
    // Fit the whole: the hits that come last are left out.
    let mut left_out = 0;
    while hits.len() > 1 && pretty(&Value::Array(hits.clone())).len() > MAX_TEXT {
        hits.pop();
        left_out += 1;
    }
    let mut text = pretty(&Value::Array(hits));
    if left_out > 0 {
        text.push_str(&format!(
            "\n({left_out} more hits left out to keep the result under {} KiB: ask for fewer with k)",
            MAX_TEXT / 1024
        ));
    }
    if cut > 0 {
        text.push_str(&format!(
            "\n({cut} passage{} cut at {MAX_PASSAGE} characters)",
            if cut == 1 { "" } else { "s" }
        ));
    }
    Ok(text)
}

fn read_note(exposed: &Exposed, args: &Map<String, Value>, running: &Running) -> Done {
    let Some(base) = base_arg(exposed, args)? else {
        return Err(format!(
            "base: name the knowledge base ({})",
            exposed.bases.join(", ")
        ));
    };
    let id = text_arg(args, "id")?.unwrap_or("");
    if id.trim().is_empty() || id.contains(['\n', '\r']) {
        return Err("id: give the note's ID or path, as search_notes gave it".to_owned());
    }
    let note = parsed(&run_ai(
        exposed,
        &["kb", "show", base, "--json", "--", id],
        running,
    )?)?;
    let mut head = format!(
        "# {}\nbase: {base} · id: {} · path: {}",
        note["title"].as_str().unwrap_or(""),
        note["id"].as_str().unwrap_or(id),
        note["path"].as_str().unwrap_or("")
    );
    if let Some(o) = note["ordering"].as_str() {
        head.push_str(&format!(" · ordering: {o}"));
    }
    let body = note["text"].as_str().unwrap_or("");
    Ok(format!("{head}\n\n{}", bounded(body, "the note")))
}

/// `text` cut to [`MAX_TEXT`] bytes at a character boundary, with a note saying so.
fn bounded(text: &str, what: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_owned();
    }
    let mut at = MAX_TEXT;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!(
        "{}\n… (cut: {what} is {} KiB; the first {} KiB are kept)",
        &text[..at],
        text.len().div_ceil(1024),
        MAX_TEXT / 1024
    )
}

fn list_chats(exposed: &Exposed, args: &Map<String, Value>, running: &Running) -> Done {
    let limit = count_arg(args, "limit", 20, MAX_CHATS)?.to_string();
    let rows = parsed(&run_ai(
        exposed,
        &["chat", "list", "--json", "--limit", &limit],
        running,
    )?)?;
    let mut rows = rows.as_array().cloned().unwrap_or_default();
    let mut left_out = 0;
    while rows.len() > 1 && pretty(&Value::Array(rows.clone())).len() > MAX_TEXT {
        rows.pop();
        left_out += 1;
    }
    let mut text = pretty(&Value::Array(rows));
    if left_out > 0 {
        text.push_str(&format!(
            "\n({left_out} more chats left out; ask for fewer with limit)"
        ));
    }
    Ok(text)
}

/// A chat ID as `ai` makes them (letters, digits, `-`, `_`), never an option.
fn chat_id(id: &str) -> std::result::Result<&str, String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(id)
    } else {
        Err(format!(
            "{:?} is not a chat ID",
            crate::fmt::one_line(id, 64)
        ))
    }
}

fn read_chat(exposed: &Exposed, args: &Map<String, Value>, running: &Running) -> Done {
    let id = chat_id(text_arg(args, "id")?.unwrap_or(""))?;
    let mut chat = parsed(&run_ai(
        exposed,
        &["chat", "show", "--json", "--", id],
        running,
    )?)?;
    let mut left_out = 0;
    if let Some(records) = chat.get_mut("records").and_then(Value::as_array_mut) {
        // The latest messages are kept.
        while records.len() > 1 && serde_json::to_string(records).map_or(0, |s| s.len()) > MAX_TEXT
        {
            records.remove(0);
            left_out += 1;
        }
    }
    let mut text = bounded(&pretty(&chat), "the chat");
    if left_out > 0 {
        text.push_str(&format!(
            "\n({left_out} earlier records left out to keep the result under {} KiB)",
            MAX_TEXT / 1024
        ));
    }
    Ok(text)
}

/// One turn: `ai --json-stream MODEL` with the prompt on stdin, as a shell call.
fn ask(
    exposed: &Exposed,
    args: &Map<String, Value>,
    running: &Running,
    out: &Out,
    token: Option<Value>,
) -> Done {
    let prompt = long_text_arg(args, "prompt")?.unwrap_or("");
    if prompt.trim().is_empty() {
        return Err("prompt: give the question or task".to_owned());
    }
    let model = match (text_arg(args, "model")?, &exposed.models) {
        (Some(m), Some(allowed)) if !allowed.iter().any(|a| a == m) => {
            return Err(format!(
                "the model {:?} is not offered here; the models are: {}",
                crate::fmt::one_line(m, 64),
                allowed.join(", ")
            ));
        }
        (Some(m), _) => Some(m.to_owned()),
        (None, Some(allowed)) if allowed.len() == 1 => Some(allowed[0].clone()),
        (None, Some(allowed)) => {
            return Err(format!("model: name one of {}", allowed.join(", ")));
        }
        (None, None) => None,
    };
    let mut cmd: Vec<String> = vec!["--json-stream".into(), "-q".into()];
    cmd.extend([
        "--timeout".into(),
        format!("{}", exposed.timeout.as_secs_f64()),
    ]);
    if let Some(c) = text_arg(args, "chat")? {
        let c = chat_id(c)?;
        // With the chats not exposed, only a chat this connection made can be continued.
        let made = exposed.made.lock().unwrap_or_else(PoisonError::into_inner);
        if !exposed.chats && !made.iter().any(|m| m == c) {
            return Err(format!(
                "the chat {c} is not one this connection started; only those can be continued here"
            ));
        }
        drop(made);
        cmd.extend(["--chat".into(), c.to_owned()]);
    }
    // A base the user did not expose is never used, not even the chat's or config's default.
    match text_arg(args, "kb")? {
        Some(kb) => match exposed.bases.iter().find(|b| b.as_str() == kb) {
            Some(b) => cmd.extend(["--kb".into(), b.clone()]),
            None => {
                return Err(format!(
                    "there is no knowledge base {:?} here{}",
                    crate::fmt::one_line(kb, 64),
                    if exposed.bases.is_empty() {
                        String::new()
                    } else {
                        format!("; the bases are: {}", exposed.bases.join(", "))
                    }
                ));
            }
        },
        None => cmd.push("--no-kb".into()),
    }
    if let Some(m) = &model {
        // Known to `ai`: never prompt text.
        let config = crate::config::Home::locate().and_then(|h| crate::config::Config::load(&h));
        let refused = match &config {
            Ok(c) => match crate::alias::resolve(m, c) {
                Ok(Some(_)) => None,
                Ok(None) => Some(crate::alias::unknown(m, c)),
                Err(e) => Some(e),
            },
            Err(e) => Some(crate::error::Error::config(e.to_string())),
        };
        if let Some(e) = refused {
            return Err(match e.hint_text() {
                Some(h) => format!("{e} ({h})"),
                None => e.to_string(),
            });
        }
        cmd.push(m.clone());
    }
    let started = child::start(
        &exposed.exe,
        "mcp",
        &cmd,
        Some(prompt.to_owned()),
        MAX_OUTPUT,
    )
    .map_err(|e| format!("ai could not run: {e}"))?;
    watch(&started, running);
    let mut reply = String::new();
    let mut done: Option<Value> = None;
    let mut error: Option<Value> = None;
    let mut last_progress: Option<Instant> = None;
    let mut pieces = 0u64;
    let outcome = started.supervise(None, exposed.timeout.saturating_add(Duration::from_secs(30)), &mut |line| {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return Flow::Go;
        };
        match v["type"].as_str() {
            Some("delta") => {
                let piece = v["text"].as_str().unwrap_or("");
                if reply.len() + piece.len() > MAX_OUTPUT {
                    return Flow::TooLarge;
                }
                reply.push_str(piece);
                pieces += 1;
                if let Some(t) = &token
                    && last_progress.is_none_or(|at| at.elapsed() >= PROGRESS_EVERY)
                {
                    last_progress = Some(Instant::now());
                    out.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": t, "progress": pieces,
                                   "message": format!("{} characters of the reply so far", reply.chars().count())}}));
                }
            }
            Some("done") => done = Some(v),
            Some("error") => error = Some(v),
            _ => {}
        }
        Flow::Go
    });
    if let Some(d) = done {
        let reply = d["reply"].as_str().map_or(reply, str::to_owned);
        let chat = d["chat"].as_str().unwrap_or("");
        let alias = d["alias"].as_str().unwrap_or("");
        let mut text = bounded(&reply, "the reply");
        if !chat.is_empty() {
            let mut made = exposed.made.lock().unwrap_or_else(PoisonError::into_inner);
            if !made.iter().any(|m| m == chat) {
                made.push(chat.to_owned());
            }
        }
        if chat.is_empty() {
            text.push_str(&format!("\n\n[model: {alias}]"));
        } else {
            text.push_str(&format!(
                "\n\n[chat: {chat} · model: {alias} — pass chat=\"{chat}\" to continue this conversation]"
            ));
        }
        return Ok(text);
    }
    let chat = error
        .as_ref()
        .and_then(|e| e["chat"].as_str())
        .map(str::to_owned);
    let in_chat = chat
        .map(|c| format!(" (chat {c}: the prompt is saved; continue it with chat=\"{c}\")"))
        .unwrap_or_default();
    if let Some(e) = error {
        let mut why = e["error"].as_str().unwrap_or("the call failed").to_owned();
        if let Some(h) = e["hint"].as_str() {
            why.push_str(&format!(" ({h})"));
        }
        return Err(format!("{why}{in_chat}"));
    }
    match outcome.ending {
        Ending::Gone => Err(format!("stopped: the call was cancelled{in_chat}")),
        Ending::TimedOut => Err(format!(
            "stopped: no reply within {}{in_chat}",
            crate::fmt::human_duration(exposed.timeout)
        )),
        Ending::TooLarge => Err(format!("stopped: the reply was too large{in_chat}")),
        Ending::Exited(code) => {
            let (message, hint) = crate::serve::reply::scraped(&outcome.stderr, code);
            Err(match hint {
                Some(h) => format!("{message} ({h}){in_chat}"),
                None => format!("{message}{in_chat}"),
            })
        }
    }
}
