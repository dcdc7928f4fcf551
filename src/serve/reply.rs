//! The answers the endpoints share: an error as `{"error": {"message", "hint", "exit_code"}}`,
//! and running `ai` to its end with its failure answered. Below the router ([`super::routes`])
//! and the handlers it dispatches to ([`super::call`], [`super::notes`], [`super::page`]).

use serde::Serialize;

use super::Shared;
use super::child::{self, Ending, Flow};
use super::http::Conn;

/// An error answer: `{"error": {"message", "hint", "exit_code"}}`.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorFields<'a>,
}

#[derive(Serialize)]
struct ErrorFields<'a> {
    message: &'a str,
    hint: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    /// The chat a failed call wrote to (its prompt pending, or a partial reply).
    #[serde(skip_serializing_if = "Option::is_none")]
    chat: Option<&'a str>,
}

pub(super) fn fail(conn: Conn, status: u16, message: &str, hint: Option<&str>) {
    fail_with(conn, status, message, hint, None, &[]);
}

pub(super) fn fail_with(
    conn: Conn,
    status: u16,
    message: &str,
    hint: Option<&str>,
    exit_code: Option<i32>,
    extra: &[(&str, &str)],
) {
    fail_in_chat(conn, status, message, hint, exit_code, None, extra);
}

/// An error answer naming the chat the failed call wrote to.
pub(super) fn fail_in_chat(
    conn: Conn,
    status: u16,
    message: &str,
    hint: Option<&str>,
    exit_code: Option<i32>,
    chat: Option<&str>,
    extra: &[(&str, &str)],
) {
    let body = ErrorBody {
        error: ErrorFields {
            message,
            hint,
            exit_code,
            chat,
        },
    };
    let mut headers = extra.to_vec();
    if status == 401 {
        headers.push(("WWW-Authenticate", "Bearer"));
    }
    conn.json(status, &body, &headers);
}

pub(super) fn not_allowed(conn: Conn, allow: &str) {
    fail_with(
        conn,
        405,
        "method not allowed",
        None,
        None,
        &[("Allow", allow)],
    );
}

pub(super) fn not_json(conn: Conn) {
    fail(
        conn,
        500,
        "ai answered with something that is not JSON",
        None,
    );
}

/// Run `ai ARGS` to its end: its stdout when it succeeded; otherwise its failure is answered
/// (with the CLI's error and hint) and `None` returned.
pub(super) fn run_ai(conn: Conn, shared: &Shared, args: &[&str]) -> Option<(Conn, Vec<u8>)> {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let conn = no_nul(conn, &args)?;
    let running = match child::start(&shared.exe, "serve", &args, None, shared.limits.max_output) {
        Ok(r) => r,
        Err(e) => {
            cannot_start(conn, &e);
            return None;
        }
    };
    let max = shared.limits.max_output;
    let mut out = Vec::new();
    let outcome = running.supervise(
        Some(&conn.stream),
        shared.limits.call_timeout,
        &mut |line| {
            if out.len() + line.len() > max {
                return Flow::TooLarge;
            }
            out.extend_from_slice(line);
            Flow::Go
        },
    );
    match outcome.ending {
        Ending::Exited(0) => Some((conn, out)),
        Ending::Exited(code) => {
            let (message, hint) = scraped(&outcome.stderr, code);
            let status = match code {
                2 => 400,
                4 => 404,
                75 => 409,
                _ => 500,
            };
            fail_with(conn, status, &message, hint.as_deref(), Some(code), &[]);
            None
        }
        other => {
            ended_early(conn, &other, None, shared);
            None
        }
    }
}

/// The `error:` and `hint:` lines of an `ai` that failed (the management commands print their
/// errors there; a call prints its error as a JSON line too, see [`super::call`]).
pub(crate) fn scraped(stderr: &str, code: i32) -> (String, Option<String>) {
    let line = |prefix: &str| {
        stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::trim)
            .map(str::to_owned)
    };
    let message = line("error:").unwrap_or_else(|| format!("ai exited with {code}"));
    (message, line("hint:"))
}

/// A NUL cannot be passed to a program (in a title, a system prompt, an ID): 400, not a
/// failure to start `ai`.
pub(super) fn no_nul(conn: Conn, args: &[String]) -> Option<Conn> {
    if args.iter().any(|a| a.contains('\0')) {
        fail(
            conn,
            400,
            "the request holds a NUL character",
            Some("send text without NUL characters"),
        );
        return None;
    }
    Some(conn)
}

pub(super) fn cannot_start(conn: Conn, e: &std::io::Error) {
    // Out of processes or descriptors is a passing state: worth a retry.
    let busy = matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::EAGAIN)
    );
    let message = format!("cannot start ai: {e}");
    if busy {
        fail_with(
            conn,
            503,
            &message,
            Some("try again in a moment"),
            None,
            &[("Retry-After", "2")],
        );
    } else {
        fail(conn, 500, &message, None);
    }
}

/// The answer when a child was stopped (the client is gone: nothing is written). `chat`: the
/// chat it wrote to, when known.
pub(super) fn ended_early(conn: Conn, ending: &Ending, chat: Option<&str>, shared: &Shared) {
    if let Some((status, message, hint)) = stopped(ending, chat.is_some(), shared) {
        fail_in_chat(conn, status, &message, Some(hint), None, chat, &[]);
    }
}

/// Status, message and hint for a child that was stopped; `None` when no one is listening.
pub(super) fn stopped(
    ending: &Ending,
    in_chat: bool,
    shared: &Shared,
) -> Option<(u16, String, &'static str)> {
    match ending {
        Ending::Gone | Ending::Exited(_) => None,
        Ending::TimedOut => Some((
            504,
            format!(
                "the call took longer than {} s, so it was stopped; a partial reply is kept in its chat",
                shared.limits.call_timeout.as_secs()
            ),
            "ai serve --call-timeout SECS allows longer calls",
        )),
        Ending::TooLarge => Some((
            502,
            format!(
                "the answer is larger than {} bytes, the most ai serve holds, so the call was stopped{}",
                shared.limits.max_output,
                if in_chat {
                    "; a partial reply is kept in its chat"
                } else {
                    ""
                }
            ),
            "ai serve --max-output BYTES allows more",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_found_on_stderr() {
        let (m, h) = scraped("ai: note\nerror: no chat 'X'\nhint: `ai chat list`\n", 4);
        assert_eq!(
            (m.as_str(), h.as_deref()),
            ("no chat 'X'", Some("`ai chat list`"))
        );
        assert_eq!(scraped("", 9).0, "ai exited with 9");
    }
}
