//! `ai serve`: the HTTP API, its token, its limits, and chats shared with the CLI.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use crate::support::{Env, Proc};

/// A running `ai serve`, stopped when dropped (the hang guard of [`Proc`] ends it).
struct Served {
    child: Proc,
    port: u16,
    /// What the server printed on stderr up to the "listening" line.
    banner: String,
}

fn serve(env: &Env, args: &[&str], extra_env: &[(&str, &str)]) -> Served {
    let mut cmd = env
        .ai()
        .arg("serve")
        .arg("0")
        .args(args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    for (k, v) in extra_env {
        cmd = cmd.env(k, v);
    }
    // Owned by the guard at once: it is killed and reaped whatever happens next.
    let mut served = Served {
        child: cmd.spawn().unwrap(),
        port: 0,
        banner: String::new(),
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
            // Keep draining stderr so the server never blocks on it.
            std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
            return served;
        }
    }
}

/// One HTTP/1.1 request; (status, body).
fn http(port: u16, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    // A server may answer (413) before reading a large body: a failed write is fine then.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[test]
fn token_is_required_and_compared() {
    let env = Env::new();
    let s = serve(&env, &["--token", "right-token"], &[]);
    let (status, body) = http(s.port, "GET", "/health", None, b"");
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["status"], "ok");
    for token in [
        None,
        Some("wrong-token"),
        Some("right-toke"),
        Some("right-tokenX"),
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
    let (status, body) = http(s.port, "GET", "/models", Some("right-token"), b"");
    assert_eq!(status, 200, "{body}");
    assert!(
        json(&body)
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["alias"] == "sonnet")
    );
    let (status, body) = http(s.port, "GET", "/providers", Some("right-token"), b"");
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
    let s = serve(&env, &[], &[("AI_CLI_SERVER_TOKEN", "from-env")]);
    assert_eq!(http(s.port, "GET", "/models", Some("from-env"), b"").0, 200);
    assert!(
        !s.banner.contains("from-env"),
        "the known token is not printed"
    );
}

#[test]
fn bad_requests_get_clear_answers() {
    let env = Env::new();
    let s = serve(&env, &["--token", "t"], &[]);
    let big = vec![b'a'; 9 * 1024 * 1024];
    assert_eq!(http(s.port, "POST", "/call", Some("t"), &big).0, 413);
    let (status, body) = http(s.port, "POST", "/call", Some("t"), b"{not json");
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
        Some("t"),
        br#"{"alias":"sonet","prompt":"x"}"#,
    );
    assert_eq!(status, 404, "{body}");
    assert!(
        json(&body)["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("sonnet")
    );
    assert_eq!(http(s.port, "GET", "/nope", Some("t"), b"").0, 404);
    assert_eq!(http(s.port, "GET", "/call", Some("t"), b"").0, 405);
}

#[test]
fn a_chat_continues_alternately_from_the_cli_and_over_http() {
    let env = Env::new();
    let s = serve(&env, &["--token", "t"], &[]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some("t"),
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
    let (status, body) = http(s.port, "POST", "/call", Some("t"), call.as_bytes());
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
        Some("t"),
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
