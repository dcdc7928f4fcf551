//! `ai serve`: the HTTP API, its token, its limits, and chats shared with the CLI.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{Cmd, Env, Proc};

/// A token long enough for `ai serve` (16 characters or more).
pub const TOKEN: &str = "test-token-0123456789";

/// A running `ai serve`, stopped when dropped (the hang guard of [`Proc`] ends it).
pub struct Served {
    pub child: Proc,
    pub port: u16,
    /// What the server printed on stderr up to the "listening" line.
    pub banner: String,
    /// Everything it printed on stderr so far (read on a thread).
    log: Arc<Mutex<String>>,
}

impl Served {
    /// Everything the server printed on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

/// `ai serve 0 ARGS…` with extra variables.
pub fn serve(env: &Env, args: &[&str], extra_env: &[(&str, &str)]) -> Served {
    let mut cmd = env.ai().arg("serve").arg("0").args(args);
    for (k, v) in extra_env {
        cmd = cmd.env(k, v);
    }
    serve_with(cmd)
}

/// Start a command that ends up as `ai serve` and wait for its "listening" line.
pub fn serve_with(cmd: Cmd) -> Served {
    // A server lives as long as its test, which may drive a browser for minutes on a loaded
    // machine: its hang guard must not end it under the test (60 s did). Dropping it still
    // ends it at once, and every wait in the test has its own deadline.
    let cmd = cmd
        .deadline(Duration::from_secs(600))
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    // Owned by the guard at once: it is killed and reaped whatever happens next.
    let mut served = Served {
        child: cmd.spawn().unwrap(),
        port: 0,
        banner: String::new(),
        log: Arc::new(Mutex::new(String::new())),
    };
    let mut reader = BufReader::new(served.child.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("ai serve ended before listening: {}", served.banner);
        }
        served.banner.push_str(&line);
        if let Some(addr) = line.trim().strip_prefix("ai serve: listening on http://") {
            served.port = addr.rsplit(':').next().unwrap().parse().unwrap();
            // Keep reading stderr so the server never blocks on it.
            let log = Arc::clone(&served.log);
            std::thread::spawn(move || {
                let mut line = String::new();
                while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
                    log.lock().unwrap().push_str(&line);
                    line.clear();
                }
            });
            return served;
        }
    }
}

/// An answer: status, head (status line and headers) and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    /// A header's value (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers(name).into_iter().next()
    }

    /// Every value of a header, in the order sent (a header sent twice shows here).
    pub fn headers(&self, name: &str) -> Vec<String> {
        self.head
            .lines()
            .skip(1)
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_owned())
            })
            .collect()
    }

    pub fn json(&self) -> serde_json::Value {
        json(&self.body)
    }
}

/// Send raw bytes as a request; read the whole answer.
pub fn raw(port: u16, request: &[u8]) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    // A server may answer (413, 415) before reading a large body: a failed write is fine then.
    let _ = s.write_all(request);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_answer(&raw)
}

pub fn parse_answer(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// A request with the right Host and JSON body type, and these extra header lines.
pub fn request(port: u16, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Answer {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    raw(port, &bytes)
}

/// One HTTP/1.1 request with a JSON body; (status, body).
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &[u8],
) -> (u16, String) {
    let auth = token.map(|t| format!("Authorization: Bearer {t}"));
    let mut headers = vec!["Content-Type: application/json"];
    if let Some(a) = &auth {
        headers.push(a);
    }
    let a = request(port, method, path, &headers, body);
    (a.status, a.body)
}

pub fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[test]
fn token_is_required_and_compared() {
    let env = Env::new();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let (status, body) = http(s.port, "GET", "/health", None, b"");
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["status"], "ok");
    for token in [
        None,
        Some("wrong-token-0123456789"),
        Some("test-token-012345678"),
        Some("test-token-0123456789X"),
    ] {
        let (status, body) = http(s.port, "GET", "/models", token, b"");
        assert_eq!(status, 401, "{token:?}: {body}");
        let (status, _) = http(
            s.port,
            "POST",
            "/call",
            token,
            br#"{"alias":"echo","prompt":"hi"}"#,
        );
        assert_eq!(status, 401);
    }
    let (status, body) = http(s.port, "GET", "/models", Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");
    assert!(
        json(&body)
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["alias"] == "sonnet")
    );
    let (status, body) = http(s.port, "GET", "/providers", Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");
    assert!(
        json(&body)
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "claude" && p["usable"] == true)
    );
    assert!(
        !env.home.join("chats").exists(),
        "a refused call ran nothing"
    );
}

#[test]
fn a_token_is_made_and_printed_when_none_is_given_or_taken_from_the_environment() {
    let env = Env::new();
    let s = serve(&env, &[], &[]);
    let token = s
        .banner
        .lines()
        .find_map(|l| l.rsplit(": ").next().filter(|t| t.len() == 32))
        .unwrap_or_else(|| panic!("{}", s.banner));
    assert_eq!(http(s.port, "GET", "/models", Some(token), b"").0, 200);
    drop(s);
    let s = serve(&env, &[], &[("AI_CLI_SERVER_TOKEN", "from-env-0123456789")]);
    assert_eq!(
        http(s.port, "GET", "/models", Some("from-env-0123456789"), b"").0,
        200
    );
    assert!(
        !s.banner.contains("from-env"),
        "the known token is not printed"
    );
}

#[test]
fn bad_requests_get_clear_answers() {
    let env = Env::new();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let big = vec![b'a'; 9 * 1024 * 1024];
    assert_eq!(http(s.port, "POST", "/call", Some(TOKEN), &big).0, 413);
    let (status, body) = http(s.port, "POST", "/call", Some(TOKEN), b"{not json");
    assert_eq!(status, 400, "{body}");
    assert!(
        json(&body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a valid call")
    );
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"sonet","prompt":"x"}"#,
    );
    assert_eq!(status, 404, "{body}");
    assert!(
        json(&body)["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("sonnet")
    );
    assert_eq!(http(s.port, "GET", "/nope", Some(TOKEN), b"").0, 404);
    assert_eq!(http(s.port, "GET", "/call", Some(TOKEN), b"").0, 405);
}

#[test]
fn a_chat_continues_alternately_from_the_cli_and_over_http() {
    let env = Env::new();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"echo","prompt":"one over http"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let v = json(&body);
    let id = v["chat"].as_str().unwrap().to_owned();
    assert!(v["reply"].as_str().unwrap().contains("one over http"));

    let out = env.ai().args(["chat", &id, "two from the shell"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.contains("2 earlier messages"), "{}", out.stdout);

    let call = format!(r#"{{"chat":"{id}","prompt":"three over http"}}"#);
    let (status, body) = http(s.port, "POST", "/call", Some(TOKEN), call.as_bytes());
    assert_eq!(status, 200, "{body}");
    assert!(
        json(&body)["reply"]
            .as_str()
            .unwrap()
            .contains("4 earlier messages"),
        "{body}"
    );

    let out = env.ai().args(["chat", &id, "four from the shell"]).run();
    assert!(out.stdout.contains("6 earlier messages"), "{}", out.stdout);
    assert_eq!(env.messages(&id).len(), 8);

    // A failing backend over HTTP: 502 with its message; the prompt is kept as in the CLI.
    env.exit_code("claude", 1);
    env.stderr("claude", "Not logged in\n");
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"sonnet","prompt":"x"}"#,
    );
    assert_eq!(status, 502, "{body}");
    assert!(
        json(&body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Not logged in"),
        "{body}"
    );
}

#[test]
fn no_auth_is_for_loopback_only() {
    let env = Env::new();
    let out = env
        .ai()
        .args(["serve", "0", "--host", "0.0.0.0", "--no-auth"])
        .run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--no-auth"), "{}", out.stderr);
    let s = serve(&env, &["--no-auth"], &[]);
    assert_eq!(http(s.port, "GET", "/models", None, b"").0, 200);
}

#[test]
fn requests_for_other_hosts_are_refused() {
    // DNS rebinding: a page at evil.example, its name pointed at 127.0.0.1, must not reach
    // the API, even without a token (review D3).
    let env = Env::echo();
    let s = serve(&env, &["--no-auth"], &[]);
    let port = s.port;
    let call = br#"{"prompt":"rebound"}"#;
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        format!("localhost.evil.example:{port}"),
    ] {
        let req = format!(
            "POST /call HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            call.len()
        );
        let a = raw(port, &[req.as_bytes(), call].concat());
        assert_eq!(a.status, 421, "{host}: {a:?}");
        assert!(
            a.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("does not answer to the host"),
            "{a:?}"
        );
        let a = raw(
            port,
            format!("GET /models HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
        );
        assert_eq!(a.status, 421, "{host}: {a:?}");
    }
    // No Host at all, or two.
    assert_eq!(raw(port, b"GET /models HTTP/1.0\r\n\r\n").status, 400);
    let two =
        format!("GET /models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\n\r\n");
    assert_eq!(raw(port, two.as_bytes()).status, 400);
    assert!(!env.chats_dir().exists(), "nothing ran");

    // The served address, by number or as localhost.
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let a = raw(
            port,
            format!("GET /models HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
        );
        assert_eq!(a.status, 200, "{host}: {a:?}");
    }
}

#[test]
fn cross_origin_requests_are_refused() {
    let env = Env::echo();
    let s = serve(&env, &["--no-auth"], &[]);
    let call = br#"{"prompt":"csrf"}"#;
    for origin in ["http://evil.example", "null", "https://127.0.0.1"] {
        let h = format!("Origin: {origin}");
        let a = request(
            s.port,
            "POST",
            "/call",
            &["Content-Type: application/json", &h],
            call,
        );
        assert_eq!(a.status, 403, "{origin}: {a:?}");
        assert!(
            a.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("origin")
        );
    }
    assert!(!env.chats_dir().exists(), "nothing ran");
    // The server's own origin, or none, is fine.
    let own = format!("Origin: http://127.0.0.1:{}", s.port);
    let a = request(
        s.port,
        "POST",
        "/call",
        &["Content-Type: application/json", &own],
        call,
    );
    assert_eq!(a.status, 200, "{a:?}");
    let a = request(
        s.port,
        "POST",
        "/call",
        &["Content-Type: application/json"],
        call,
    );
    assert_eq!(a.status, 200, "{a:?}");
}

#[test]
fn post_bodies_must_be_json() {
    // A cross-site "simple" POST (text/plain, form) sends no preflight: refused (review D3).
    let env = Env::echo();
    let s = serve(&env, &["--no-auth"], &[]);
    let call = br#"{"prompt":"csrf"}"#;
    for ct in [
        Some("Content-Type: text/plain"),
        Some("Content-Type: application/x-www-form-urlencoded"),
        Some("Content-Type: multipart/form-data; boundary=x"),
        None,
    ] {
        let headers: Vec<&str> = ct.into_iter().collect();
        let a = request(s.port, "POST", "/call", &headers, call);
        assert_eq!(a.status, 415, "{ct:?}: {a:?}");
        assert!(
            a.json()["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("application/json")
        );
    }
    assert!(!env.chats_dir().exists(), "nothing ran");
    let a = request(
        s.port,
        "POST",
        "/call",
        &["Content-Type: application/json; charset=utf-8"],
        call,
    );
    assert_eq!(a.status, 200, "{a:?}");
}

#[test]
fn short_tokens_are_refused_at_start() {
    let env = Env::echo();
    for (args, vars) in [
        (vec!["--token", ""], vec![]),
        (vec!["--token", "short"], vec![]),
        (vec!["--token", "0123456789abcde"], vec![]),
        (vec!["--token", "0123456789 abcdef"], vec![]),
        (vec![], vec![("AI_CLI_SERVER_TOKEN", "short")]),
    ] {
        let mut cmd = env.ai().args(["serve", "0"]).args(&args);
        for (k, v) in &vars {
            cmd = cmd.env(k, v);
        }
        let out = cmd.run().code(2);
        assert!(out.error().contains("token"), "{args:?} {vars:?}: {out:?}");
        assert!(out.stderr.contains("hint:"), "{out:?}");
        assert!(!out.stderr.contains("listening"), "{out:?}");
    }
}

#[test]
fn the_bearer_scheme_is_any_case() {
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN], &[]);
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let h = format!("Authorization: {scheme} {TOKEN}");
        let a = request(s.port, "GET", "/models", &[&h], b"");
        assert_eq!(a.status, 200, "{scheme}: {a:?}");
    }
    for h in [
        format!("Authorization: Basic {TOKEN}"),
        format!("Authorization: {TOKEN}"),
        "Authorization: Bearer ".to_owned(),
    ] {
        let a = request(s.port, "GET", "/models", &[&h], b"");
        assert_eq!(a.status, 401, "{h}: {a:?}");
        assert_eq!(a.header("WWW-Authenticate").as_deref(), Some("Bearer"));
    }
}

#[test]
fn protocol_odds_are_refused_or_understood() {
    // M: two Origin headers (only one could be checked) are refused.
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let own = format!("Origin: http://127.0.0.1:{}", s.port);
    let auth = format!("Authorization: Bearer {TOKEN}");
    let json_type = "Content-Type: application/json";
    for second in ["Origin: http://evil.example", own.as_str()] {
        let a = request(
            s.port,
            "POST",
            "/call",
            &[json_type, &auth, &own, second],
            br#"{"prompt":"two origins"}"#,
        );
        assert_eq!(a.status, 403, "{second}: {a:?}");
    }
    assert!(!env.chats_dir().exists(), "nothing ran");
    // A NUL in a system prompt, a chat ID or a new title is a bad request, not a failure to
    // start ai.
    for body in [
        &br#"{"prompt":"x","system":"a\u0000b"}"#[..],
        br#"{"prompt":"x","chat":"K7\u0000Q"}"#,
    ] {
        let a = request(s.port, "POST", "/call", &[json_type, &auth], body);
        assert_eq!(a.status, 400, "{a:?}");
        assert!(a.body.contains("NUL"), "{a:?}");
    }
    let (status, body) = http(s.port, "POST", "/call", Some(TOKEN), br#"{"prompt":"hi"}"#);
    assert_eq!(status, 200, "{body}");
    let id = json(&body)["chat"].as_str().unwrap().to_owned();
    let a = request(
        s.port,
        "POST",
        &format!("/chats/{id}/rename"),
        &[json_type, &auth],
        br#"{"to":"a\u0000b"}"#,
    );
    assert_eq!(a.status, 400, "{a:?}");
    // `--host [::1]`, as in a URL, is `::1`.
    let v6 =
        crate::serve::serve_with(env.command(&["serve", "0", "--host", "[::1]", "--token", TOKEN]));
    assert!(v6.banner.contains("http://[::1]:"), "{}", v6.banner);
    let mut c = std::net::TcpStream::connect(("::1", v6.port)).unwrap();
    let req = format!(
        "GET /health HTTP/1.1\r\nHost: [::1]:{}\r\nConnection: close\r\n\r\n",
        v6.port
    );
    std::io::Write::write_all(&mut c, req.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut c, &mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// A client that sends its whole body before it reads (Python's urllib, as requests does)
/// reads the 413 of a body far over the limit, not a broken pipe. Needs `python3` (Debian:
/// `apt-get install python3`); skipped without it unless `AI_REQUIRE_PYTHON=1` (as `.ci/run`).
#[test]
fn a_python_client_sending_a_too_large_body_reads_the_413() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    if !python.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var("AI_REQUIRE_PYTHON").as_deref() != Ok("1"),
            "python3 is not installed (AI_REQUIRE_PYTHON=1 is set)"
        );
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let env = Env::new();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let script = r#"
import sys, urllib.request, urllib.error
port, token, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = b'{"prompt":"' + b"a" * size + b'"}'
req = urllib.request.Request(f"http://127.0.0.1:{port}/call", data=body, method="POST",
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
try:
    urllib.request.urlopen(req, timeout=120)
    print("answered 200")
except urllib.error.HTTPError as e:
    print("HTTP", e.code, e.read().decode())
except Exception as e:
    print("failed:", type(e).__name__, e)
"#;
    for size in [9 << 20, 40 << 20] {
        let out = std::process::Command::new("python3")
            .args(["-c", script, &s.port.to_string(), TOKEN, &size.to_string()])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.starts_with("HTTP 413"), "{size} bytes: {said}");
        assert!(said.contains("larger than 8 MiB"), "{said}");
    }
}
