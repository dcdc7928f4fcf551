//! `ai serve` under load and abuse: out of descriptors, too many connections, idle and slow
//! clients, too many calls, calls that run too long or say too much, clients that go away
//! (review D5, hostile test N3).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::serve::{TOKEN, http, json, parse_answer, request, serve, serve_with};
use crate::support::{Env, SLOW_GEMINI, ai_bin, wait_for, wait_gone};

/// Start a `/call` on a connection of its own and leave it open; the request is sent whole.
fn start_call(port: u16, body: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let req = format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    s
}

fn health(port: u16) -> u16 {
    http(port, "GET", "/health", None, b"").0
}

/// The only chat's messages, once it has `n` of them (read only whole: a turn may be saving).
fn messages_when(env: &Env, n: usize) -> Vec<serde_json::Value> {
    wait_for(&format!("the chat to hold {n} messages"), || {
        let ids = env.chat_ids();
        let [id] = ids.as_slice() else { return false };
        let text = std::fs::read_to_string(env.chat_path(id)).unwrap_or_default();
        text.ends_with('\n') && text.matches(r#""type":"message""#).count() >= n
    });
    env.only_messages()
}

#[test]
fn running_out_of_descriptors_does_not_end_the_server() {
    // With 64 descriptors, some 55 idle connections exhaust them: accept() fails with EMFILE.
    // It used to end the server silently with exit 0 (N3).
    let env = Env::echo();
    let script = format!("ulimit -n 64 && exec \"$0\" serve 0 --token {TOKEN}");
    let mut s = serve_with(env.program("/bin/sh").arg("-c").arg(&script).arg(ai_bin()));
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(TcpStream::connect(("127.0.0.1", s.port)).unwrap());
    }
    wait_for("the server to log the failed accept", || {
        s.log().contains("cannot accept a connection")
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(s.child.running(), "the server ended: {}", s.log());
    assert!(s.log().contains("Too many open files"), "{}", s.log());
    drop(idle);
    // The idle connections end; the server accepts again and answers.
    wait_for("the server to answer again", || health(s.port) == 200);
    // The server logs this before it serves the next connection, but the log reaches us
    // through a reader thread that a loaded machine may not have run yet: wait for it.
    wait_for("the server to log that it accepts again", || {
        s.log().contains("accepting connections again")
    });
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"prompt":"still here"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert!(s.child.running());
}

#[test]
fn connections_over_the_cap_get_503() {
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN, "--max-connections", "2"], &[]);
    let idle: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(("127.0.0.1", s.port)).unwrap())
        .collect();
    // Accepted in order: by the time the third is taken, the first two are counted.
    let mut third = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    third
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut raw = Vec::new();
    let _ = third.read_to_end(&mut raw);
    let a = parse_answer(&raw);
    assert_eq!(a.status, 503, "{a:?}");
    assert_eq!(a.header("Retry-After").as_deref(), Some("1"));
    assert!(
        a.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many")
    );
    drop(idle);
    wait_for("a place to free up", || health(s.port) == 200);
}

#[test]
fn idle_and_slow_connections_are_closed() {
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN, "--idle-timeout", "1"], &[]);
    // Nothing sent: closed without an answer.
    let started = Instant::now();
    let mut silent = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut raw = Vec::new();
    let _ = silent.read_to_end(&mut raw);
    assert!(raw.is_empty(), "{}", String::from_utf8_lossy(&raw));
    assert!(started.elapsed() < Duration::from_secs(10));
    // Half a request: 408.
    let mut slow = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    let mut raw = Vec::new();
    let _ = slow.read_to_end(&mut raw);
    assert_eq!(parse_answer(&raw).status, 408, "{raw:?}");
    // A body that never comes whole: 408 too.
    let mut slow = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let req = format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"prompt\"",
        s.port
    );
    slow.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = slow.read_to_end(&mut raw);
    assert_eq!(parse_answer(&raw).status, 408, "{raw:?}");
    assert!(env.chat_ids().is_empty());
    assert_eq!(health(s.port), 200);
}

#[test]
fn calls_over_the_cap_get_429_with_retry_after() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let s = serve(&env, &["--token", TOKEN, "--max-calls", "1"], &[]);
    let mut first = start_call(s.port, r#"{"alias":"gemini","prompt":"slow one"}"#);
    env.wait_started("gemini");
    let a = request(
        s.port,
        "POST",
        "/call",
        &[
            "Content-Type: application/json",
            &format!("Authorization: Bearer {TOKEN}"),
        ],
        br#"{"prompt":"one too many"}"#,
    );
    assert_eq!(a.status, 429, "{a:?}");
    assert_eq!(a.header("Retry-After").as_deref(), Some("2"));
    assert!(
        a.json()["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--max-calls")
    );
    // Listing chats is not a model call: it still works.
    let (status, body) = http(s.port, "GET", "/chats", Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");

    env.release();
    let mut raw = Vec::new();
    first.read_to_end(&mut raw).unwrap();
    let a = parse_answer(&raw);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["reply"], "partial answer and the rest\n");
    // The place is free again.
    let (status, body) = http(s.port, "POST", "/call", Some(TOKEN), br#"{"prompt":"now"}"#);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_call_past_its_timeout_is_stopped_and_its_partial_reply_saved() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let s = serve(&env, &["--token", TOKEN, "--call-timeout", "1"], &[]);
    let started = Instant::now();
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"gemini","prompt":"take your time"}"#,
    );
    assert_eq!(status, 504, "{body}");
    assert!(started.elapsed() < Duration::from_secs(20));
    let v = json(&body);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 1 s")
    );
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--call-timeout")
    );
    let msgs = messages_when(&env, 2);
    assert_eq!(msgs[1]["content"], "partial answer");
    assert_eq!(msgs[1]["interrupted"], true);
    // S6: the answer names the chat that keeps the partial reply.
    assert_eq!(v["error"]["chat"], env.chat_ids()[0], "{body}");
    assert_eq!(health(s.port), 200);
}

#[test]
fn output_past_the_bound_stops_the_call() {
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN, "--max-output", "2048"], &[]);
    let prompt = "x".repeat(4000);
    let body = format!(r#"{{"prompt":"{prompt}"}}"#);
    let (status, body) = http(s.port, "POST", "/call", Some(TOKEN), body.as_bytes());
    assert_eq!(status, 502, "{body}");
    let v = json(&body);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 2048 bytes")
    );
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("--max-output")
    );
    // Small answers still fit.
    let (status, body) = http(s.port, "POST", "/call", Some(TOKEN), br#"{"prompt":"hi"}"#);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_client_that_goes_away_stops_its_call_which_keeps_the_partial_reply() {
    // It used to run to the end (review D5).
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let s = serve(&env, &["--token", TOKEN], &[]);
    let client = start_call(
        s.port,
        r#"{"alias":"gemini","prompt":"tell me everything"}"#,
    );
    let fake = env.wait_started("gemini");
    drop(client);
    assert!(
        wait_gone(fake as u32, Duration::from_secs(20)),
        "the backend still runs"
    );
    let msgs = messages_when(&env, 2);
    assert_eq!(
        (&msgs[0]["content"], &msgs[1]["content"]),
        (&"tell me everything".into(), &"partial answer".into())
    );
    assert_eq!(msgs[1]["interrupted"], true);
    assert_eq!(health(s.port), 200);
}

#[test]
fn a_streaming_client_that_goes_away_stops_its_call() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let s = serve(&env, &["--token", TOKEN], &[]);
    let mut client = start_call(
        s.port,
        r#"{"alias":"gemini","prompt":"stream it","stream":true}"#,
    );
    let fake = env.wait_started("gemini");
    // The event stream has begun.
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains("text/event-stream") {
        let n = client.read(&mut buf).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    drop(client);
    assert!(
        wait_gone(fake as u32, Duration::from_secs(20)),
        "the backend still runs"
    );
    let msgs = messages_when(&env, 2);
    assert_eq!(msgs[1]["content"], "partial answer");
    assert_eq!(msgs[1]["interrupted"], true);
    assert_eq!(health(s.port), 200);
}

#[test]
fn stopping_the_server_stops_its_calls_which_save_what_they_have() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let mut s = serve(&env, &["--token", TOKEN], &[]);
    let mut client = start_call(s.port, r#"{"alias":"gemini","prompt":"before the end"}"#);
    let fake = env.wait_started("gemini");
    crate::support::signal(s.child.pid(), libc::SIGTERM);
    let status = s.child.wait_status_within(Duration::from_secs(20));
    assert_eq!(status.code(), Some(143), "{}", s.log());
    assert!(wait_gone(fake as u32, Duration::from_secs(20)));
    let msgs = messages_when(&env, 2);
    assert_eq!(msgs[1]["content"], "partial answer");
    assert_eq!(msgs[1]["interrupted"], true);
    // The client was told.
    let mut raw = Vec::new();
    let _ = client.read_to_end(&mut raw);
    let a = parse_answer(&raw);
    assert_eq!(a.status, 503, "{a:?}");
}

#[test]
fn no_child_or_backend_is_given_the_server_token() {
    // S3: the token from the environment stays with the server.
    let env = Env::echo();
    env.fake(
        "gemini",
        r#"/bin/cat > /dev/null
echo "token=${AI_CLI_SERVER_TOKEN:-none}""#,
    );
    let s = serve(&env, &[], &[("AI_CLI_SERVER_TOKEN", TOKEN)]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"gemini","prompt":"env?","no_chat":true}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["reply"], "token=none\n", "{body}");
}

/// An OpenAI stream of `n` pieces of 100 bytes.
fn many_pieces(n: usize) -> crate::support::Reply {
    let piece = "y".repeat(99) + "\n";
    let mut body = String::new();
    for _ in 0..n {
        body.push_str(&crate::support::oa_text(&piece));
    }
    body.push_str(&crate::support::oa_end(3, 3));
    crate::support::Reply::sse(&[&body])
}

#[test]
fn a_saved_reply_larger_than_the_bound_is_not_reported_as_stopped() {
    // S5: the done line repeats the whole reply; it is not refused once the reply is saved.
    let server = crate::support::Server::respond(|_| many_pieces(50));
    let env = Env::for_provider("openai", &server);
    let s = serve(&env, &["--token", TOKEN, "--max-output", "2048"], &[]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"openai:gpt-test","prompt":"big","stream":true}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains("event: error"), "{body}");
    let done = body
        .split("\n\n")
        .find_map(|e| e.strip_prefix("event: done\ndata: "))
        .unwrap_or_else(|| panic!("{body}"));
    assert_eq!(json(done)["reply"].as_str().unwrap().len(), 5000);
    // Not streamed, the same.
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"openai:gpt-test","prompt":"big"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["reply"].as_str().unwrap().len(), 5000);
    for id in env.chat_ids() {
        let text = std::fs::read_to_string(env.chat_path(&id)).unwrap();
        assert!(!text.contains("\"interrupted\":true"), "{text}");
    }
}

#[test]
fn a_failed_call_names_the_chat_it_created() {
    // S6: the chat holding the pending prompt is named, so a client continues it.
    let env = Env::echo();
    env.fake(
        "gemini",
        "/bin/cat > /dev/null\necho 'quota exceeded, try again later' >&2\nexit 1",
    );
    let s = serve(&env, &["--token", TOKEN], &[]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"gemini","prompt":"first try"}"#,
    );
    assert_eq!(status, 502, "{body}");
    let ids = env.chat_ids();
    assert_eq!(ids.len(), 1);
    assert_eq!(json(&body)["error"]["chat"], ids[0], "{body}");
    // Streamed: the error event names it too.
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"gemini","prompt":"second try","stream":true}"#,
    );
    assert_eq!(status, 200, "{body}");
    let data = body
        .split("\n\n")
        .find_map(|e| e.strip_prefix("event: error\ndata: "))
        .unwrap_or_else(|| panic!("{body}"));
    let ids2 = env.chat_ids();
    let new: Vec<_> = ids2.iter().filter(|i| !ids.contains(i)).collect();
    assert_eq!(new.len(), 1, "{ids2:?}");
    assert_eq!(json(data)["chat"], *new[0], "{data}");
    // Continuing a chat: its error names it as well.
    let call = format!(
        r#"{{"alias":"gemini","prompt":"third","chat":"{}"}}"#,
        ids[0]
    );
    let (_, body) = http(s.port, "POST", "/call", Some(TOKEN), call.as_bytes());
    assert_eq!(json(&body)["error"]["chat"], ids[0], "{body}");
    // And the CLI's --json-stream error line.
    let out = env
        .command(&["--json-stream", "-q", "gemini", "fourth"])
        .run();
    let line = out.stdout.lines().last().unwrap_or_default().to_owned();
    let v = json(&line);
    assert_eq!(v["type"], "error", "{line}");
    let ids3 = env.chat_ids();
    let newest: Vec<_> = ids3.iter().filter(|i| !ids2.contains(i)).collect();
    assert_eq!(v["chat"], *newest[0], "{line}");
}

#[test]
fn a_call_on_a_busy_chat_gets_429_at_once() {
    // H2-14: it waited for the chat (holding one of the --max-calls places) instead.
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let s = serve(&env, &["--token", TOKEN, "--max-calls", "2"], &[]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"echo","prompt":"first"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let id = json(&body)["chat"].as_str().unwrap().to_owned();
    let call = |prompt: &str| format!(r#"{{"alias":"gemini","prompt":"{prompt}","chat":"{id}"}}"#);
    let mut first = start_call(s.port, &call("slow one"));
    env.wait_started("gemini");
    let a = request(
        s.port,
        "POST",
        "/call",
        &[
            "Content-Type: application/json",
            &format!("Authorization: Bearer {TOKEN}"),
        ],
        call("the same chat").as_bytes(),
    );
    assert_eq!(a.status, 429, "{a:?}");
    assert_eq!(a.header("Retry-After").as_deref(), Some("2"));
    // A chat value that looks like an option is no chat ID (it was taken for `-q`'s value).
    let a = request(
        s.port,
        "POST",
        "/call",
        &[
            "Content-Type: application/json",
            &format!("Authorization: Bearer {TOKEN}"),
        ],
        br#"{"alias":"echo","prompt":"x","chat":"-q"}"#,
    );
    assert_eq!(a.status, 400, "{a:?}");
    assert!(a.body.contains("'-q' is not a valid chat ID"), "{a:?}");
    env.release();
    let mut raw = Vec::new();
    first.read_to_end(&mut raw).unwrap();
    assert_eq!(parse_answer(&raw).status, 200);
    // The busy call left no trace in the chat: first turn, then the slow one.
    let prompts: Vec<String> = env
        .messages(&id)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(prompts, ["first", "slow one"]);
}

#[test]
fn a_tool_that_needs_a_yes_is_refused_under_serve_naming_what_allows_it() {
    use crate::support::{Reply, data, oa_stream};
    // The model calls the command tool `disk`, which config offers to every call.
    let call = serde_json::json!({"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "disk", "arguments": "{}"}});
    let mut first = data(
        &serde_json::json!({"id": "c1", "choices": [{"index": 0,
            "delta": {"tool_calls": [call]}, "finish_reason": null}]})
        .to_string(),
    );
    first.push_str(&data(
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ));
    first.push_str("data: [DONE]\n\n");
    let server = crate::support::Server::start(vec![
        Reply::sse(&[&first]),
        Reply::sse(&[&oa_stream("Not run.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &server);
    let ran = env.path("ran");
    let mut config = if env.config_path().exists() {
        env.config()
    } else {
        serde_json::json!({})
    };
    config["tools"] = serde_json::json!({"allow": ["disk"], "commands": {"disk": {
        "description": "Free space", "command": ["/usr/bin/touch", ran.to_str().unwrap()]}}});
    env.write_config(&config.to_string());
    let s = serve(&env, &["--token", TOKEN], &[]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"openai:gpt-test","prompt":"free space?"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["reply"], "Not run.");
    assert!(!ran.exists(), "the tool ran without a yes");
    let round = env
        .only_chat()
        .into_iter()
        .find(|r| r["type"] == "round")
        .expect("a round");
    assert_eq!(
        round["results"][0]["content"],
        "not confirmed: ai asks before it runs the command tool disk, and ai serve has nobody to ask; it was not run (the user can allow it with --yolo)"
    );
}
