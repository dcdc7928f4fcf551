//! Reading a 2xx reply on the worker thread. First make sure it is what was asked for: not an
//! HTML page (a login portal, a wrong base URL), not one JSON document where a stream was asked
//! for (an error sent with status 200, a redirect turned into a GET), not compressed. Then the
//! stream, through the protocol's interpreter, with every line and the whole reply bounded.

use std::io::{BufRead, BufReader, Read};

use super::calls::Assembler;
use super::failure::{Failure, is_timeout};
use super::provider::{Protocol, Resolved};
use super::{
    Bad, ErrorBody, Msg, Piece, Tx, anthropic, bedrock, eventstream, gemini, ndjson, ollama,
    openai, sse,
};
use crate::error::Error;
use crate::output::MAX_REPLY;

/// How much of an unexpected body is read to describe it.
const PEEK: u64 = 256 * 1024;

pub(super) enum ReadError {
    /// Nothing was printed yet: the attempt may be retried.
    BeforeText(Box<Failure>),
    /// Text was printed: never retried.
    AfterText(Error),
}

fn fail(e: Error) -> ReadError {
    ReadError::BeforeText(Box::new(Failure::Final(e)))
}

/// Read a 2xx reply: a stream (SSE or NDJSON) or one JSON body.
pub(super) fn read(
    p: &Resolved,
    model: &str,
    resp: ureq::http::Response<ureq::Body>,
    tx: &Tx,
) -> Result<(), ReadError> {
    let header = |k: &str| {
        resp.headers()
            .get(k)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
    };
    if let Some(enc) = header("content-encoding").filter(|e| !e.is_empty() && e != "identity") {
        // ai never asks for compression; a proxy that compresses anyway sends bytes no
        // interpreter can read.
        return Err(fail(
            Error::backend(format!(
                "invalid response from {}: a {enc}-compressed body, which ai does not ask for and cannot read",
                p.name
            ))
            .hint(base_hint(p)),
        ));
    }
    let html_type = header("content-type")
        .is_some_and(|t| t.starts_with("text/html") || t.starts_with("application/xhtml"));
    let mut reader = BufReader::with_capacity(16 * 1024, resp.into_body().into_reader());
    let first =
        first_byte(&mut reader).map_err(|e| ReadError::BeforeText(Box::new(Failure::Io(e))))?;
    if html_type || first == Some(b'<') {
        let start = peek(&mut reader);
        let lower = start.to_ascii_lowercase();
        let what = if html_type || lower.contains("<html") || lower.contains("<!doctype html") {
            "an HTML page"
        } else {
            "an XML document"
        };
        return Err(fail(
            Error::backend(format!(
                "invalid response from {}: {what}, not {}: {}",
                p.name,
                api_name(p.protocol),
                html_summary(&start)
            ))
            .hint(base_hint(p)),
        ));
    }
    if !p.stream {
        return whole(p, reader, tx);
    }
    // An event stream starts with a field name, a comment or a blank line, never with `{`;
    // NDJSON (Ollama) is the exception, and its interpreter reads an error line itself.
    if p.protocol != Protocol::Ollama && matches!(first, Some(b'{' | b'[')) {
        let start = peek(&mut reader);
        let body = ErrorBody::parse(&start);
        return Err(fail(
            if body.message.is_empty() || !start.contains("\"error\"") {
                Error::backend(format!(
                    "invalid response from {}: one JSON document, not an event stream: {}",
                    p.name,
                    crate::fmt::one_line(&start, 300)
                ))
                .hint(base_hint(p))
            } else {
                Failure::InStream(body).into_error(p, model)
            },
        ));
    }
    stream(p, reader, tx)
}

/// The first byte that is not white space, left unread; `None` for an empty body.
fn first_byte(r: &mut impl BufRead) -> std::io::Result<Option<u8>> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let b = buf[i];
                r.consume(i);
                return Ok(Some(b));
            }
            None => {
                let n = buf.len();
                r.consume(n);
            }
        }
    }
}

/// The start of a body, as text.
fn peek(r: &mut impl Read) -> String {
    let mut bytes = Vec::new();
    let _ = r.take(PEEK).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(crate) fn api_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Openai | Protocol::Azure => "an OpenAI-compatible API",
        Protocol::Anthropic => "the Anthropic API",
        Protocol::Gemini => "the Gemini API",
        Protocol::Ollama => "an Ollama server",
        Protocol::Bedrock => "the Bedrock runtime API",
    }
}

pub(crate) fn base_hint(p: &Resolved) -> String {
    format!(
        "check the base URL {} (from {}): it must be the address of the API itself",
        p.base_url, p.base_from
    )
}

/// An HTML page in a few words: its title, else the start of its text.
pub(crate) fn html_summary(page: &str) -> String {
    let lower = page.to_ascii_lowercase();
    let title = lower.find("<title").and_then(|at| {
        let open = at + lower[at..].find('>')? + 1;
        let close = open + lower[open..].find("</title")?;
        // ASCII lower-casing keeps byte offsets, so they index the original too.
        Some(page[open..close].trim().to_owned())
    });
    match title.filter(|t| !t.is_empty()) {
        Some(t) => format!("\"{}\"", crate::fmt::one_line(&t, 300)),
        None => crate::fmt::one_line(page, 300),
    }
}

/// A whole (non-streamed) JSON reply, bounded.
fn whole(p: &Resolved, reader: impl Read, tx: &Tx) -> Result<(), ReadError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_REPLY as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::BeforeText(Box::new(Failure::Io(e))))?;
    if bytes.len() > MAX_REPLY {
        return Err(fail(too_long(p)));
    }
    let parsed = match p.protocol {
        Protocol::Openai | Protocol::Azure => openai::whole(&bytes),
        Protocol::Anthropic => anthropic::whole(&bytes),
        Protocol::Gemini => gemini::whole(&bytes),
        Protocol::Ollama => ollama::whole(&bytes),
        Protocol::Bedrock => bedrock::whole(&bytes),
    };
    let (text, usage, truncated, parts) = parsed.map_err(|bad| match bad {
        Bad::Invalid(why) => fail(invalid(p, &why, &String::from_utf8_lossy(&bytes))),
        Bad::Provider(body) => ReadError::BeforeText(Box::new(Failure::InStream(body))),
    })?;
    drop(bytes);
    let mut calls = Assembler::default();
    for part in parts {
        calls.add(part).map_err(|why| {
            fail(Error::backend(format!(
                "invalid response from {}: {why}",
                p.name
            )))
        })?;
    }
    send(tx, Msg::Text(text))?;
    for c in calls.finish() {
        send(tx, Msg::Call(c))?;
    }
    if let Some(u) = usage {
        send(tx, Msg::Usage(u))?;
    }
    if truncated {
        send(tx, Msg::Truncated)?;
    }
    Ok(())
}

fn too_long(p: &Resolved) -> Error {
    Error::backend(format!(
        "the reply from {} is longer than {} MiB, the most ai keeps; the rest was not read",
        p.name,
        MAX_REPLY >> 20
    ))
    .hint("ask for a shorter answer, or for it in parts")
}

/// The interpreter could not use an event. Valid JSON of another shape is not "invalid JSON".
fn invalid(p: &Resolved, why: &str, data: &str) -> Error {
    let shape = serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok();
    let why = if shape {
        let detail = why
            .split_once('(')
            .map_or(why, |(_, rest)| rest.strip_suffix(')').unwrap_or(rest));
        let start: String = crate::fmt::one_line(data, 300).chars().take(120).collect();
        format!("an event has an unexpected shape ({detail}): {start}")
    } else {
        why.to_owned()
    };
    Error::backend(format!("invalid response from {}: {why}", p.name))
        .hint("the base URL may point at something that is not this kind of server")
}

/// Hand a message to the main thread; when it has stopped listening (Ctrl+C, a closed stdout),
/// stop reading.
fn send(tx: &Tx, msg: Msg) -> Result<(), ReadError> {
    tx.send(msg)
        .map_err(|_| ReadError::AfterText(Error::Interrupted))
}

fn stream(p: &Resolved, reader: impl BufRead, tx: &Tx) -> Result<(), ReadError> {
    let mut printed = false;
    let mut length = 0usize;
    let mut pieces = Vec::new();
    let mut state = anthropic::State::default();
    let mut calls = Assembler::default();
    // Ollama streams NDJSON; Bedrock AWS event-stream frames; everyone else SSE.
    let (mut nd, mut sse, mut es) = match p.protocol {
        Protocol::Ollama => (Some(ndjson::Reader::new(reader)), None, None),
        Protocol::Bedrock => (None, None, Some(eventstream::Reader::new(reader))),
        _ => (None, Some(sse::Reader::new(reader)), None),
    };
    let mut done = false;
    loop {
        pieces.clear();
        let step = match (&mut nd, &mut sse, &mut es) {
            (_, _, Some(r)) => match r.next_message() {
                Ok(Some(msg)) => bedrock::event(&msg, &mut pieces)
                    .map(|()| true)
                    .map_err(|why| invalid(p, &why, &String::from_utf8_lossy(&msg.payload))),
                // A body cut inside a frame is an early end, like one cut between frames.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
                Err(e) => return Err(broken(p, e, printed)),
                Ok(None) => Ok(false),
            },
            (Some(r), _, _) => match r.next_line() {
                Ok(Some(line)) => ollama::line(line, &mut pieces)
                    .map(|()| true)
                    .map_err(|why| invalid(p, &why, &String::from_utf8_lossy(line))),
                Ok(None) => Ok(false),
                Err(e) => return Err(broken(p, e, printed)),
            },
            (None, None, None) => Ok(false),
            (None, Some(sse), None) => match sse.next_event() {
                Ok(Some(ev)) => match p.protocol {
                    Protocol::Anthropic => anthropic::event(&mut state, &ev.data, &mut pieces),
                    Protocol::Gemini => gemini::event(&ev.data, &mut pieces),
                    _ => openai::event(&ev.data, &mut pieces),
                }
                .map(|()| true)
                .map_err(|why| invalid(p, &why, &ev.data)),
                Ok(None) => Ok(false),
                Err(e) => return Err(broken(p, e, printed)),
            },
        };
        match step {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if printed => return Err(ReadError::AfterText(e)),
            Err(e) => return Err(fail(e)),
        }
        for piece in pieces.drain(..) {
            match piece {
                Piece::Text(t) => {
                    length += t.len();
                    if length > MAX_REPLY {
                        return Err(ReadError::AfterText(too_long(p)));
                    }
                    printed = true;
                    send(tx, Msg::Text(t))?;
                }
                Piece::Usage(u) => send(tx, Msg::Usage(u))?,
                Piece::Done => done = true,
                Piece::Truncated => send(tx, Msg::Truncated)?,
                Piece::Call(part) => {
                    if let Err(why) = calls.add(part) {
                        let e = Error::backend(format!("invalid response from {}: {why}", p.name));
                        return Err(if printed {
                            ReadError::AfterText(e)
                        } else {
                            fail(e)
                        });
                    }
                }
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
        // Gemini has no terminator; Bedrock's usage (`metadata`) follows its `messageStop`.
        if done && !matches!(p.protocol, Protocol::Gemini | Protocol::Bedrock) {
            return complete(&mut calls, tx);
        }
    }
    if done {
        return complete(&mut calls, tx);
    }
    let e = Error::backend(format!(
        "the reply from {} ended before it was complete",
        p.name
    ))
    .hint("the connection was cut mid-answer");
    Err(if printed {
        ReadError::AfterText(e)
    } else {
        ReadError::BeforeText(Box::new(Failure::Cut(e)))
    })
}

/// The stream is complete: its tool calls go to the main thread.
fn complete(calls: &mut Assembler, tx: &Tx) -> Result<(), ReadError> {
    for c in calls.finish() {
        send(tx, Msg::Call(c))?;
    }
    Ok(())
}

fn broken(p: &Resolved, e: std::io::Error, printed: bool) -> ReadError {
    if e.kind() == std::io::ErrorKind::InvalidData {
        // A line past its limit (sse.rs, ndjson.rs): the message names it.
        let e = Error::backend(format!("invalid response from {}: {e}", p.name))
            .hint("the base URL may point at something that is not this kind of server");
        return if printed {
            ReadError::AfterText(e)
        } else {
            fail(e)
        };
    }
    if printed {
        let what = if is_timeout(&e) {
            format!(
                "the reply from {} took longer than {}",
                p.name,
                crate::fmt::human_duration(p.timeout)
            )
        } else {
            format!("the connection to {} broke mid-answer: {e}", p.name)
        };
        ReadError::AfterText(Error::backend(what))
    } else {
        ReadError::BeforeText(Box::new(Failure::Io(e)))
    }
}
