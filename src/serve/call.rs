//! `POST /call`: one turn, as one `ai --json-stream` process with the prompt on its stdin,
//! answered in one JSON object when it ends, or (`"stream": true`, or `Accept:
//! text/event-stream`) as server-sent events while it streams. The outcome is read from the
//! child's JSON lines, not from its stderr.

use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Shared;
use super::child::{self, Ending, Flow, Outcome};
use super::http::{Conn, Head, write_event};
use super::reply::{cannot_start, ended_early, fail, fail_in_chat, fail_with, scraped, stopped};

/// The body of POST /call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    /// Model alias (or provider:model); the default model when left out.
    #[serde(default)]
    alias: Option<String>,
    /// Left out only with `retry`.
    #[serde(default)]
    prompt: Option<String>,
    /// Resend the failed (or stopped) last prompt of `chat` in its place (`ai chat retry`).
    #[serde(default)]
    retry: bool,
    /// Ask the backend itself for JSON (the `json` mode).
    #[serde(default)]
    json_mode: bool,
    /// Continue this chat (`chat_id` is accepted too).
    #[serde(default, alias = "chat_id")]
    chat: Option<String>,
    #[serde(default)]
    system: Option<String>,
    /// Do not save the call as a chat.
    #[serde(default)]
    no_chat: bool,
    /// Seconds.
    #[serde(default)]
    timeout: Option<f64>,
    /// Answer with server-sent events as the reply streams.
    #[serde(default)]
    stream: bool,
    /// Ground the answer in this knowledge base (`--kb NAME`).
    #[serde(default)]
    kb: Option<String>,
    /// No knowledge base for this call, not even the chat's (`--no-kb`).
    #[serde(default)]
    no_kb: bool,
}

/// One line of `ai --json-stream`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line {
    Delta {
        text: String,
    },
    /// A tool call that ran: passed on as it is.
    Tool {
        #[serde(flatten)]
        call: Map<String, Value>,
    },
    Done {
        #[serde(flatten)]
        answer: Map<String, Value>,
    },
    Error {
        error: String,
        #[serde(default)]
        hint: Option<String>,
        exit_code: i32,
        /// The chat the call wrote to.
        #[serde(default)]
        chat: Option<String>,
    },
}

/// The `error` event of a streamed call.
#[derive(Serialize)]
struct ErrorEvent<'a> {
    error: &'a str,
    hint: Option<&'a str>,
    exit_code: Option<i32>,
    /// The chat the call wrote to (its prompt pending, or a partial reply): continue it.
    #[serde(skip_serializing_if = "Option::is_none")]
    chat: Option<&'a str>,
}

/// The chat named by the error line among the lines a child wrote while it was stopped.
fn late_chat(outcome: &Outcome) -> Option<String> {
    outcome
        .late
        .iter()
        .rev()
        .find_map(|l| match serde_json::from_slice::<Line>(l) {
            Ok(Line::Error { chat, .. }) => chat,
            _ => None,
        })
}

/// HTTP status for an `ai` call's exit code.
fn call_status(code: i32) -> u16 {
    match code {
        2 => 400,
        3 => 500,
        4 => 404,
        75 => 429,
        // Stopped by a signal (the server itself is stopping).
        129..=143 => 503,
        _ => 502,
    }
}

/// POST /call: one `ai --json-stream` process, the prompt on its stdin.
pub(super) fn call(conn: Conn, head: &Head, body: &[u8], shared: &Shared) {
    let call: Call = match serde_json::from_slice(body) {
        Ok(c) => c,
        Err(e) => {
            return fail(
                conn,
                400,
                &format!("the body is not a valid call: {e}"),
                Some("send {\"prompt\": \"…\", \"alias\": \"sonnet\", \"chat\": \"K7Q\"}"),
            );
        }
    };
    let stream = call.stream
        || head
            .header("accept")
            .is_some_and(|a| a.to_ascii_lowercase().contains("text/event-stream"));
    // A chat another call holds is busy (429), not waited for while this one holds a slot.
    let mut args: Vec<String> = vec!["--json-stream".into(), "-q".into(), "--no-wait".into()];
    if call.retry {
        // `ai chat retry ID`: the chat's own prompt, no other (no duplicate of it).
        let refused = match (&call.chat, &call.prompt) {
            (None, _) => Some("a retry names its chat"),
            (Some(_), Some(_)) => Some("a retry resends the chat's own prompt; leave out prompt"),
            (Some(c), None) if c.starts_with('-') || crate::chat::store::check_id(c).is_err() => {
                Some("the chat is not a chat ID")
            }
            _ => None,
        };
        if let Some(message) = refused {
            return fail(
                conn,
                400,
                message,
                Some("send {\"retry\": true, \"chat\": \"K7Q\"}"),
            );
        }
        let chat = call.chat.clone().unwrap_or_default();
        args.splice(0..0, ["chat".into(), "retry".into(), chat]);
        if call.no_chat
            || call.kb.is_some()
            || call.no_kb
            || call.json_mode
            || call.system.is_some()
        {
            return fail(
                conn,
                400,
                "a retry takes only chat, alias, timeout and stream",
                Some("the chat keeps its own knowledge bases and system prompt"),
            );
        }
    } else if call.prompt.is_none() {
        return fail(
            conn,
            400,
            "the body is not a valid call: missing field `prompt`",
            Some("send {\"prompt\": \"…\", \"alias\": \"sonnet\", \"chat\": \"K7Q\"}"),
        );
    }
    if let Some(c) = call.chat.as_ref().filter(|_| !call.retry) {
        // A value like `-q` must not be taken for an option (`ai` checks the rest).
        if c.starts_with('-') {
            return fail(
                conn,
                400,
                &format!(
                    "'{}' is not a valid chat ID",
                    crate::output::sanitize(&crate::fmt::one_line(c, 80))
                ),
                Some("GET /chats lists them"),
            );
        }
        args.extend(["--chat".into(), c.clone()]);
    }
    if call.no_chat {
        args.push("--no-chat".into());
    }
    if let Some(s) = &call.system {
        args.extend(["--system".into(), s.clone()]);
    }
    if let Some(t) = call.timeout.filter(|t| t.is_finite() && *t > 0.0) {
        args.extend(["--timeout".into(), t.to_string()]);
    }
    match (&call.kb, call.no_kb) {
        (Some(_), true) => {
            return fail(
                conn,
                400,
                "a call cannot have both kb and no_kb",
                Some("send one of them"),
            );
        }
        (Some(kb), false) => {
            if !crate::config::kb::valid_name(kb) {
                return fail(
                    conn,
                    400,
                    &format!(
                        "'{}' cannot name a knowledge base",
                        crate::output::sanitize(kb)
                    ),
                    Some("GET /kb lists them"),
                );
            }
            args.extend(["--kb".into(), kb.clone()]);
        }
        (None, true) => args.push("--no-kb".into()),
        (None, false) => {}
    }
    if call.json_mode {
        args.push("json".into());
    }
    if let Some(a) = &call.alias {
        // The alias must name a model: never let it turn into prompt text.
        let known = crate::config::Home::locate()
            .and_then(|h| crate::config::Config::load(&h))
            .and_then(|c| crate::alias::resolve(a, &c).map(|r| (r, c)));
        match known {
            Ok((Some(_), _)) => args.push(a.clone()),
            Ok((None, config)) => {
                let e = crate::alias::unknown(a, &config);
                return fail_with(
                    conn,
                    404,
                    &e.to_string(),
                    e.hint_text(),
                    Some(e.exit_code()),
                    &[],
                );
            }
            // Out of descriptors (too many connections at once) the config cannot be read:
            // a passing state, worth a retry, and nothing to move aside.
            Err(e) if out_of_descriptors(&e.to_string()) => {
                return fail_with(
                    conn,
                    503,
                    &e.to_string(),
                    Some("ai serve has too many files open; try again in a moment"),
                    None,
                    &[("Retry-After", "2")],
                );
            }
            Err(e) => {
                return fail_with(
                    conn,
                    500,
                    &e.to_string(),
                    e.hint_text(),
                    Some(e.exit_code()),
                    &[],
                );
            }
        }
    }
    let Some(conn) = super::reply::no_nul(conn, &args) else {
        return;
    };
    let Some(slot) = CallSlot::take(shared) else {
        let n = shared.limits.max_calls;
        return fail_with(
            conn,
            429,
            &format!(
                "{n} call{} running, the most ai serve runs at once",
                if n == 1 { " is" } else { "s are" }
            ),
            Some("try again in a moment (ai serve --max-calls N allows more)"),
            None,
            &[("Retry-After", "2")],
        );
    };
    let running = match child::start(
        &shared.exe,
        "serve",
        &args,
        call.prompt,
        shared.limits.max_output,
    ) {
        Ok(r) => r,
        Err(e) => return cannot_start(conn, &e),
    };
    if stream {
        streamed(conn, running, slot, shared);
    } else {
        whole(conn, running, slot, shared);
    }
}

/// Does this message report an `open` that failed for want of descriptors (EMFILE, ENFILE)?
/// The config error keeps only the I/O error's text, which names the OS error.
fn out_of_descriptors(message: &str) -> bool {
    [libc::EMFILE, libc::ENFILE]
        .iter()
        .any(|&code| message.contains(&std::io::Error::from_raw_os_error(code).to_string()))
}

/// A running call answered in one JSON object when it ends. The pieces are not kept: the done
/// line holds the whole reply (and is held whatever `--max-output` says: the reply is saved
/// by then, and a saved reply is never reported as failed).
fn whole(conn: Conn, running: child::Running, slot: CallSlot<'_>, shared: &Shared) {
    let mut done: Option<Map<String, Value>> = None;
    let mut error: Option<(String, Option<String>, i32, Option<String>)> = None;
    let outcome = running.supervise(
        Some(&conn.stream),
        shared.limits.call_timeout,
        &mut |line| {
            match serde_json::from_slice::<Line>(line) {
                Ok(Line::Done { answer }) => done = Some(answer),
                Ok(Line::Error {
                    error: e,
                    hint,
                    exit_code,
                    chat,
                }) => error = Some((e, hint, exit_code, chat)),
                Ok(Line::Delta { .. } | Line::Tool { .. }) | Err(_) => {}
            }
            Flow::Go
        },
    );
    // The child has ended: its place is free before the answer is on its way.
    drop(slot);
    match (&outcome.ending, done, error) {
        (Ending::Exited(0), Some(mut answer), _) => {
            with_html(&mut answer, &shared.signer);
            conn.json(200, &answer, &[]);
        }
        (Ending::Exited(code), _, Some((message, hint, exit_code, chat))) => {
            let status = call_status(if *code == 0 { exit_code } else { *code });
            let retry: &[(&str, &str)] = if status == 429 {
                &[("Retry-After", "2")]
            } else {
                &[]
            };
            fail_in_chat(
                conn,
                status,
                &message,
                hint.as_deref(),
                Some(exit_code),
                chat.as_deref(),
                retry,
            );
        }
        (Ending::Exited(code), _, None) => {
            let (message, hint) = failure(&outcome, *code);
            fail_with(
                conn,
                call_status(*code),
                &message,
                hint.as_deref(),
                Some(*code),
                &[],
            );
        }
        (ending, _, _) => ended_early(conn, ending, late_chat(&outcome).as_deref(), shared),
    }
}

/// What a call that printed no error line said on stderr (it failed before it could print
/// one: it was killed, or could not run at all).
fn failure(outcome: &Outcome, code: i32) -> (String, Option<String>) {
    if code == 0 {
        return ("ai ended without an answer".into(), None);
    }
    scraped(&outcome.stderr, code)
}

/// A running call answered as server-sent events: `delta` events as the reply streams, then
/// `done` (the object a whole answer would be) or `error` ({error, hint, exit_code}).
fn streamed(mut conn: Conn, running: child::Running, slot: CallSlot<'_>, shared: &Shared) {
    if conn.start_events().is_err() {
        // Gone already: stop it as if it were watched.
        let _ = running.supervise(None, std::time::Duration::ZERO, &mut |_| Flow::Gone);
        return;
    }
    let mut finished = false;
    let client = &conn.stream;
    let outcome = running.supervise(Some(client), shared.limits.call_timeout, &mut |line| {
        let mut w = client;
        let sent = match serde_json::from_slice::<Line>(line) {
            Ok(Line::Delta { text }) => write_event(&mut w, "delta", &json!({"text": text})),
            Ok(Line::Tool { call }) => write_event(&mut w, "tool", &call),
            Ok(Line::Done { mut answer }) => {
                finished = true;
                done_events(&mut w, &mut answer, &shared.signer)
            }
            Ok(Line::Error {
                error,
                hint,
                exit_code,
                chat,
            }) => {
                finished = true;
                write_event(
                    &mut w,
                    "error",
                    &ErrorEvent {
                        error: &error,
                        hint: hint.as_deref(),
                        exit_code: Some(exit_code),
                        chat: chat.as_deref(),
                    },
                )
            }
            Err(_) => Ok(()),
        };
        match sent {
            Ok(()) => Flow::Go,
            Err(_) => Flow::Gone,
        }
    });
    drop(slot);
    if !finished {
        let chat = late_chat(&outcome);
        let (message, hint, code) = match &outcome.ending {
            Ending::Exited(code) => {
                let (m, h) = failure(&outcome, *code);
                (m, h, Some(*code))
            }
            ending => match stopped(ending, chat.is_some(), shared) {
                Some((_, m, h)) => (m, Some(h.to_owned()), None),
                None => return,
            },
        };
        let _ = conn.event(
            "error",
            &ErrorEvent {
                error: &message,
                hint: hint.as_deref(),
                exit_code: code,
                chat: chat.as_deref(),
            },
        );
    }
    conn.close();
}

/// The end of a streamed call: `sources` (when the answer was grounded), then `done`.
fn done_events(
    w: &mut impl std::io::Write,
    answer: &mut Map<String, Value>,
    signer: &super::sign::Signer,
) -> std::io::Result<()> {
    with_html(answer, signer);
    if let Some(sources) = answer
        .get("sources")
        .filter(|s| s.as_array().is_some_and(|a| !a.is_empty()))
    {
        write_event(w, "sources", &json!({ "sources": sources }))?;
    }
    write_event(w, "done", answer)
}

/// The reply rendered as HTML (`html`), for the page: model text never becomes markup there;
/// and each source given its signed `url` (a plain link that opens the note).
fn with_html(answer: &mut Map<String, Value>, signer: &super::sign::Signer) {
    super::sign::sign_sources(signer, answer.get_mut("sources"));
    if let Some(reply) = answer.get("reply").and_then(Value::as_str) {
        let html = super::render::markdown(reply);
        answer.insert("html".into(), Value::String(html));
    }
}

/// A place among the calls that may run at once, given back when dropped.
struct CallSlot<'a>(&'a Shared);

impl<'a> CallSlot<'a> {
    fn take(shared: &'a Shared) -> Option<CallSlot<'a>> {
        shared
            .calls
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < shared.limits.max_calls).then_some(n + 1)
            })
            .ok()
            .map(|_| CallSlot(shared))
    }
}

impl Drop for CallSlot<'_> {
    fn drop(&mut self) {
        self.0.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_for_want_of_descriptors_are_told_apart() {
        let emfile = std::io::Error::from_raw_os_error(libc::EMFILE);
        let enfile = std::io::Error::from_raw_os_error(libc::ENFILE);
        for e in [emfile, enfile] {
            assert!(out_of_descriptors(&format!(
                "cannot read config /h/config.json: {e}"
            )));
        }
        let other = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(!out_of_descriptors(&format!(
            "cannot read config /h/config.json: {other}"
        )));
        assert!(!out_of_descriptors("config.json is not valid JSON: line 1"));
    }

    #[test]
    fn stream_lines_are_read() {
        let done: Line = serde_json::from_str(
            r#"{"type":"done","reply":"hi","chat":"K7Q","usage":null,"elapsed_ms":3}"#,
        )
        .unwrap();
        let Line::Done { answer } = done else {
            panic!()
        };
        assert_eq!(answer["reply"], "hi");
        assert!(!answer.contains_key("type"));
        let err: Line =
            serde_json::from_str(r#"{"type":"error","error":"no","hint":null,"exit_code":4}"#)
                .unwrap();
        assert!(matches!(err, Line::Error { exit_code: 4, .. }));
        assert!(serde_json::from_str::<Line>(r#"{"type":"other"}"#).is_err());
    }
}
