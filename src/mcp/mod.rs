//! `ai mcp`: an MCP server on standard input and output, one JSON-RPC 2.0 message a line. It
//! offers an agent the user's knowledge bases, chats and models as tools:
//!
//! - `list_knowledge_bases`, `search_notes(query, base?, k?)`, `read_note(base, id)`;
//! - `ask(model, prompt, chat?, kb?)`: one turn, as `ai MODEL` in a shell would run it;
//! - `list_chats(limit?)`, `read_chat(id)`.
//!
//! Each tool runs `ai` itself as a child (`ai kb search --json`, `ai --json-stream`, …), as
//! `ai serve` does: an `ask` is an ordinary turn, with the same locks, windows and chat files
//! as a shell call, so the user can continue its chat from the shell; a child that fails
//! cannot take the server down. What is exposed is the user's choice (`--kb`, `--models`,
//! `--no-ask`, `--no-chats`, or config `mcp.serve`); nothing else is reachable. stdout
//! carries only protocol messages.
//!
//! Calls run each in a thread, so `ping` and `notifications/cancelled` are read while an `ask`
//! runs: a cancelled `ask` is stopped as Ctrl+C stops a call (its partial reply saved, marked
//! interrupted), and gets no answer, as the protocol has it. With a `progressToken`, an `ask`
//! sends `notifications/progress` as the reply streams.

mod tools;

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use serde_json::{Value, json};

use crate::config::{Config, Home};
use crate::error::{Error, Result};
use crate::serve::child::Stopper;

/// The protocol versions `ai mcp` speaks, newest first.
pub(crate) const VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// A line longer than this is not a message `ai mcp` reads.
const MAX_LINE: u64 = 4 << 20;

/// How often the server checks for a signal while no message comes.
const WATCH: Duration = Duration::from_millis(200);

/// Calls that run at once, at most.
const MAX_RUNNING: usize = 8;

/// What the command line asked for.
#[derive(Debug, Default)]
pub(crate) struct Options {
    pub(crate) kb: Vec<String>,
    pub(crate) no_kb: bool,
    pub(crate) models: Vec<String>,
    pub(crate) no_ask: bool,
    pub(crate) no_chats: bool,
    pub(crate) timeout: Option<Duration>,
}

/// What this server exposes, settled at start.
#[derive(Debug)]
pub(crate) struct Exposed {
    /// The knowledge bases the tools reach (empty: no knowledge-base tools).
    pub(crate) bases: Vec<String>,
    /// The models `ask` may use; `None`: every alias `ai` knows. `ask` is offered at all only
    /// when `ask` is true.
    pub(crate) models: Option<Vec<String>>,
    pub(crate) ask: bool,
    pub(crate) chats: bool,
    /// How long one `ask` may run.
    pub(crate) timeout: Duration,
    /// This very program, run for each call.
    pub(crate) exe: PathBuf,
    /// The chats `ask` started on this connection (they can be continued even when the chats
    /// are not exposed).
    pub(crate) made: Mutex<Vec<String>>,
}

/// Default `ask` time limit.
const ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// Settle what is exposed: the command line, else config `mcp.serve`, else everything. A base
/// or model named that does not exist is an error here, before any message is read.
fn exposed(opts: &Options, config: &Config) -> Result<Exposed> {
    let serve = config.mcp.serve.clone().unwrap_or_default();
    let bases: Vec<String> = if opts.no_kb {
        Vec::new()
    } else if !opts.kb.is_empty() {
        opts.kb.clone()
    } else if let Some(kb) = &serve.kb {
        kb.clone()
    } else {
        config.kb.bases.keys().cloned().collect()
    };
    let mut seen = Vec::new();
    for b in bases {
        if !config.kb.bases.contains_key(&b) {
            let known: Vec<&str> = config.kb.bases.keys().map(String::as_str).collect();
            return Err(Error::usage(format!(
                "--kb {}: there is no knowledge base of that name",
                crate::fmt::one_line(&b, 64)
            ))
            .hint(if known.is_empty() {
                "add one with: ai kb add NAME PATH".to_owned()
            } else {
                format!("the knowledge bases are: {}", known.join(", "))
            }));
        }
        if !seen.contains(&b) {
            seen.push(b);
        }
    }
    let models: Option<Vec<String>> = if !opts.models.is_empty() {
        Some(opts.models.clone())
    } else {
        serve.models.clone()
    };
    if let Some(models) = &models {
        for m in models {
            if crate::alias::resolve(m, config)?.is_none() {
                return Err(crate::alias::unknown(m, config));
            }
        }
    }
    let ask =
        !opts.no_ask && serve.ask != Some(false) && models.as_ref().is_none_or(|m| !m.is_empty());
    let chats = !opts.no_chats && serve.chats != Some(false);
    let timeout = opts
        .timeout
        .or_else(|| {
            serve
                .timeout
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
        })
        .unwrap_or(ASK_TIMEOUT);
    let exe = std::env::current_exe()
        .map_err(|e| Error::config(format!("cannot find the ai program itself: {e}")))?;
    Ok(Exposed {
        bases: seen,
        models,
        ask,
        chats,
        timeout,
        exe,
        made: Mutex::new(Vec::new()),
    })
}

/// The one writer of stdout: a whole message a line, flushed.
#[derive(Clone)]
pub(crate) struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    pub(crate) fn send(&self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).unwrap_or_default();
        line.push(b'\n');
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // A client gone: nothing to tell it; the end of stdin ends the server.
        let _ = out.write_all(&line).and_then(|()| out.flush());
    }

    /// [`Out::send`] unless another thread is writing (from a panic hook: never wait).
    #[cfg(panic = "abort")]
    fn try_send(&self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).unwrap_or_default();
        line.push(b'\n');
        if let Ok(mut out) = self.0.try_lock() {
            let _ = out.write_all(&line).and_then(|()| out.flush());
        }
    }

    fn result(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }
}

/// A call under way, as a cancellation finds it.
#[derive(Default)]
pub(crate) struct Running {
    pub(crate) cancelled: AtomicBool,
    /// The child that runs it, once started.
    pub(crate) stopper: Mutex<Option<Stopper>>,
}

impl Running {
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Some(s) = self
            .stopper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            s.stop();
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

type Calls = Arc<Mutex<HashMap<String, Arc<Running>>>>;

/// `ai mcp`: serve until the client closes stdin.
pub(crate) fn run(opts: &Options) -> Result<()> {
    let home = Home::locate()?;
    let config = Config::load(&home)?;
    let exposed = Arc::new(exposed(opts, &config)?);
    drop(config);
    // Searches run as children: they embed their queries with the local model kept here.
    crate::kb::local::service::start(&home.dir);
    let out = Out(Arc::new(Mutex::new(std::io::stdout())));
    answer_on_panic();
    let calls: Calls = Arc::new(Mutex::new(HashMap::new()));
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    // stdin is read on a thread of its own, so that a signal is seen while no message comes.
    let (tx, lines) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || read_lines(std::io::stdin().lock(), &tx))
        .map_err(|e| Error::config(format!("cannot start a thread: {e}")))?;
    loop {
        // SIGTERM or Ctrl+C: the running calls were stopped as Ctrl+C stops one (each saves
        // what it has); the server ends with them.
        if crate::signal::interrupted() {
            break;
        }
        let buf = match lines.recv_timeout(WATCH) {
            Ok(Line::Message(buf)) => buf,
            Ok(Line::TooLong) => {
                out.error(
                    &Value::Null,
                    -32700,
                    &format!("a message longer than {} MiB", MAX_LINE >> 20),
                );
                continue;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let msg: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.error(&Value::Null, -32700, &format!("not JSON: {e}"));
                continue;
            }
        };
        threads.retain(|t| !t.is_finished());
        if let Some(t) = handle(msg, &exposed, &out, &calls) {
            threads.push(t);
        }
    }
    // The client is gone: stop what runs (each saves what it has, marked interrupted). After a
    // signal the running calls were stopped by it already, and the client is still there:
    // each is answered (an error naming its chat) before the server ends. Cancelling them
    // here too left every call whose child took longer to end than this loop took to notice
    // the signal unanswered (a cancelled request gets no answer): the flaky SIGTERM test.
    if !crate::signal::interrupted() {
        for r in calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
        {
            r.cancel();
        }
    }
    for t in threads {
        let _ = t.join();
    }
    crate::kb::local::service::stop();
    if crate::signal::interrupted() {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// The answer to a call in which `ai` itself failed (a panic: a bug).
const PANICKED: &str = "internal error: ai failed while running this call (a bug, please report it); the server goes on";

thread_local! {
    /// The request a call thread answers, for the panic hook of a build without unwinding.
    static ANSWERING: std::cell::RefCell<Option<(Out, Value)>> =
        const { std::cell::RefCell::new(None) };
}

/// While alive, this thread answers request `id` on `out`.
struct Answering;

impl Answering {
    fn start(out: &Out, id: &Value) -> Answering {
        ANSWERING.with(|a| *a.borrow_mut() = Some((out.clone(), id.clone())));
        Answering
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        let _ = ANSWERING.try_with(|a| a.borrow_mut().take());
    }
}

/// Built with `panic = "abort"` (the release profile), a panic ends the process, and no
/// `catch_unwind` can keep it serving: the request is at least answered, then the process ends
/// as before (the client sees the server gone and can start it again).
#[cfg(panic = "abort")]
fn answer_on_panic() {
    let before = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = ANSWERING.try_with(|a| {
            if let Ok(a) = a.try_borrow()
                && let Some((out, id)) = a.as_ref()
            {
                let msg = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603,
                    "message": "internal error: ai failed while running this call (a bug, please report it); ai mcp ends"}});
                out.try_send(&msg);
            }
        });
        before(info);
    }));
}

#[cfg(not(panic = "abort"))]
fn answer_on_panic() {}

/// What the stdin reader passes on.
enum Line {
    /// One line, without its newline (at most [`MAX_LINE`] bytes).
    Message(Vec<u8>),
    /// A line longer than [`MAX_LINE`]: skipped, never held whole.
    TooLong,
}

/// Read `input` a line at a time until it ends (or the server stops listening).
fn read_lines(mut input: impl BufRead, tx: &mpsc::SyncSender<Line>) {
    loop {
        let mut buf = Vec::new();
        match (&mut input).take(MAX_LINE + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = if buf.last() == Some(&b'\n') {
            buf.pop();
            Line::Message(buf)
        } else if buf.len() as u64 > MAX_LINE {
            // The rest of that line is not a message either: dropped as it comes.
            drop(buf);
            if !skip_line(&mut input) {
                let _ = tx.send(Line::TooLong);
                return;
            }
            Line::TooLong
        } else {
            // The last line, without a newline.
            Line::Message(buf)
        };
        if tx.send(line).is_err() {
            return;
        }
    }
}

/// Consume `input` up to and including the next newline, a buffer at a time: `false` when it
/// ended first.
fn skip_line(input: &mut impl BufRead) -> bool {
    loop {
        let (found, n) = match input.fill_buf() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok([]) | Err(_) => return false,
            Ok(chunk) => match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (true, i + 1),
                None => (false, chunk.len()),
            },
        };
        input.consume(n);
        if found {
            return true;
        }
    }
}

/// One message: answered here, or (a tool call) in a thread of its own, returned.
fn handle(
    msg: Value,
    exposed: &Arc<Exposed>,
    out: &Out,
    calls: &Calls,
) -> Option<std::thread::JoinHandle<()>> {
    let Value::Object(map) = msg else {
        out.error(
            &Value::Null,
            -32600,
            "expected one JSON-RPC message a line (batches are not supported)",
        );
        return None;
    };
    let id = map.get("id").cloned();
    let method = map.get("method").and_then(Value::as_str);
    let params = map.get("params").cloned().unwrap_or(Value::Null);
    // A request whose method is not a string (or that has none and is no answer) would
    // otherwise go unanswered, and its client wait for ever.
    if let Some(id) = &id
        && method.is_none()
        && (map.contains_key("method")
            || !(map.contains_key("result") || map.contains_key("error")))
    {
        let valid_id = id.is_string() || id.is_i64() || id.is_u64();
        out.error(
            if valid_id { id } else { &Value::Null },
            -32600,
            "a request names its method, a string",
        );
        return None;
    }
    let (Some(method), Some(id)) = (method, id.clone()) else {
        // A notification, or an answer to a request of ours (there are none).
        if method == Some("notifications/cancelled")
            && let Some(req) = params.get("requestId")
        {
            let running = calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&req.to_string())
                .cloned();
            if let Some(r) = running {
                r.cancel();
            }
        }
        return None;
    };
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        out.error(
            &Value::Null,
            -32600,
            "a request ID is a string or an integer",
        );
        return None;
    }
    match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked
                .filter(|v| VERSIONS.contains(v))
                .unwrap_or(VERSIONS[0]);
            out.result(
                &id,
                json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "ai", "title": "ai: notes, chats and models",
                                   "version": env!("CARGO_PKG_VERSION")},
                    "instructions": tools::instructions(exposed),
                }),
            );
        }
        "ping" => out.result(&id, json!({})),
        "tools/list" => out.result(&id, json!({"tools": tools::list(exposed)})),
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            if !tools::offered(exposed, name) {
                out.error(
                    &id,
                    -32602,
                    &format!(
                        "unknown tool {:?}; tools/list names the tools offered",
                        crate::fmt::one_line(name, 64)
                    ),
                );
                return None;
            }
            let key = id.to_string();
            let running = Arc::new(Running::default());
            {
                let mut map = calls.lock().unwrap_or_else(PoisonError::into_inner);
                if map.len() >= MAX_RUNNING {
                    drop(map);
                    out.error(
                        &id,
                        -32000,
                        &format!(
                            "{MAX_RUNNING} calls are running already; try again when one has ended"
                        ),
                    );
                    return None;
                }
                if map.contains_key(&key) {
                    drop(map);
                    out.error(&id, -32600, "a request with this ID is running already");
                    return None;
                }
                map.insert(key.clone(), Arc::clone(&running));
            }
            let (exposed, out2, calls2, id2) = (
                Arc::clone(exposed),
                out.clone(),
                Arc::clone(calls),
                id.clone(),
            );
            let spawned = std::thread::Builder::new()
                .name("mcp-call".into())
                .spawn(move || {
                    let (out, calls, id) = (out2, calls2, id2);
                    // A bug in a call (a panic) is that call's error, never the server's end:
                    // the request is answered and the others go on. (Built with
                    // `panic = "abort"`, the hook answers it before the process ends.)
                    let answering = Answering::start(&out, &id);
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        tools::call(&exposed, &params, &running, &out)
                    }));
                    drop(answering);
                    calls
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&key);
                    match result {
                        // A cancelled request gets no answer.
                        Ok(_) if running.is_cancelled() => {}
                        Ok(result) => out.result(&id, result),
                        Err(_) => out.error(&id, -32603, PANICKED),
                    }
                });
            match spawned {
                Ok(t) => return Some(t),
                Err(e) => {
                    calls
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id.to_string());
                    out.error(&id, -32603, &format!("cannot run the call: {e}"));
                }
            }
        }
        m => out.error(
            &id,
            -32601,
            &format!("ai mcp does not support {}", crate::fmt::one_line(m, 64)),
        ),
    }
    None
}
