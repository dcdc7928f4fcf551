//! MCP servers (config `mcp.servers.NAME`, `--mcp NAME`): a small synchronous JSON-RPC 2.0
//! client over a server's standard input and output, one JSON message a line.
//!
//! The server is started for the call, in a process group of its own: `initialize`, the
//! `notifications/initialized` notification, then `tools/list` (page by page). Its tools are
//! offered to the model as `SERVER__tool`; a call is a `tools/call`. When the call ends the
//! server is stopped: its input closed, then SIGTERM, then SIGKILL. A reader thread turns its
//! output into messages on a channel, so every request waits with a time limit; its stderr
//! goes to a bounded buffer shown in errors, never to our output.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::command::{STDERR_KEEP, how, tail_lines};
use crate::config::tools::{MCP_TIMEOUT, McpServerSpec, seconds};
use crate::error::{Error, Result};

/// The protocol version `ai` speaks.
pub(crate) const PROTOCOL: &str = "2025-06-18";

/// A line longer than this is not a message `ai` reads.
const MAX_LINE: u64 = 16 << 20;

/// Pages of `tools/list`, at most (a server that always answers with a cursor ends here).
const MAX_PAGES: usize = 100;

/// Tools of one server, at most: the rest are not offered (and not listed further). A model
/// is offered 128 tools at most by some providers; a server of thousands made `ai` spend
/// minutes sorting out their names, and would go with every request.
pub(crate) const MAX_TOOLS: usize = 512;

// ---- wire frames -----------------------------------------------------------------------------

#[derive(Serialize)]
struct Request<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: Value,
}

#[derive(Serialize)]
struct Notification<'a> {
    jsonrpc: &'static str,
    method: &'a str,
}

#[derive(Serialize)]
struct Response<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<RpcError>,
}

/// Any message from the server: a response (`id` and `result` or `error`), a request (`id` and
/// `method`) or a notification (`method`).
#[derive(Deserialize)]
struct Incoming {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<RpcError>,
}

#[derive(Debug, Serialize, Deserialize)]
struct RpcError {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct ListResult {
    #[serde(default)]
    tools: Vec<ToolInfo>,
    #[serde(default, rename = "nextCursor")]
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct ToolInfo {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, rename = "inputSchema")]
    input_schema: Option<Value>,
    #[serde(default)]
    annotations: Option<Annotations>,
}

/// What a server says about a tool (hints only: the server is not trusted, so a tool counts as
/// one that only reads when the server says so, and as one that acts otherwise).
#[derive(Deserialize, Default)]
struct Annotations {
    #[serde(default, rename = "readOnlyHint")]
    read_only: Option<bool>,
    #[serde(default, rename = "destructiveHint")]
    destructive: Option<bool>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(default)]
    content: Vec<Content>,
    #[serde(default, rename = "isError")]
    is_error: bool,
    #[serde(default, rename = "structuredContent")]
    structured: Option<Value>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default, rename = "mimeType")]
    mime_type: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    resource: Option<Resource>,
}

#[derive(Deserialize)]
struct Resource {
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

// ---- the client ------------------------------------------------------------------------------

/// What the reader thread saw on the server's output. Notifications are not passed on (`ai`
/// acts on none, and a server may send them at any rate while nobody reads: they would pile
/// up), and the channel is bounded, so a server that floods its output waits instead.
enum Line {
    Message(Value),
    Garbage(String),
    End,
}

/// Messages waiting to be read, at most (then the reader thread waits for `ai`).
const QUEUE: usize = 64;

/// The environment a server gets from `ai`'s own, as the official SDK clients pass it; its
/// config `env` is added. Everything else (provider keys above all) stays with `ai`.
const PASSED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
    "TZ",
];

/// Lines of a server's output that were not JSON: skipped (as the official clients do), the
/// count and the last one kept for an error message.
#[derive(Default)]
struct Skipped {
    count: u64,
    last: String,
}

/// A tool a server offers.
#[derive(Debug, Clone)]
pub(crate) struct RemoteTool {
    /// Its name on the server.
    pub(crate) name: String,
    /// The name the model sees: `SERVER__tool`.
    pub(crate) exposed: String,
    pub(crate) description: String,
    pub(crate) schema: Value,
    /// The server marks it as one that only reads (`readOnlyHint` and not `destructiveHint`):
    /// it runs without asking. Every other tool is asked for, as a command tool is.
    pub(crate) read_only: bool,
}

/// A running server.
pub(crate) struct Server {
    pub(crate) name: String,
    child: Option<Child>,
    /// Lines for the writer thread, which owns the server's input (so a server that stops
    /// reading never blocks `ai`: the request times out instead). Dropped: the input closes.
    stdin: Option<mpsc::Sender<Vec<u8>>>,
    /// The writer thread could not write: the server closed its input.
    input_closed: Arc<AtomicBool>,
    lines: Receiver<Line>,
    skipped: Arc<Mutex<Skipped>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The server's stderr has ended (all it printed is in `stderr`).
    stderr_done: Arc<AtomicBool>,
    next_id: u64,
    timeout: Duration,
    /// Why it can no longer be used (it exited, or sent garbage).
    broken: Option<String>,
    #[cfg(target_os = "linux")]
    reaper: Option<crate::backend::reaper::Reaper>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.name)
            .field("pid", &self.child.as_ref().map(Child::id))
            .finish()
    }
}

/// Why a request got no answer.
enum Fail {
    /// No answer within the time limit.
    Timeout(Duration),
    /// The server is gone or broken (the reason).
    Broken(String),
    /// It answered with a JSON-RPC error.
    Rpc(RpcError),
    Interrupted,
}

/// Start the server `name` and list its tools, within its own timeout and `bound` (the call's
/// `--timeout`). Every failure is an error for the call, with the tail of the server's stderr.
/// A server that offers no tools is no error: its list is empty (`offers_tools` false).
pub(crate) fn start(name: &str, spec: &McpServerSpec, bound: Option<Duration>) -> Result<Started> {
    let shown = std::iter::once(spec.command.as_str())
        .chain(spec.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let shown = crate::fmt::one_line(&shown, 200);
    let mut cmd = Command::new(&spec.command);
    cmd.env_clear();
    for key in PASSED_ENV {
        // A shell function exported by bash is no variable a server needs.
        if let Some(v) = std::env::var_os(key)
            && !v.as_encoded_bytes().starts_with(b"()")
        {
            cmd.env(key, v);
        }
    }
    cmd.args(&spec.args)
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    crate::backend::process::stop_with_parent(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => format!("`{}` was not found", spec.command),
            std::io::ErrorKind::PermissionDenied => {
                format!("`{}`: permission denied", spec.command)
            }
            _ => e.to_string(),
        };
        Error::backend(format!("cannot start the MCP server {name}: {why}")).hint(format!(
            "install it, or fix \"mcp.servers.{name}.command\" in config.json"
        ))
    })?;
    #[cfg(target_os = "linux")]
    let reaper = crate::backend::reaper::Reaper::watch(child.id());
    let (tx, lines) = mpsc::sync_channel(QUEUE);
    let skipped = Arc::new(Mutex::new(Skipped::default()));
    if let Some(out) = child.stdout.take() {
        let skipped = Arc::clone(&skipped);
        std::thread::spawn(move || read_lines(out, &tx, &skipped));
    }
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let stderr_done = Arc::new(AtomicBool::new(false));
    if let Some(mut pipe) = child.stderr.take() {
        let kept = Arc::clone(&stderr);
        let done = Arc::clone(&stderr_done);
        std::thread::spawn(move || {
            let _done = SetOnDrop(done);
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut pipe, &mut buf) {
                if n == 0 {
                    break;
                }
                let mut k = kept
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                k.extend_from_slice(&buf[..n]);
                if k.len() > 2 * STDERR_KEEP {
                    let cut = k.len() - STDERR_KEEP;
                    k.drain(..cut);
                }
            }
        });
    }
    let input_closed = Arc::new(AtomicBool::new(false));
    let mut server = Server {
        name: name.to_owned(),
        stdin: child
            .stdin
            .take()
            .map(|pipe| writer(pipe, Arc::clone(&input_closed))),
        input_closed,
        child: Some(child),
        lines,
        skipped,
        stderr,
        stderr_done,
        next_id: 1,
        timeout: seconds(spec.timeout, MCP_TIMEOUT),
        broken: None,
        #[cfg(target_os = "linux")]
        reaper,
    };
    let own = seconds(spec.timeout, MCP_TIMEOUT);
    let limit = Instant::now() + bound.map_or(own, |b| b.min(own));
    let handshake = server.handshake(limit).map_err(|(step, fail)| {
        let what = match fail {
            Fail::Timeout(t) => format!(
                "did not answer `{step}` within {}",
                crate::fmt::human_duration(t)
            ),
            Fail::Broken(why) => why,
            Fail::Rpc(e) => format!("refused `{step}`: {}", rpc_text(&e)),
            Fail::Interrupted => return Error::Interrupted,
        };
        let msg = server.with_stderr(format!("the MCP server {name} {what}"));
        Error::backend(msg).hint(format!(
            "check that `{shown}` is an MCP server that speaks on its standard input and output; \
             a slow one can be given longer with \"mcp.servers.{name}.timeout\" (seconds) \
             and --timeout"
        ))
    })?;
    let (tools, offers_tools) = handshake;
    Ok(Started {
        server,
        tools,
        offers_tools,
    })
}

/// A server that has started and answered, and its tools.
pub(crate) struct Started {
    pub(crate) server: Server,
    pub(crate) tools: Vec<RemoteTool>,
    /// It has the `tools` capability (a server of resources or prompts only has not).
    pub(crate) offers_tools: bool,
}

/// The writer thread: each line written and flushed, until the sender is dropped or a write
/// fails (then `closed` is set).
fn writer(mut pipe: ChildStdin, closed: Arc<AtomicBool>) -> mpsc::Sender<Vec<u8>> {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        for line in rx {
            if pipe.write_all(&line).and_then(|()| pipe.flush()).is_err() {
                closed.store(true, Ordering::SeqCst);
                return;
            }
        }
    });
    tx
}

/// The reader thread: one message per line, until the end of the output. Notifications are
/// dropped here; a line that is not JSON is skipped (and kept in `skipped`); only a line too
/// long to read ends the reading.
fn read_lines(out: impl std::io::Read, tx: &mpsc::SyncSender<Line>, skipped: &Mutex<Skipped>) {
    let mut reader = BufReader::new(out);
    loop {
        let mut buf = Vec::new();
        match std::io::Read::take(&mut reader, MAX_LINE + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => {
                let _ = tx.send(Line::End);
                return;
            }
            Ok(_) => {}
        }
        if buf.len() as u64 > MAX_LINE {
            let _ = tx.send(Line::Garbage(format!(
                "a line longer than {} MiB",
                MAX_LINE >> 20
            )));
            return;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let line = match serde_json::from_str::<Value>(text) {
            // A notification: nothing `ai` waits for.
            Ok(Value::Object(m)) if m.get("id").is_none_or(Value::is_null) => continue,
            Ok(v @ (Value::Object(_) | Value::Array(_))) => Line::Message(v),
            // A message (a tool's schema, say) nested past what the parser takes is no banner
            // to skip: the answer in it would never come, and the request would wait for its
            // whole time limit.
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                let _ = tx.send(Line::Garbage(
                    "a message nested too deeply to read (over 128 levels)".to_owned(),
                ));
                return;
            }
            _ => {
                let mut k = skipped.lock().unwrap_or_else(PoisonError::into_inner);
                k.count += 1;
                k.last = crate::fmt::one_line(text, 120);
                continue;
            }
        };
        if tx.send(line).is_err() {
            return;
        }
    }
}

impl Server {
    /// `initialize`, `notifications/initialized`, then every page of `tools/list`. On failure,
    /// the step that failed.
    fn handshake(
        &mut self,
        limit: Instant,
    ) -> std::result::Result<(Vec<RemoteTool>, bool), (&'static str, Fail)> {
        let init = json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "ai", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = self
            .request("initialize", init, limit)
            .map_err(|f| ("initialize", f))?;
        self.notify("notifications/initialized")
            .map_err(|f| ("notifications/initialized", f))?;
        let mut tools: Vec<RemoteTool> = Vec::new();
        // A server of resources or prompts only is asked for no tools (it would refuse).
        if answer.pointer("/capabilities/tools").is_none() {
            return Ok((tools, false));
        }
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let result = match self.request("tools/list", params, limit) {
                Ok(r) => r,
                // Said to have tools, and yet no such method: it has none.
                Err(Fail::Rpc(e)) if e.code == -32601 && tools.is_empty() => {
                    return Ok((tools, false));
                }
                Err(f) => return Err(("tools/list", f)),
            };
            let page: ListResult = serde_json::from_value(result).map_err(|e| {
                (
                    "tools/list",
                    Fail::Broken(format!(
                        "answered `tools/list` with an unexpected shape: {e}"
                    )),
                )
            })?;
            for t in page.tools {
                // Names that clash are sorted out (and said) where all tools are gathered.
                let exposed = exposed_name(&self.name, &t.name);
                let schema = match t.input_schema {
                    Some(s @ Value::Object(_)) => s,
                    _ => json!({"type": "object", "properties": {}}),
                };
                let hints = t.annotations.unwrap_or_default();
                tools.push(RemoteTool {
                    name: t.name,
                    exposed,
                    description: t.description.unwrap_or_default(),
                    schema,
                    read_only: hints.read_only == Some(true) && hints.destructive != Some(true),
                });
            }
            if tools.len() > MAX_TOOLS {
                // Said where the tools are gathered (it sees more than it offers).
                tools.truncate(MAX_TOOLS + 1);
                return Ok((tools, true));
            }
            match page.next_cursor {
                Some(c) if !c.is_empty() => cursor = Some(c),
                _ => return Ok((tools, true)),
            }
        }
        Err((
            "tools/list",
            Fail::Broken(format!(
                "kept answering `tools/list` with more pages (over {MAX_PAGES})"
            )),
        ))
    }

    /// Call the tool `name` with `args`. `Ok`: the text of its result; `Err`: the error result
    /// (the tool's own error, or what went wrong with the server).
    pub(crate) fn call(
        &mut self,
        name: &str,
        args: Value,
        deadline: Option<Instant>,
    ) -> std::result::Result<String, String> {
        let mut limit = Instant::now() + self.timeout;
        if let Some(d) = deadline {
            limit = limit.min(d);
        }
        let server = self.name.clone();
        let result = match self.request(
            "tools/call",
            json!({"name": name, "arguments": args}),
            limit,
        ) {
            Ok(r) => r,
            Err(Fail::Timeout(t)) => {
                return Err(self.with_stderr(format!(
                    "the MCP server {server} did not answer within {}",
                    crate::fmt::human_duration(t)
                )));
            }
            Err(Fail::Broken(why)) => {
                return Err(self.with_stderr(format!("the MCP server {server} {why}")));
            }
            Err(Fail::Rpc(e)) => return Err(format!("{server}: {}", rpc_text(&e))),
            Err(Fail::Interrupted) => {
                return Err("stopped: the user interrupted the turn".to_owned());
            }
        };
        let result: CallResult = serde_json::from_value(result).map_err(|e| {
            format!("the MCP server {server} answered `tools/call` with an unexpected shape: {e}")
        })?;
        let mut parts: Vec<String> = result.content.iter().map(content_text).collect();
        if parts.is_empty()
            && let Some(s) = &result.structured
        {
            parts.push(s.to_string());
        }
        let text = parts.join("\n");
        if result.is_error {
            Err(if text.is_empty() {
                format!("{name} failed (the server gave no reason)")
            } else {
                text
            })
        } else {
            Ok(text)
        }
    }

    fn notify(&mut self, method: &str) -> std::result::Result<(), Fail> {
        let frame = Notification {
            jsonrpc: "2.0",
            method,
        };
        self.send(&frame)
    }

    fn send(&mut self, frame: &impl Serialize) -> std::result::Result<(), Fail> {
        if let Some(why) = &self.broken {
            return Err(Fail::Broken(why.clone()));
        }
        let mut line = serde_json::to_vec(frame).unwrap_or_default();
        line.push(b'\n');
        let sent = !self.input_closed.load(Ordering::SeqCst)
            && self.stdin.as_ref().is_some_and(|w| w.send(line).is_ok());
        if sent { Ok(()) } else { Err(self.gone()) }
    }

    /// Send a request and wait for its answer until `limit` (or Ctrl+C). Requests of the
    /// server are answered (`ping`; anything else is not supported), notifications and answers
    /// to earlier requests skipped.
    fn request(
        &mut self,
        method: &str,
        params: Value,
        limit: Instant,
    ) -> std::result::Result<Value, Fail> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })?;
        let started = Instant::now();
        loop {
            if crate::signal::interrupted() {
                return Err(Fail::Interrupted);
            }
            let left = limit.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Fail::Timeout(started.elapsed()));
            }
            let line = match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => Line::End,
            };
            let v = match line {
                Line::End => return Err(Fail::Broken(self.gone_why())),
                Line::Garbage(g) => {
                    let why = format!("sent something that is not JSON-RPC: {g}");
                    self.broken = Some(why.clone());
                    return Err(Fail::Broken(why));
                }
                Line::Message(v) => v,
            };
            // A batch (an array) is not something ai asked for.
            let Ok(msg) = serde_json::from_value::<Incoming>(v) else {
                continue;
            };
            match (&msg.id, &msg.method) {
                (Some(their), Some(m)) => {
                    let answer = Response {
                        jsonrpc: "2.0",
                        id: their,
                        result: (m == "ping").then(|| json!({})),
                        error: (m != "ping").then(|| RpcError {
                            code: -32601,
                            message: format!("ai does not support {}", crate::fmt::one_line(m, 64)),
                        }),
                    };
                    self.send(&answer)?;
                }
                (Some(their), None) if same_id(their, id) => {
                    if let Some(e) = msg.error {
                        return Err(Fail::Rpc(e));
                    }
                    return match msg.result {
                        Some(r) => Ok(r),
                        None => {
                            let why =
                                format!("answered `{method}` with neither a result nor an error");
                            Err(Fail::Broken(why))
                        }
                    };
                }
                _ => {}
            }
        }
    }

    /// The server's output ended: it is gone. Why, with its exit status when known.
    fn gone(&mut self) -> Fail {
        Fail::Broken(self.gone_why())
    }

    fn gone_why(&mut self) -> String {
        let mut status = None;
        if let Some(child) = self.child.as_mut() {
            // Its output closed; the exit itself follows within moments. Until it is reaped
            // its group ID is still its own: whatever it left running goes with it first.
            let pid = i32::try_from(child.id()).unwrap_or(0);
            if pid > 0 && exits_within(pid, Duration::from_millis(500)) {
                kill_group(pid, libc::SIGKILL);
                status = child.try_wait().ok().flatten();
            }
        }
        let why = match status {
            Some(s) => format!("has stopped ({})", how(s)),
            None => "closed its output".to_owned(),
        };
        if status.is_some() {
            // Reaped: nothing may signal its group from now on.
            self.child = None;
        }
        self.broken = Some(why.clone());
        why
    }

    /// `msg`, and the end of the server's stderr when it printed any.
    fn with_stderr(&self, msg: String) -> String {
        if self.broken.is_some() {
            // It has stopped: what it printed last is on its way.
            let until = Instant::now() + Duration::from_millis(300);
            while !self.stderr_done.load(Ordering::SeqCst) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let kept = self
            .stderr
            .lock()
            .map(|k| k.clone())
            .unwrap_or_else(|e| e.into_inner().clone());
        let skipped = self.skipped.lock().unwrap_or_else(PoisonError::into_inner);
        let msg = match skipped.count {
            0 => msg,
            n => format!(
                "{msg}; it printed {n} line{} that {} not JSON-RPC on its output (skipped), the last: {}",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" },
                skipped.last
            ),
        };
        match tail_lines(&kept) {
            Some(s) => format!("{msg}; its stderr ends with:\n{s}"),
            None => msg,
        }
    }

    /// Stop the server: close its input, then SIGTERM, then SIGKILL to its group.
    pub(crate) fn stop(&mut self) {
        drop(self.stdin.take());
        if let Some(mut child) = self.child.take() {
            // A grace period to end by itself, SIGTERM, the grace period, SIGKILL: the one
            // supervisor's way (backend/supervise.rs).
            crate::backend::supervise::end(&mut child);
        }
        #[cfg(target_os = "linux")]
        drop(self.reaper.take());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sets its flag when dropped (a thread's end, however it ends).
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

use crate::backend::supervise::{exits_within, kill_group};

fn same_id(their: &Value, ours: u64) -> bool {
    their.as_u64() == Some(ours) || their.as_str() == Some(ours.to_string().as_str())
}

fn rpc_text(e: &RpcError) -> String {
    format!(
        "{} (JSON-RPC error {})",
        crate::fmt::one_line(&e.message, 500),
        e.code
    )
}

/// One item of a result as text: text as it is, other kinds named.
fn content_text(c: &Content) -> String {
    match c.kind.as_str() {
        "text" => c.text.clone().unwrap_or_default(),
        "resource" => match &c.resource {
            Some(Resource { text: Some(t), uri }) => match uri {
                Some(u) => format!("[resource {u}]\n{t}"),
                None => t.clone(),
            },
            Some(Resource { uri, .. }) => {
                format!("[resource {}]", uri.as_deref().unwrap_or("(no uri)"))
            }
            None => "[resource]".to_owned(),
        },
        "resource_link" => format!("[link {}]", c.uri.as_deref().unwrap_or("(no uri)")),
        kind => format!(
            "[{kind}{}]",
            c.mime_type
                .as_deref()
                .map(|m| format!(" {m}"))
                .unwrap_or_default()
        ),
    }
}

/// `SERVER__tool`, made of what every provider accepts (letters, digits, `_`, `-`; at most 64).
pub(crate) fn exposed_name(server: &str, tool: &str) -> String {
    let mut name: String = format!("{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(64);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposed_names_are_valid_tool_names() {
        assert_eq!(exposed_name("fs", "read_file"), "fs__read_file");
        assert_eq!(exposed_name("fs", "read.file/é"), "fs__read_file__");
        let long = exposed_name("fs", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert!(super::super::file::valid_name(&long));
    }

    #[test]
    fn content_of_every_kind_is_text() {
        let items: Vec<Content> = serde_json::from_value(json!([
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
            {"type": "resource_link", "uri": "file:///b"},
            {"type": "audio"}
        ]))
        .unwrap();
        let texts: Vec<String> = items.iter().map(content_text).collect();
        assert_eq!(
            texts,
            [
                "hello",
                "[image image/png]",
                "[resource file:///a]\nbody",
                "[link file:///b]",
                "[audio]"
            ]
        );
    }

    #[test]
    fn notifications_and_lines_that_are_not_json_never_pile_up() {
        // 100,000 notifications and a banner while nobody reads, then one answer: the answer
        // is all that waits (before, each notification was queued).
        let mut out = String::from("Starting the server...\n");
        for i in 0..100_000 {
            out.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"n\":{i}}}}}\n"
            ));
        }
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let skipped = Mutex::new(Skipped::default());
        read_lines(std::io::Cursor::new(out.into_bytes()), &tx, &skipped);
        drop(tx);
        let got: Vec<Line> = rx.try_iter().collect();
        assert_eq!(got.len(), 2);
        assert!(matches!(&got[0], Line::Message(v) if v["id"] == 1));
        assert!(matches!(got[1], Line::End));
        let k = skipped.lock().unwrap();
        assert_eq!((k.count, k.last.as_str()), (1, "Starting the server..."));
    }

    #[test]
    fn ids_match_as_numbers_or_strings() {
        assert!(same_id(&json!(3), 3));
        assert!(same_id(&json!("3"), 3));
        assert!(!same_id(&json!(4), 3));
        assert!(!same_id(&Value::Null, 3));
    }
}
