//! `ai serve`: the Python tool's HTTP API on 127.0.0.1 (GET /health, /models, /providers;
//! POST /call). Every call runs as its own `ai` process, so chats continue over HTTP with the
//! same files and locks as from the shell, and no request can take the server down with it.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use rand::Rng;
use serde::Deserialize;
use serde_json::{Value, json};
use tiny_http::{Header, Method, Request, Response, Server};

use crate::error::{Error, Result};
use crate::output::Ui;

/// The largest request body accepted (a prompt with files fits well within it).
pub(crate) const MAX_BODY: u64 = 8 * 1024 * 1024;

pub(crate) struct Options {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) token: Option<String>,
    pub(crate) no_auth: bool,
}

/// The body of POST /call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    /// Model alias (or provider:model); the default model when left out.
    #[serde(default)]
    alias: Option<String>,
    prompt: String,
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
}

pub(crate) fn run(opts: Options, ui: &Ui) -> Result<()> {
    let token = if opts.no_auth {
        None
    } else {
        Some(
            match opts.token.or_else(|| {
                std::env::var("AI_CLI_SERVER_TOKEN")
                    .ok()
                    .filter(|t| !t.is_empty())
            }) {
                Some(t) => t,
                None => {
                    let t = generate_token();
                    ui.notice(&format!(
                        "ai serve: token (send it as \"Authorization: Bearer …\"): {t}"
                    ));
                    t
                }
            },
        )
    };
    let loopback = matches!(opts.host.as_str(), "127.0.0.1" | "localhost" | "::1");
    if token.is_none() && !loopback {
        return Err(Error::usage(format!(
            "--no-auth on {} would let anyone on the network use your keys",
            opts.host
        ))
        .hint("keep the default host 127.0.0.1, or use a token"));
    }
    let server = Server::http((opts.host.as_str(), opts.port)).map_err(|e| {
        Error::usage(format!("cannot listen on {}:{}: {e}", opts.host, opts.port))
            .hint("choose another port: ai serve PORT")
    })?;
    let addr = server
        .server_addr()
        .to_ip()
        .map_or_else(|| format!("{}:{}", opts.host, opts.port), |a| a.to_string());
    // The one line scripts and tests wait for; shown even with -q.
    let _ = writeln!(std::io::stderr(), "ai serve: listening on http://{addr}");
    let exe = std::env::current_exe()
        .map_err(|e| Error::backend(format!("cannot find the ai program itself: {e}")))?;
    std::thread::scope(|scope| {
        for request in server.incoming_requests() {
            let token = token.as_deref();
            let exe = &exe;
            scope.spawn(move || handle(request, token, exe));
        }
    });
    Ok(())
}

fn generate_token() -> String {
    let mut rng = rand::rng();
    (0..32)
        .map(|_| format!("{:x}", rng.random_range(0..16u8)))
        .collect()
}

/// Equal bytes, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn authorized(req: &Request, token: Option<&str>) -> bool {
    let Some(token) = token else { return true };
    req.headers()
        .iter()
        .find(|h| h.field.equiv("Authorization"))
        .and_then(|h| {
            h.value
                .as_str()
                .strip_prefix("Bearer ")
                .map(str::trim)
                .map(str::to_owned)
        })
        .is_some_and(|given| same(given.as_bytes(), token.as_bytes()))
}

fn reply(req: Request, status: u16, body: &Value) {
    let mut text = serde_json::to_string(body).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    let mut resp = Response::from_string(text).with_status_code(status);
    if let Ok(h) = Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]) {
        resp = resp.with_header(h);
    }
    if status == 401
        && let Ok(h) = Header::from_bytes(&b"WWW-Authenticate"[..], &b"Bearer"[..])
    {
        resp = resp.with_header(h);
    }
    let _ = req.respond(resp);
}

fn error_body(message: &str, hint: Option<&str>) -> Value {
    json!({"error": {"message": message, "hint": hint}})
}

fn handle(mut req: Request, token: Option<&str>, exe: &std::path::Path) {
    let path = req.url().split('?').next().unwrap_or("").to_owned();
    let method = req.method().clone();
    if method == Method::Get && path == "/health" {
        return reply(
            req,
            200,
            &json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}),
        );
    }
    if !authorized(&req, token) {
        return reply(
            req,
            401,
            &error_body(
                "missing or wrong bearer token",
                Some("send Authorization: Bearer TOKEN"),
            ),
        );
    }
    match (method, path.as_str()) {
        (Method::Get, "/models") => {
            let (status, body) = run_ai(exe, &["list", "--json"], None);
            reply(req, status, &body)
        }
        (Method::Get, "/providers") => {
            let (status, body) = run_ai(exe, &["list", "--providers", "--json"], None);
            reply(req, status, &body)
        }
        (Method::Post, "/call") => {
            if req.body_length().is_some_and(|n| n as u64 > MAX_BODY) {
                return reply(
                    req,
                    413,
                    &error_body("the request body is larger than 8 MiB", None),
                );
            }
            let mut body = Vec::new();
            let read = req.as_reader().take(MAX_BODY + 1).read_to_end(&mut body);
            if read.is_err() {
                return reply(req, 400, &error_body("cannot read the request body", None));
            }
            if body.len() as u64 > MAX_BODY {
                return reply(
                    req,
                    413,
                    &error_body("the request body is larger than 8 MiB", None),
                );
            }
            let call: Call = match serde_json::from_slice(&body) {
                Ok(c) => c,
                Err(e) => {
                    return reply(
                        req,
                        400,
                        &error_body(
                            &format!("the body is not a valid call: {e}"),
                            Some(
                                "send {\"prompt\": \"…\", \"alias\": \"sonnet\", \"chat\": \"K7Q\"}",
                            ),
                        ),
                    );
                }
            };
            let (status, body) = call_ai(exe, &call);
            reply(req, status, &body)
        }
        (_, "/health" | "/models" | "/providers" | "/call") => {
            reply(req, 405, &error_body("method not allowed", None))
        }
        _ => reply(
            req,
            404,
            &error_body(
                "no such endpoint",
                Some("GET /health, /models, /providers; POST /call"),
            ),
        ),
    }
}

/// POST /call: one `ai` process, the prompt on its stdin.
fn call_ai(exe: &std::path::Path, call: &Call) -> (u16, Value) {
    let mut args: Vec<String> = vec!["--json".into(), "-q".into()];
    if let Some(c) = &call.chat {
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
                let mut body = error_body(&e.to_string(), e.hint_text());
                body["error"]["exit_code"] = json!(e.exit_code());
                return (404, body);
            }
            Err(e) => return (500, error_body(&e.to_string(), e.hint_text())),
        }
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ai(exe, &refs, Some(&call.prompt))
}

/// Run `ai ARGS` (with `stdin`), and turn its exit code and output into a status and a body.
fn run_ai(exe: &std::path::Path, args: &[&str], stdin: Option<&str>) -> (u16, Value) {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (500, error_body(&format!("cannot start ai: {e}"), None)),
    };
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let text = text.to_owned();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => return (500, error_body(&format!("lost the ai process: {e}"), None)),
    };
    let code = out.status.code().unwrap_or(1);
    if code == 0 {
        return match serde_json::from_slice::<Value>(&out.stdout) {
            Ok(v) => (200, v),
            Err(_) => (
                500,
                error_body("ai answered with something that is not JSON", None),
            ),
        };
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let line = |prefix: &str| {
        err.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::trim)
            .map(str::to_owned)
    };
    let message = line("error:").unwrap_or_else(|| format!("ai exited with {code}"));
    let hint = line("hint:");
    let status = match code {
        2 => 400,
        3 => 500,
        4 => 404,
        75 => 429,
        _ => 502,
    };
    let mut body = error_body(&message, hint.as_deref());
    body["error"]["exit_code"] = json!(code);
    (status, body)
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn constant_time_compare() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(same(b"", b""));
    }
}
