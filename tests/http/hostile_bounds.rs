//! Every input is read with a limit (issue 10): one stream line, one reply, a whole body. Past
//! the limit the call fails with an error that names it, instead of filling the memory.

use crate::support::*;

const OA: &str = "openai:gpt-4o-mini";
const MIB: usize = 1024 * 1024;

#[test]
fn a_stream_line_past_4_mib_is_refused() {
    let line = format!("data: {}", "x".repeat(5 * MIB));
    let s = Server::start(vec![Reply::sse(&[&line])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1, "not retried");
    assert!(out.error().contains("longer than 4 MiB"), "{}", out.stderr);
}

#[test]
fn an_ndjson_line_past_4_mib_is_refused() {
    let line = format!("{{\"message\":{{\"content\":\"{}\"}}", "x".repeat(5 * MIB));
    let s = Server::start(vec![Reply::ndjson(&[&line])]);
    let env = Env::for_provider("ollama-api", &s);
    let out = env.run(&["--no-chat", "ollama-api:m", "hi"]);
    assert_eq!(out.code, Some(1));
    assert!(out.error().contains("longer than 4 MiB"), "{}", out.stderr);
}

/// 9 MiB of text in 64 KiB events: each event is fine, the whole is not.
#[test]
fn a_streamed_reply_past_8_mib_is_cut_and_kept() {
    let piece = oa_text(&"y".repeat(64 * 1024));
    let mut reply = Reply::new(200)
        .header("Content-Type", "text/event-stream")
        .framing(Framing::Chunked);
    for _ in 0..(9 * 16) {
        reply = reply.body(&piece);
    }
    let s = Server::start(vec![reply.body(&oa_end(1, 1))]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&[OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert!(out.error().contains("longer than 8 MiB"), "{}", out.stderr);
    let kept = env.only_messages()[1]["content"]
        .as_str()
        .unwrap_or("")
        .len();
    assert!(kept > 7 * MIB && kept <= 8 * MIB, "kept {kept} bytes");
}

#[test]
fn a_whole_body_past_8_mib_is_refused() {
    let body = format!(
        r#"{{"choices":[{{"message":{{"content":"{}"}}}}]}}"#,
        "z".repeat(9 * MIB)
    );
    let s = Server::start(vec![Reply::json(200, &body)]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"stream":false}}}"#);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1, "not retried");
    assert!(out.error().contains("longer than 8 MiB"), "{}", out.stderr);
}
