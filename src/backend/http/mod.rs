//! HTTP providers: one transport (ureq, blocking) shared by a pure request builder and a small
//! event interpreter per protocol. Streams by default; retries before the first byte of reply;
//! a stream that ends before its terminator, or carries an error, is an error.

pub(crate) mod anthropic;
pub(crate) mod bedrock;
pub(crate) mod calls;
pub(crate) mod eventstream;
pub(crate) mod failure;
pub(crate) mod gemini;
pub(crate) mod ndjson;
pub(crate) mod ollama;
pub(crate) mod openai;
pub(crate) mod provider;
pub(crate) mod ratelimit;
pub(crate) mod reply;
pub(crate) mod sigv4;
pub(crate) mod sse;

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use self::failure::Failure;
pub(crate) use self::failure::{Bad, ErrorBody, blocked};
use self::provider::{Env, Protocol, Resolved};
use self::reply::ReadError;
use super::{End, Outcome, Request};
use crate::chat::record::Usage;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::output::{Sink, Ui};
use crate::signal;

/// A request ready to send. `Debug` names its headers, never their values (`Authorization`
/// carries the key: R2-7).
pub(crate) struct Built {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
    /// The JSON body, encoded.
    pub(crate) body: Vec<u8>,
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Built")
            // A key may ride in the query (Gemini's `?key=`): the path only.
            .field("url", &self.url.split('?').next().unwrap_or(""))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// What an interpreter makes of a stream event.
#[derive(Debug)]
pub(crate) enum Piece {
    Text(String),
    Usage(Usage),
    /// The protocol's terminator.
    Done,
    /// The reply stopped at the max-tokens limit.
    Truncated,
    /// An error frame inside the stream.
    Fail(ErrorBody),
    /// A tool call, or a piece of one.
    Call(calls::CallPart),
}

/// A whole (non-streamed) reply: its text, usage, whether it stopped at the max-tokens limit,
/// and its tool calls.
pub(crate) type Whole = (String, Option<Usage>, bool, Vec<calls::CallPart>);

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

/// A request body as sent. Typed bodies serialize without fail (string keys only). The buffer
/// is sized from the request's text up front, so a long prompt is not copied again and again
/// (and held twice) while the buffer grows.
pub(crate) fn encode(body: &impl serde::Serialize, req: &Request<'_>) -> Vec<u8> {
    let mut text = req.system.map_or(0, str::len);
    for m in req.messages {
        m.each_text(|t| text += t.len());
    }
    let mut out = Vec::with_capacity(text + text / 16 + 1024);
    match serde_json::to_writer(&mut out, body) {
        Ok(()) => out,
        Err(_) => Vec::new(),
    }
}

/// Tool-call arguments as the JSON object Anthropic, Gemini and Ollama want: the model's JSON
/// text parsed, or `{}` when it is not an object (the call then gets an error result).
pub(crate) fn arguments_object(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(serde_json::Map::new()),
    }
}

/// The output-token limit under the name each provider gives it (`max_tokens`,
/// `max_completion_tokens`, `num_predict`, …): one entry of a flattened body.
pub(crate) struct Limit<'a>(pub(crate) &'a str, pub(crate) u64);

impl serde::Serialize for Limit<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(self.0, &self.1)?;
        map.end()
    }
}

fn build(p: &Resolved, req: &Request<'_>) -> Built {
    let mut built = match p.protocol {
        Protocol::Openai | Protocol::Azure => openai::request(p, req, p.stream),
        Protocol::Anthropic => anthropic::request(p, req, p.stream),
        Protocol::Gemini => gemini::request(p, req, p.stream),
        Protocol::Ollama => ollama::request(p, req, p.stream),
        Protocol::Bedrock => bedrock::request(p, req, p.stream),
    };
    built.headers.extend(p.headers.iter().cloned());
    // A query in the base URL (`…/v1?key=x`) goes after the path the builder added.
    if let Some(query) = &p.base_query {
        let sep = if built.url.contains('?') { '&' } else { '?' };
        built.url = format!("{}{sep}{query}", built.url);
    }
    built
}

/// Check a provider's settings and key, before a chat or a pending prompt is written.
pub(crate) fn check(route: &crate::target::Route, config: &Config) -> Result<()> {
    let env = Env::load(config);
    let p = provider::resolve(route.provider.name(), config, &env)?;
    key_present(&p, config)
}

/// A missing key (naming its variable and the `.env` file) or AWS region, as a config error.
pub(crate) fn key_present(p: &Resolved, config: &Config) -> Result<()> {
    if p.key_required && !p.has_credentials() {
        let what = if p.protocol == Protocol::Bedrock {
            "no API key or AWS credentials"
        } else {
            "no API key"
        };
        return Err(
            Error::config(format!("{what} for {}", p.name)).hint(format!(
                "set {} in your shell or in {}",
                p.credentials_wanted(),
                config.path.with_file_name(".env").display()
            )),
        );
    }
    if p.needs_region() {
        return Err(
            Error::config(format!("no AWS region for {}", p.name)).hint(format!(
                "set AWS_REGION (e.g. us-east-1), or \"region\" under \"providers\".\"{}\" in config.json",
                p.name
            )),
        );
    }
    Ok(())
}

/// The headers that sign one attempt with AWS credentials (SigV4), when the provider uses them
/// (Bedrock without an API key). Made afresh for every attempt: a signature is dated.
fn signature(p: &Resolved, url: &str, body: &[u8], amz_date: &str) -> Vec<(String, String)> {
    match (&p.aws, &p.key, &p.region) {
        (Some(creds), None, Some(region)) => {
            sigv4::sign_post(creds, region, bedrock::SERVICE, url, body, amz_date)
        }
        _ => Vec::new(),
    }
}

fn resolve(req: &Request<'_>, config: &Config) -> Result<Resolved> {
    let env = Env::load(config);
    let mut p = provider::resolve(req.route.provider.name(), config, &env)?;
    // `--timeout` wins over the provider's own "timeout".
    if req.timeout_given {
        p.timeout = req.timeout;
    }
    key_present(&p, config)?;
    Ok(p)
}

/// `--dry-run`: the request, with every secret replaced by `***`.
pub(crate) fn dry_run(req: &Request<'_>, config: &Config) -> Result<String> {
    let mut p = resolve(req, config)?;
    let mut built = build(&p, req);
    let signed = signature(&p, &built.url, &built.body, &sigv4::amz_date_now());
    // The signature would let this exact request be replayed for a few minutes.
    for (k, v) in &signed {
        if k == "authorization"
            && let Some((_, sig)) = v.rsplit_once("Signature=")
        {
            p.secrets.push(sig.to_owned());
        }
    }
    built.headers.extend(signed);
    let mut out = format!("POST {}\n", redact(&built.url, &p));
    for (k, v) in all_headers(&built) {
        out.push_str(&format!("{k}: {}\n", p.redact_header(&v)));
    }
    // Images and PDFs as their start, size and hash: never megabytes of base64 on a terminal.
    let attachments: Vec<&crate::media::Attachment> =
        req.messages.iter().flat_map(|m| m.attachments()).collect();
    let body = serde_json::from_slice::<Value>(&built.body)
        .and_then(|mut v| {
            crate::media::shorten_in(&mut v, &attachments);
            serde_json::to_string_pretty(&v)
        })
        .unwrap_or_default();
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
    p.redact(text)
}

/// The worker's end of the channel to the main thread.
type Tx = mpsc::SyncSender<Msg>;

/// Messages from the worker thread that talks to the provider.
enum Msg {
    Text(String),
    Usage(Usage),
    /// The reply stopped at the max-tokens limit.
    Truncated,
    /// A tool call of a complete reply.
    Call(crate::conversation::ToolCall),
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
    let limit_note = format!(
        "the reply stopped at the {} token limit of {}; raise \"max_tokens\" under \"providers\".\"{}\" in config.json for longer ones",
        p.max_tokens, p.name, p.name
    );
    let ui = *ui;
    // Bounded: when stdout is slower than the network, the worker waits instead of queueing
    // the reply in memory a second time.
    let (tx, rx) = mpsc::sync_channel::<Msg>(64);
    // The worker does the blocking I/O; this thread stays free to notice Ctrl+C and to write
    // to stdout (where a closed pipe must stop everything).
    let timeout_flag = req.timeout_given;
    std::thread::spawn(move || {
        let result = exchange(&p, built, &model, &ui, timeout_flag, &tx);
        let _ = tx.send(Msg::End(result));
    });
    let mut text = String::new();
    let mut usage = None;
    let mut truncated = false;
    let mut calls = Vec::new();
    loop {
        // Checked before every message, not only when the stream pauses: a fast stream would
        // otherwise hide Ctrl+C until its end.
        if signal::interrupted() {
            return Ok(Outcome {
                text,
                end: End::Interrupted,
                usage,
                calls: Vec::new(),
            });
        }
        let msg = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => m,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Ok(Outcome {
                    text,
                    end: End::Failed(Error::backend("the HTTP worker stopped unexpectedly")),
                    usage,
                    calls: Vec::new(),
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
                        calls: Vec::new(),
                    });
                }
                text.push_str(&t);
            }
            Msg::Usage(u) => usage = Some(u),
            Msg::Truncated => truncated = true,
            Msg::Call(c) => calls.push(c),
            Msg::End(Ok(())) => {
                if truncated {
                    ui.warn(&limit_note);
                }
                return Ok(Outcome {
                    text,
                    end: End::Complete,
                    usage,
                    calls,
                });
            }
            Msg::End(Err(e)) => {
                return Ok(Outcome {
                    text,
                    end: End::Failed(e),
                    usage,
                    calls: Vec::new(),
                });
            }
        }
    }
}

/// The request with retries, then the reply, on the worker thread. The timeout is a deadline
/// for all of it: every attempt gets the time left, and no wait may pass it.
fn exchange(
    p: &Resolved,
    built: Built,
    model: &str,
    ui: &Ui,
    timeout_flag: bool,
    tx: &Tx,
) -> Result<()> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .user_agent(concat!("ai/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    // Only the encoded bytes are needed from here on.
    let Built { url, headers, body } = built;
    let deadline = Instant::now() + p.timeout;
    let mut attempt = 0u32;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut request = agent
            .post(&url)
            .config()
            .timeout_global(Some(left))
            .timeout_connect(Some(Duration::from_secs(15).min(left)))
            .build()
            .header("content-type", "application/json");
        for (k, v) in &headers {
            request = request.header(k, v);
        }
        for (k, v) in signature(p, &url, &body, &sigv4::amz_date_now()) {
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
                    let body = if p.protocol == Protocol::Bedrock {
                        let kind = headers
                            .get("x-amzn-errortype")
                            .and_then(|v| v.to_str().ok());
                        bedrock::error_body(kind, &text)
                    } else {
                        ErrorBody::parse(&text)
                    };
                    Failure::Status {
                        status,
                        headers,
                        body,
                    }
                } else {
                    match reply::read(p, model, resp, tx) {
                        Ok(()) => return Ok(()),
                        Err(ReadError::BeforeText(f)) => *f,
                        Err(ReadError::AfterText(e)) => return Err(e),
                    }
                }
            }
        };
        let Some(delay) = failure.retry_delay(attempt).filter(|_| attempt < p.retries) else {
            return Err(failure.into_error(p, model));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if delay >= left {
            let limit = if timeout_flag {
                "--timeout"
            } else {
                "the timeout"
            };
            return Err(failure.beyond(p, model, limit));
        }
        attempt += 1;
        ui.notice(&failure.retry_notice(p, attempt, delay));
        std::thread::sleep(delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments() {
        assert_eq!(path_segment("gpt-4o"), "gpt-4o");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
    }
}
