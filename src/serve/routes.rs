//! The endpoints. Every one runs the `ai` program itself (as a child, supervised by
//! [`super::child`]), so the HTTP API shares the chat files and locks with the shell and says what the
//! CLI says; no request can take the server down with it.
//!
//! - `GET /health` (no token), `GET /models`, `GET /providers`
//! - `POST /call`: one turn, answered whole or as server-sent events ([`super::call`])
//! - `GET /chats`, `GET /chats/ID`, `DELETE /chats/ID`, `POST /chats/ID/rename`

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Shared;
use super::guard;
use super::http::{Conn, Head, ReadError};
use super::reply::{fail, not_allowed, not_json, run_ai};

/// The largest request body accepted (a prompt with files fits well within it).
pub(crate) const MAX_BODY: usize = 8 * 1024 * 1024;

/// Serve one connection: read the request, check who sends it, answer.
pub(super) fn handle(mut conn: Conn, shared: &Shared) {
    let head = match conn.read_head() {
        Ok(h) => h,
        Err(ReadError::Silent) => return,
        Err(e) => return fail(conn, e.status(), e.message(), None),
    };
    let Some(host) = head.single("host") else {
        return fail(
            conn,
            400,
            "a request needs one Host header",
            Some("send Host: 127.0.0.1:PORT"),
        );
    };
    if !shared.served.host_ok(host) {
        let hint = format!(
            "use http://{} (requests for other names are refused: DNS rebinding)",
            shared.served.addr
        );
        return fail(
            conn,
            421,
            &format!(
                "this server does not answer to the host '{}'",
                crate::output::sanitize(host)
            ),
            Some(&hint),
        );
    }
    // Two Origin headers are refused as one from elsewhere: browsers never send two, and
    // only one of them could be checked.
    if let Some(origin) = head.header("origin")
        && !head
            .single("origin")
            .is_some_and(|_| shared.served.origin_ok(origin, host))
    {
        return fail(
            conn,
            403,
            "requests from another origin are refused",
            Some(
                "call the API from the server's own page, or from a program (which sends no Origin)",
            ),
        );
    }
    let segments: Vec<&str> = head.path.split('/').skip(1).collect();
    let method = head.method.as_str();
    if head.path == "/health" {
        return match method {
            "GET" => conn.json(
                200,
                &json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}),
                &[],
            ),
            _ => not_allowed(conn, "GET"),
        };
    }
    // The page itself, its script and its style hold no secret: they load before the page
    // has the token.
    if let Some(conn) = super::page::asset(conn, method, &head.path) {
        authorized_api(conn, &head, &segments, shared);
    }
}

/// Every endpoint that needs the token: the bearer header, or for `GET /kb/NAME/note/ID`
/// alone, a `sig` made for that exact path ([`super::sign`]).
fn authorized_api(conn: Conn, head: &Head, segments: &[&str], shared: &Shared) {
    let bearer = shared
        .token
        .as_ref()
        .is_none_or(|t| guard::authorized(head.header("authorization"), t));
    let note = head.method == "GET" && matches!(segments, ["kb", _, "note", _, ..]);
    let file = head.method == "GET" && matches!(segments, ["chats", _, "files", _]);
    let signed = (note || file) && shared.signer.valid(&head.path, &head.query);
    if !(bearer || signed) {
        return unauthorized(conn);
    }
    if segments.first() == Some(&"kb") {
        return super::notes::route(conn, head, segments, shared);
    }
    api(conn, head, segments, shared);
}

fn unauthorized(conn: Conn) {
    fail(
        conn,
        401,
        "missing or wrong bearer token",
        Some("send Authorization: Bearer TOKEN (or open the URL ai serve printed)"),
    );
}

/// The chat and model endpoints.
fn api(conn: Conn, head: &Head, segments: &[&str], shared: &Shared) {
    let method = head.method.as_str();
    match (method, segments) {
        ("GET", ["models"]) => management(conn, shared, &["list", "--json"], Shape::AsIs),
        ("GET", ["providers"]) => management(
            conn,
            shared,
            &["list", "--providers", "--json"],
            Shape::AsIs,
        ),
        ("POST", ["call"]) => {
            if let Some((conn, body)) = json_body(conn, head) {
                super::call::call(conn, head, &body, shared);
            }
        }
        // `?q=WORDS`: the chats that hold every word (`ai chat search --json`).
        ("GET", ["chats"]) => match super::http::query_param(&head.query, "q") {
            Some(q) if !q.trim().is_empty() => {
                if q.contains('\0') || q.len() > 1000 {
                    return fail(
                        conn,
                        400,
                        "the search is not one line of at most 1000 bytes",
                        None,
                    );
                }
                let words: Vec<&str> = q.split_whitespace().collect();
                let mut args = vec!["chat", "search", "--json", "--limit", "50", "--"];
                args.extend(words);
                management(conn, shared, &args, Shape::AsIs);
            }
            _ => management(
                conn,
                shared,
                &["chat", "list", "--json", "--limit", "0"],
                Shape::ChatList,
            ),
        },
        ("GET", ["chats", id]) => {
            if let Some(conn) = valid_id(conn, id) {
                management(conn, shared, &["chat", "show", "--json", id], Shape::Chat);
            }
        }
        ("DELETE", ["chats", id]) => {
            if let Some(conn) = valid_id(conn, id) {
                let done = json!({"deleted": id});
                management(
                    conn,
                    shared,
                    &["chat", "delete", "--no-wait", id],
                    Shape::Fixed(done),
                );
            }
        }
        ("POST", ["chats", id, "rename"]) => {
            let Some(conn) = valid_id(conn, id) else {
                return;
            };
            let Some((conn, body)) = json_body(conn, head) else {
                return;
            };
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Rename {
                to: String,
            }
            match serde_json::from_slice::<Rename>(&body) {
                Ok(r) => {
                    let title = r.to.trim().to_owned();
                    let done = json!({"id": id, "title": title});
                    // After `--`, a title that starts with `-` is still a title.
                    management(
                        conn,
                        shared,
                        &["chat", "rename", id, "--", &r.to],
                        Shape::Fixed(done),
                    );
                }
                Err(e) => fail(
                    conn,
                    400,
                    &format!("the body is not a valid rename: {e}"),
                    Some("send {\"to\": \"the new title\"}"),
                ),
            }
        }
        ("GET", ["chats", id, "files", name]) => {
            if let Some(conn) = valid_id(conn, id) {
                kept_file(conn, id, &super::http::percent_decode(name, false), shared);
            }
        }
        (_, ["chats", _, "files", _]) => not_allowed(conn, "GET"),
        (_, ["models" | "providers" | "chats"]) => not_allowed(conn, "GET"),
        (_, ["call"]) => not_allowed(conn, "POST"),
        (_, ["chats", _]) => not_allowed(conn, "GET, DELETE"),
        (_, ["chats", _, "rename"]) => not_allowed(conn, "POST"),
        _ => fail(
            conn,
            404,
            "no such endpoint",
            Some(
                "GET /, /health, /models, /providers, /chats, /chats/ID, /chats/ID/files/NAME, /kb, /kb/NAME/search, /kb/NAME/note/ID; POST /call, /chats/ID/rename; DELETE /chats/ID",
            ),
        ),
    }
}

/// A copy of an attachment kept in a chat's folder: a plain file name there (never a path, a
/// link, or anything outside that folder), served as the image or PDF its first bytes say it
/// is, never sniffed into anything else by the browser.
fn kept_file(conn: Conn, id: &str, name: &str, shared: &Shared) {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let Some(path) = shared.store.as_ref().and_then(|s| s.kept_path(id, name)) else {
        return fail(
            conn,
            404,
            "no such kept copy in this chat",
            Some("GET /chats/ID lists the attachments; a copy exists only with --keep-attachments"),
        );
    };
    let mut bytes = Vec::new();
    // Not through a link or a FIFO put there since it was looked at.
    let read = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .and_then(|f| f.take(crate::attach::MAX_READ + 1).read_to_end(&mut bytes));
    if read.is_err() || bytes.len() as u64 > crate::attach::MAX_READ {
        return fail(conn, 500, "the kept copy cannot be read", None);
    }
    // The kept name is made plain by `ai` (letters, digits, `._-`); anything else is not
    // put in a header.
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    let file = if plain { name } else { "attachment" };
    let (content_type, disposition) = match crate::media::sniff(&bytes) {
        Some(t) => (t, format!("inline; filename=\"{file}\"")),
        None => (
            "application/octet-stream",
            format!("attachment; filename=\"{file}\""),
        ),
    };
    conn.send(
        200,
        content_type,
        &bytes,
        // `nosniff`, `no-store` and the CSP come with every answer (http::status_line).
        &[("Content-Disposition", &disposition)],
    );
}

/// A chat ID in a path: what `ai` accepts as one, and never taken for an option.
fn valid_id(conn: Conn, id: &str) -> Option<Conn> {
    match crate::chat::store::check_id(id) {
        Ok(()) if !id.starts_with('-') => Some(conn),
        Ok(()) => {
            fail(conn, 400, &format!("'{id}' is not a valid chat ID"), None);
            None
        }
        Err(e) => {
            fail(conn, 400, &e.to_string(), e.hint_text());
            None
        }
    }
}

/// The body of a POST: JSON (checked before a byte of it is read), at most [`MAX_BODY`].
pub(super) fn json_body(mut conn: Conn, head: &Head) -> Option<(Conn, Vec<u8>)> {
    if !guard::is_json(head.header("content-type")) {
        fail(
            conn,
            415,
            "the body must be JSON",
            Some("send Content-Type: application/json"),
        );
        return None;
    }
    if head.header("transfer-encoding").is_some() {
        fail(
            conn,
            411,
            "a chunked body is not accepted",
            Some("send the body with a Content-Length"),
        );
        return None;
    }
    let len = match head.single("content-length").map(str::parse::<usize>) {
        Some(Ok(n)) => n,
        None if head.header("content-length").is_none() => 0,
        _ => {
            fail(conn, 400, "the Content-Length is not valid", None);
            return None;
        }
    };
    if len > MAX_BODY {
        conn.refuse_body(len);
        fail(conn, 413, "the request body is larger than 8 MiB", None);
        return None;
    }
    if head
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        conn.continue_100();
    }
    match conn.read_body(len) {
        Ok(body) => Some((conn, body)),
        Err(ReadError::Silent) => None,
        Err(e) => {
            fail(conn, e.status(), e.message(), None);
            None
        }
    }
}

/// How a management command's JSON is answered.
enum Shape {
    AsIs,
    /// `chat list --json` rows, as `{id, title, model, turns, updated}`.
    ChatList,
    /// `chat show --json`, its messages (and failed prompts) under `messages`.
    Chat,
    /// Not the output, this value (the command prints nothing on success).
    Fixed(Value),
}

/// Run a quick `ai` command whose stdout is the answer (JSON), or whose failure is reported.
fn management(conn: Conn, shared: &Shared, args: &[&str], shape: Shape) {
    let Some((conn, out)) = run_ai(conn, shared, args) else {
        return;
    };
    let answer = match shape {
        Shape::Fixed(v) => v,
        shape => match serde_json::from_slice::<Value>(&out) {
            Ok(v) => reshape(v, shape, &shared.signer),
            Err(_) => return not_json(conn),
        },
    };
    conn.json(200, &answer, &[]);
}

fn reshape(v: Value, shape: Shape, signer: &super::sign::Signer) -> Value {
    match (shape, v) {
        (Shape::ChatList, Value::Array(rows)) => {
            #[derive(Deserialize, Serialize)]
            struct Row {
                id: String,
                title: String,
                model: Option<String>,
                turns: u64,
                #[serde(alias = "last_used")]
                updated: u64,
                #[serde(default, skip_serializing_if = "std::ops::Not::not")]
                damaged: bool,
            }
            let rows: Vec<Value> = rows
                .into_iter()
                .filter_map(|r| serde_json::from_value::<Row>(r).ok())
                .filter_map(|r| serde_json::to_value(r).ok())
                .collect();
            Value::Array(rows)
        }
        (Shape::Chat, Value::Object(mut chat)) => {
            let id = chat
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let records = match chat.remove("records") {
                Some(Value::Array(r)) => r,
                _ => Vec::new(),
            };
            let (messages, rest): (Vec<Value>, Vec<Value>) = records.into_iter().partition(|r| {
                matches!(
                    r.get("type").and_then(Value::as_str),
                    Some("message" | "pending")
                )
            });
            // The page shows replies as markdown, rendered here where nothing in them can
            // become markup (see `render`).
            let messages = messages
                .into_iter()
                .map(|mut m| {
                    let html = (m.get("role").and_then(Value::as_str) == Some("assistant"))
                        .then(|| m.get("content").and_then(Value::as_str))
                        .flatten()
                        .map(super::render::markdown);
                    if let Value::Object(fields) = &mut m {
                        if let Some(html) = html {
                            fields.insert("html".into(), Value::String(html));
                        }
                        super::sign::sign_sources(signer, fields.get_mut("sources"));
                        if !id.is_empty() {
                            super::sign::sign_kept(signer, &id, fields.get_mut("attachments"));
                        }
                    }
                    m
                })
                .collect();
            chat.insert("messages".into(), Value::Array(messages));
            chat.insert("records".into(), Value::Array(rest));
            Value::Object(chat)
        }
        (_, v) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_lists_and_chats_are_reshaped() {
        let signer = super::super::sign::Signer::new();
        let rows = json!([{"id":"K7Q","model":"echo","turns":2,"last_used":5,"title":"t"}]);
        assert_eq!(
            reshape(rows, Shape::ChatList, &signer),
            json!([{"id":"K7Q","title":"t","model":"echo","turns":2,"updated":5}])
        );
        let chat = json!({"id":"K7Q","records":[
            {"type":"message","role":"user","content":"a"},
            {"type":"message","role":"assistant","content":"r","sources":[{"kb":"k","id":"1"}]},
            {"type":"summary","content":"s"},
            {"type":"pending","content":"b"}]});
        let shown = reshape(chat, Shape::Chat, &signer);
        assert_eq!(shown["messages"].as_array().unwrap().len(), 3);
        let url = shown["messages"][1]["sources"][0]["url"].as_str().unwrap();
        let (path, query) = url.split_once('?').unwrap();
        assert!(signer.valid(path, query), "{url}");
        assert_eq!(shown["records"].as_array().unwrap().len(), 1);
    }
}
