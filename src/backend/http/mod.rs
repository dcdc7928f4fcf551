//! HTTP providers: one transport (ureq, blocking) shared by a pure request builder and a small
//! event interpreter per protocol. Streams by default; retries before the first byte of reply;
//! a stream that ends before its terminator, or carries an error, is an error.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod ndjson;
pub(crate) mod ollama;
pub(crate) mod openai;
pub(crate) mod provider;
pub(crate) mod ratelimit;
pub(crate) mod sse;

use std::io::{BufReader, Read};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::Value;

use self::provider::{Env, Protocol, Resolved};
use super::{End, Outcome, Request};
use crate::chat::record::Usage;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::output::{Sink, Ui};
use crate::signal;

/// A request ready to send.
#[derive(Debug)]
pub(crate) struct Built {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

/// What an interpreter makes of a stream event.
#[derive(Debug)]
pub(crate) enum Piece {
    Text(String),
    Usage(Usage),
    /// The protocol's terminator.
    Done,
    /// An error frame inside the stream.
    Fail(ErrorBody),
}

/// The useful parts of any provider's error body.
#[derive(Debug, Default, Clone)]
pub(crate) struct ErrorBody {
    pub(crate) message: String,
    /// `type`, `status` or `code`, as text.
    pub(crate) code: String,
    /// Gemini's `RetryInfo.retryDelay`.
    pub(crate) retry_delay: Option<Duration>,
}

impl ErrorBody {
    /// An `error` value: a string (Ollama) or an object (everyone else).
    pub(crate) fn from_value(v: &Value) -> ErrorBody {
        match v {
            Value::String(s) => ErrorBody {
                message: s.clone(),
                ..ErrorBody::default()
            },
            Value::Object(m) => {
                let text = |k: &str| match m.get(k) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => None,
                };
                let mut code: Vec<String> = ["type", "status", "code"]
                    .iter()
                    .filter_map(|k| text(k))
                    .collect();
                let mut retry_delay = None;
                if let Some(Value::Array(details)) = m.get("details") {
                    for d in details {
                        if let Some(Value::String(delay)) = d.get("retryDelay") {
                            retry_delay = parse_seconds(delay);
                        }
                        if let Some(Value::String(reason)) = d.get("reason") {
                            code.push(reason.clone());
                        }
                    }
                }
                ErrorBody {
                    message: text("message").unwrap_or_default(),
                    code: code.join(" "),
                    retry_delay,
                }
            }
            other => ErrorBody {
                message: other.to_string(),
                ..ErrorBody::default()
            },
        }
    }

    /// An error response body of any shape (JSON or not).
    pub(crate) fn parse(body: &str) -> ErrorBody {
        match serde_json::from_str::<Value>(body) {
            Ok(v) => match v.get("error") {
                Some(e) => ErrorBody::from_value(e),
                None => ErrorBody::from_value(&v),
            },
            Err(_) => {
                let t = body.trim();
                let cut = t.char_indices().nth(300).map_or(t.len(), |(i, _)| i);
                ErrorBody {
                    message: t[..cut].to_owned(),
                    ..ErrorBody::default()
                }
            }
        }
    }
}

/// Why a whole (non-streamed) reply could not be used.
#[derive(Debug)]
pub(crate) enum Bad {
    /// Not the shape this protocol promises.
    Invalid(String),
    /// The provider said no, in a 200 reply (an error body, a blocked prompt).
    Provider(ErrorBody),
}

/// A prompt refused by the provider's safety filter.
pub(crate) fn blocked(reason: &str) -> ErrorBody {
    ErrorBody {
        message: format!("the prompt was blocked ({reason})"),
        code: "blocked".into(),
        retry_delay: None,
    }
}

/// `"30s"`, `"1.5s"` → a duration.
fn parse_seconds(text: &str) -> Option<Duration> {
    let secs: f64 = text.trim().trim_end_matches('s').parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// A model or deployment name as one URL path segment.
pub(crate) fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `[{"role": "system"…}, {"role": "user"…}, …]`: the message array of OpenAI and Ollama.
pub(crate) fn messages_with_system(req: &Request<'_>) -> Vec<Value> {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = req.system {
        messages.push(serde_json::json!({"role": "system", "content": system}));
    }
    for m in req.messages {
        let role = match m.role {
            crate::backend::Role::User => "user",
            crate::backend::Role::Assistant => "assistant",
        };
        messages.push(serde_json::json!({"role": role, "content": m.content}));
    }
    messages
}

fn build(p: &Resolved, req: &Request<'_>) -> Built {
    let mut built = match p.protocol {
        Protocol::Openai | Protocol::Azure => openai::request(p, req, p.stream),
        Protocol::Anthropic => anthropic::request(p, req, p.stream),
        Protocol::Gemini => gemini::request(p, req, p.stream),
        Protocol::Ollama => ollama::request(p, req, p.stream),
    };
    built.headers.extend(p.headers.iter().cloned());
    built
}

fn resolve(req: &Request<'_>, config: &Config) -> Result<Resolved> {
    let env = Env::load(config);
    let mut p = provider::resolve(req.route.provider.name(), config, &env)?;
    // `--timeout` (the only way `req.timeout` differs from the global setting) wins over the
    // provider's own "timeout".
    if req.timeout != config.timeout {
        p.timeout = req.timeout;
    }
    if p.key_required && p.key.is_none() {
        return Err(
            Error::config(format!("no API key for {}", p.name)).hint(format!(
                "set {} in your shell or in {}",
                p.key_var,
                config.path.with_file_name(".env").display()
            )),
        );
    }
    Ok(p)
}

/// `--dry-run`: the request, with every secret replaced by `***`.
pub(crate) fn dry_run(req: &Request<'_>, config: &Config) -> Result<String> {
    let p = resolve(req, config)?;
    let built = build(&p, req);
    let mut out = format!("POST {}\n", redact(&built.url, &p));
    for (k, v) in all_headers(&built) {
        out.push_str(&format!("{k}: {}\n", redact(&v, &p)));
    }
    let body = serde_json::to_string_pretty(&built.body).unwrap_or_default();
    out.push('\n');
    out.push_str(&redact(&body, &p));
    out.push('\n');
    Ok(out)
}

fn all_headers(built: &Built) -> Vec<(String, String)> {
    let mut h = vec![("content-type".to_owned(), "application/json".to_owned())];
    h.extend(built.headers.iter().cloned());
    h
}

/// Replace the key wherever it appears.
fn redact(text: &str, p: &Resolved) -> String {
    match &p.key {
        Some(k) if k.len() >= 4 => text.replace(k.as_str(), "***"),
        _ => text.to_owned(),
    }
}

/// Messages from the worker thread that talks to the provider.
enum Msg {
    Text(String),
    Usage(Usage),
    End(std::result::Result<(), Error>),
}

/// Send a request to an HTTP provider, streaming text into `sink`.
pub(crate) fn send(
    req: &Request<'_>,
    config: &Config,
    sink: &mut dyn Sink,
    ui: &Ui,
    no_wait: bool,
) -> Result<Outcome> {
    let p = resolve(req, config)?;
    if let Some(rpm) = p.max_requests_per_minute {
        let home = config.path.parent().unwrap_or(std::path::Path::new("."));
        ratelimit::acquire(home, &p.name, rpm, no_wait, ui)?;
    }
    let built = build(&p, req);
    let model = req.route.model.clone();
    let ui = *ui;
    let (tx, rx) = mpsc::channel::<Msg>();
    // The worker does the blocking I/O; this thread stays free to notice Ctrl+C and to write
    // to stdout (where a closed pipe must stop everything).
    std::thread::spawn(move || {
        let result = exchange(&p, &built, &model, &ui, &tx);
        let _ = tx.send(Msg::End(result));
    });
    let mut text = String::new();
    let mut usage = None;
    loop {
        let msg = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => m,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if signal::interrupted() {
                    return Ok(Outcome {
                        text,
                        end: End::Interrupted,
                        usage,
                    });
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Ok(Outcome {
                    text,
                    end: End::Failed(Error::backend("the HTTP worker stopped unexpectedly")),
                    usage,
                });
            }
        };
        match msg {
            Msg::Text(t) => {
                if let Err(e) = sink.chunk(t.as_bytes()) {
                    return Ok(Outcome {
                        text,
                        end: End::Failed(e),
                        usage,
                    });
                }
                text.push_str(&t);
            }
            Msg::Usage(u) => usage = Some(u),
            Msg::End(Ok(())) => {
                return Ok(Outcome {
                    text,
                    end: End::Complete,
                    usage,
                });
            }
            Msg::End(Err(e)) => {
                return Ok(Outcome {
                    text,
                    end: End::Failed(e),
                    usage,
                });
            }
        }
    }
}

/// The request with retries, then the reply, on the worker thread.
fn exchange(
    p: &Resolved,
    built: &Built,
    model: &str,
    ui: &Ui,
    tx: &mpsc::Sender<Msg>,
) -> Result<()> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(p.timeout))
        .timeout_connect(Some(Duration::from_secs(15).min(p.timeout)))
        .user_agent(concat!("ai/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let body = serde_json::to_vec(&built.body)
        .map_err(|e| Error::backend(format!("cannot encode the request: {e}")))?;
    let started = Instant::now();
    let mut attempt = 0u32;
    loop {
        let mut request = agent
            .post(&built.url)
            .header("content-type", "application/json");
        for (k, v) in &built.headers {
            request = request.header(k, v);
        }
        let failure = match request.send(&body[..]) {
            Err(e) => Failure::Transport(e),
            Ok(resp) => {
                let status = resp.status().as_u16();
                if status >= 400 {
                    let headers = resp.headers().clone();
                    let mut text = String::new();
                    let _ = resp
                        .into_body()
                        .into_reader()
                        .take(256 * 1024)
                        .read_to_string(&mut text);
                    Failure::Status {
                        status,
                        headers,
                        body: ErrorBody::parse(&text),
                    }
                } else {
                    match read_reply(p, resp.into_body(), tx) {
                        Ok(()) => return Ok(()),
                        Err(ReadError::BeforeText(f)) => *f,
                        Err(ReadError::AfterText(e)) => return Err(e),
                    }
                }
            }
        };
        let delay = failure.retry_delay(attempt);
        if attempt < p.retries
            && started.elapsed() < p.timeout
            && let Some(delay) = delay
        {
            attempt += 1;
            // The error text comes from the server, which may echo the key.
            ui.notice(&redact(
                &format!(
                    "ai: {} {}; retrying in {:.1}s ({attempt}/{})",
                    p.name,
                    failure.short(),
                    delay.as_secs_f64(),
                    p.retries
                ),
                p,
            ));
            std::thread::sleep(delay);
            continue;
        }
        return Err(failure.into_error(p, model));
    }
}

enum ReadError {
    /// Nothing was printed yet: the attempt may be retried.
    BeforeText(Box<Failure>),
    /// Text was printed: never retried.
    AfterText(Error),
}

/// Read a 2xx reply: a stream (SSE or NDJSON) or one JSON body.
fn read_reply(
    p: &Resolved,
    body: ureq::Body,
    tx: &mpsc::Sender<Msg>,
) -> std::result::Result<(), ReadError> {
    let mut printed = false;
    let reader = BufReader::with_capacity(16 * 1024, body.into_reader());
    let invalid = |why: String, printed: bool| {
        let e = Error::backend(format!("invalid response from {}: {why}", p.name))
            .hint("the base URL may point at something that is not this kind of server");
        if printed {
            ReadError::AfterText(e)
        } else {
            ReadError::BeforeText(Box::new(Failure::Final(e)))
        }
    };
    if !p.stream {
        let mut bytes = Vec::new();
        let mut reader = reader;
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| ReadError::BeforeText(Box::new(Failure::Io(e))))?;
        let parsed = match p.protocol {
            Protocol::Openai | Protocol::Azure => openai::whole(&bytes),
            Protocol::Anthropic => anthropic::whole(&bytes),
            Protocol::Gemini => gemini::whole(&bytes),
            Protocol::Ollama => ollama::whole(&bytes),
        };
        let (text, usage) = parsed.map_err(|bad| match bad {
            Bad::Invalid(why) => invalid(why, false),
            Bad::Provider(body) => ReadError::BeforeText(Box::new(Failure::InStream(body))),
        })?;
        let _ = tx.send(Msg::Text(text));
        if let Some(u) = usage {
            let _ = tx.send(Msg::Usage(u));
        }
        return Ok(());
    }
    let mut pieces = Vec::new();
    let mut state = anthropic::State::default();
    // Ollama streams NDJSON; everyone else SSE.
    let (mut nd, mut sse) = if p.protocol == Protocol::Ollama {
        (Some(ndjson::Reader::new(reader)), None)
    } else {
        (None, Some(sse::Reader::new(reader)))
    };
    let mut done = false;
    loop {
        pieces.clear();
        let step = match (&mut nd, &mut sse) {
            (Some(r), _) => match r.next_line() {
                Ok(Some(line)) => ollama::line(line, &mut pieces).map(|()| true),
                Ok(None) => Ok(false),
                Err(e) => return Err(broken(p, e, printed)),
            },
            (None, None) => Ok(false),
            (None, Some(sse)) => match sse.next_event() {
                Ok(Some(ev)) => match p.protocol {
                    Protocol::Anthropic => anthropic::event(&mut state, &ev.data, &mut pieces),
                    Protocol::Gemini => gemini::event(&ev.data, &mut pieces),
                    _ => openai::event(&ev.data, &mut pieces),
                }
                .map(|()| true),
                Ok(None) => Ok(false),
                Err(e) => return Err(broken(p, e, printed)),
            },
        };
        match step {
            Ok(true) => {}
            Ok(false) => break,
            Err(why) => return Err(invalid(why, printed)),
        }
        for piece in pieces.drain(..) {
            match piece {
                Piece::Text(t) => {
                    printed = true;
                    let _ = tx.send(Msg::Text(t));
                }
                Piece::Usage(u) => {
                    let _ = tx.send(Msg::Usage(u));
                }
                Piece::Done => done = true,
                Piece::Fail(body) => {
                    let failure = Failure::InStream(body);
                    return Err(if printed {
                        ReadError::AfterText(failure.into_error(p, ""))
                    } else {
                        ReadError::BeforeText(Box::new(failure))
                    });
                }
            }
        }
        if done && p.protocol != Protocol::Gemini {
            return Ok(());
        }
    }
    if done {
        return Ok(());
    }
    let e = Error::backend(format!(
        "the reply from {} ended before it was complete",
        p.name
    ))
    .hint(
        "the connection was cut mid-answer; what arrived is kept in the chat, marked interrupted",
    );
    Err(if printed {
        ReadError::AfterText(e)
    } else {
        ReadError::BeforeText(Box::new(Failure::Cut(e)))
    })
}

fn broken(p: &Resolved, e: std::io::Error, printed: bool) -> ReadError {
    if printed {
        let what = if is_timeout(&e) {
            format!(
                "the reply from {} took longer than {}",
                p.name,
                crate::backend::process::human_duration(p.timeout)
            )
        } else {
            format!("the connection to {} broke mid-answer: {e}", p.name)
        };
        ReadError::AfterText(
            Error::backend(what).hint("what arrived is kept in the chat, marked interrupted"),
        )
    } else {
        ReadError::BeforeText(Box::new(Failure::Io(e)))
    }
}

/// Why an attempt failed, before any text was printed.
enum Failure {
    Transport(ureq::Error),
    Io(std::io::Error),
    Status {
        status: u16,
        headers: ureq::http::HeaderMap,
        body: ErrorBody,
    },
    InStream(ErrorBody),
    /// The stream ended early, with nothing printed.
    Cut(Error),
    /// Not worth retrying.
    Final(Error),
}

impl Failure {
    /// How long to wait before the next attempt, or `None` when it must not be retried.
    fn retry_delay(&self, attempt: u32) -> Option<Duration> {
        let backoff = || {
            let base = 0.5 * 2f64.powi(attempt as i32);
            let jitter = rand::rng().random_range(0.75..1.25);
            Duration::from_secs_f64((base * jitter).min(8.0))
        };
        match self {
            Failure::Transport(e) => match e {
                ureq::Error::ConnectionFailed | ureq::Error::Io(_) => Some(backoff()),
                ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve) => {
                    Some(backoff())
                }
                _ => None,
            },
            Failure::Io(_) | Failure::Cut(_) => Some(backoff()),
            // An error event before any text is the server's trouble unless it says the request
            // itself is wrong (PROTOCOLS.md: treat them as retryable).
            Failure::InStream(body) => (!client_error(body)).then(backoff),
            Failure::Status {
                status,
                headers,
                body,
            } => {
                let header = |k: &str| {
                    headers
                        .get(k)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                match header("x-should-retry").as_deref() {
                    Some("false") => return None,
                    Some("true") => {}
                    _ => {
                        let retryable = matches!(status, 408 | 409 | 429 | 529) || *status >= 500;
                        if !retryable || quota(*status, body) {
                            return None;
                        }
                    }
                }
                let asked = header("retry-after-ms")
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1000.0))
                    .or_else(|| header("retry-after").and_then(|v| retry_after(&v)))
                    .or(body.retry_delay);
                match asked {
                    // Honour what the server asks, up to a minute; longer is not worth waiting.
                    Some(d) if d <= Duration::from_secs(60) => Some(d),
                    Some(_) => None,
                    None => Some(backoff()),
                }
            }
            Failure::Final(_) => None,
        }
    }

    fn short(&self) -> String {
        match self {
            Failure::Transport(e) => format!("could not be reached ({e})"),
            Failure::Io(e) => format!("connection failed ({e})"),
            Failure::Status { status, .. } => format!("answered {status}"),
            Failure::InStream(b) => format!("reported an error ({})", b.message),
            Failure::Cut(_) => "cut the reply short".to_owned(),
            Failure::Final(e) => e.to_string(),
        }
    }

    fn into_error(self, p: &Resolved, model: &str) -> Error {
        let e = match self {
            Failure::Transport(e) => transport_error(p, e),
            Failure::Io(e) if is_timeout(&e) => timeout_error(p),
            Failure::Io(e) => Error::backend(format!("the connection to {} failed: {e}", p.name))
                .hint(format!(
                    "check the network and the base URL ({})",
                    p.base_from
                )),
            Failure::Status { status, body, .. } => status_error(p, model, status, &body),
            Failure::InStream(body) => {
                let msg = one_line(&body.message);
                if body.code == "blocked" {
                    Error::backend(format!("{}: {msg}", p.name))
                        .hint("the provider's safety filter refused it; rephrase the prompt")
                } else if overloaded(&body) {
                    Error::backend(format!("{} is overloaded: {msg}", p.name))
                        .hint("try again shortly")
                } else {
                    Error::backend(format!("{} reported an error: {msg}", p.name))
                        .hint("`ai --dry-run …` prints the request that was sent")
                }
            }
            Failure::Cut(e) | Failure::Final(e) => e,
        };
        redact_error(e, p)
    }
}

/// An error about the request itself: resending it cannot help.
fn client_error(body: &ErrorBody) -> bool {
    let c = body.code.to_lowercase();
    [
        "invalid_request",
        "authentication",
        "permission",
        "not_found",
        "blocked",
        "invalid_argument",
    ]
    .iter()
    .any(|k| c.contains(k))
        || quota(200, body)
}

fn overloaded(body: &ErrorBody) -> bool {
    let c = body.code.to_lowercase();
    c.contains("overloaded")
        || c.contains("unavailable")
        || body.message.to_lowercase().contains("overloaded")
}

fn quota(status: u16, body: &ErrorBody) -> bool {
    let text = format!("{} {}", body.code, body.message).to_lowercase();
    status == 402
        || text.contains("insufficient_quota")
        || text.contains("billing")
        || text.contains("credit")
}

/// `Retry-After`: seconds, or an HTTP date.
fn retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let wait = when.signed_duration_since(chrono::Utc::now());
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

fn one_line(text: &str) -> String {
    let flat = crate::output::sanitize(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match flat.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

fn transport_error(p: &Resolved, e: ureq::Error) -> Error {
    let base = &p.base_url;
    match e {
        ureq::Error::ConnectionFailed => {
            Error::backend(format!("cannot connect to {base}: connection refused")).hint(format!(
                "is the server running? The base URL comes from {}",
                p.base_from
            ))
        }
        ureq::Error::HostNotFound => Error::backend(format!("cannot find the host of {base}"))
            .hint(format!(
                "check the base URL (from {}) and the network",
                p.base_from
            )),
        ureq::Error::Timeout(_) => timeout_error(p),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            Error::backend(format!("cannot connect to {base}: connection refused")).hint(format!(
                "is the server running? The base URL comes from {}",
                p.base_from
            ))
        }
        other => Error::backend(format!("the request to {} failed: {other}", p.name)).hint(
            format!("check the network and the base URL ({})", p.base_from),
        ),
    }
}

fn timeout_error(p: &Resolved) -> Error {
    Error::backend(format!(
        "no answer from {} within {}",
        p.name,
        crate::backend::process::human_duration(p.timeout)
    ))
    .hint("allow longer with --timeout SECS, or \"timeout\" in config.json")
}

/// A timeout while the body is read reaches us as an `io::Error` wrapping ureq's own error.
fn is_timeout(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::TimedOut
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ureq::Error>())
            .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)))
}

fn status_error(p: &Resolved, model: &str, status: u16, body: &ErrorBody) -> Error {
    let name = &p.name;
    let msg = one_line(&body.message);
    let detail = if msg.is_empty() {
        format!("{status}")
    } else {
        format!("{status}: {msg}")
    };
    let lower = format!("{} {}", body.code, body.message).to_lowercase();
    let key_problem = status == 401
        || status == 403
        || (status == 400 && (lower.contains("api_key_invalid") || lower.contains("api key")));
    if key_problem {
        return Error::config(format!("{name} rejected the API key ({detail})"))
            .hint(format!("set {} to a valid key", p.key_var));
    }
    if quota(status, body) {
        return Error::backend(format!("{name}: quota or credits used up ({detail})"))
            .hint(format!("check the plan and billing of your {name} account"));
    }
    if status == 404 {
        return Error::not_found(format!("{name} does not know the model '{model}' ({detail})")).hint(format!(
            "check the model name (`ai list` shows aliases); if it is right, check the base URL ({})",
            p.base_from
        ));
    }
    let too_long = [
        "context length",
        "context window",
        "maximum context",
        "too long",
        "too many tokens",
        "context_length",
    ];
    if matches!(status, 400 | 413) && too_long.iter().any(|t| lower.contains(t)) {
        return Error::backend(format!(
            "the conversation is too long for {model} ({detail})"
        ))
        .hint("lower \"chat.window_tokens\" in config.json, or start a new chat");
    }
    if status == 429 {
        return Error::backend(format!("{name} is rate limiting these requests ({detail})"))
            .hint(format!("wait a little, or set \"max_requests_per_minute\" under \"providers\".\"{name}\" in config.json"));
    }
    if status == 529 || status == 503 || overloaded(body) {
        return Error::backend(format!("{name} is overloaded ({detail})"))
            .hint("try again shortly");
    }
    if status >= 500 {
        return Error::backend(format!("{name} had a server error ({detail})"))
            .hint("try again shortly");
    }
    Error::backend(format!("{name} refused the request ({detail})"))
        .hint("`ai --dry-run …` prints the request that was sent")
}

/// Make sure no error text carries the key (a server may echo it).
fn redact_error(e: Error, p: &Resolved) -> Error {
    let Some(key) = p.key.as_deref().filter(|k| k.len() >= 4) else {
        return e;
    };
    let clean = |s: String| s.replace(key, "***");
    match e {
        Error::Usage { msg, hint } => Error::Usage {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::Config { msg, hint } => Error::Config {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::NotFound { msg, hint } => Error::NotFound {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::Backend { msg, hint } => Error::Backend {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::Busy { msg, hint } => Error::Busy {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies() {
        let b = ErrorBody::parse(
            r#"{"error":{"message":"nope","type":"invalid_request_error","param":null,"code":"insufficient_quota"}}"#,
        );
        assert_eq!(b.message, "nope");
        assert!(quota(429, &b));
        let g = ErrorBody::parse(
            r#"{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}"#,
        );
        assert_eq!(g.retry_delay, Some(Duration::from_secs(30)));
        assert_eq!(
            ErrorBody::parse(r#"{"error":"model \"x\" not found"}"#).message,
            "model \"x\" not found"
        );
        assert_eq!(
            ErrorBody::parse("<html>bad gateway</html>").message,
            "<html>bad gateway</html>"
        );
        let a = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert!(overloaded(&a));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon"), None);
    }

    #[test]
    fn segments() {
        assert_eq!(path_segment("gpt-4o"), "gpt-4o");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
    }
}
