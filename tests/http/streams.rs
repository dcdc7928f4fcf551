//! Replies stream to stdout as they arrive; usage is stored on the assistant message and shown
//! by `--json`; the odd shapes real streams take (CRLF, comments, events split across writes,
//! `ping`, empty `choices`) all work.

use serde_json::json;

use crate::support::*;

#[test]
fn openai_stream_in_pieces_with_usage_saved() {
    let s = Server::start(vec![Reply::sse(&[
        &oa_text("Hel"),
        &oa_text("lo, "),
        &oa_text("world"),
        &oa_end(12, 3),
    ])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Hello, world\n");
    let m = env.only_messages();
    assert_eq!(m.len(), 2);
    assert_eq!(m[0]["role"], "user");
    assert_eq!(m[0]["content"], "hi");
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["content"], "Hello, world");
    assert_eq!(m[1]["usage"], json!({"input": 12, "output": 3}));
    assert_eq!(m[1]["provider"], "openai");
    assert_eq!(m[1]["model"], "gpt-test");
    assert!(m[1].get("interrupted").is_none(), "{}", m[1]);
}

#[test]
fn the_reply_reaches_stdout_before_the_stream_ends() {
    // The server holds the end of the stream back until the first piece has been printed;
    // a client that buffered the whole reply would time out here instead.
    use std::io::Read;
    use std::process::Stdio;
    let s = Server::start(vec![
        Reply::sse(&[&oa_text("early ")])
            .pause(1500)
            .body(&oa_text("late"))
            .body(&oa_end(1, 2)),
    ]);
    let env = Env::for_provider("openai", &s);
    let mut child = env
        .command(&["openai:gpt-test", "hi"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ai");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 6];
    stdout.read_exact(&mut first).expect("first bytes");
    assert_eq!(&first, b"early ");
    // The rest has not been sent yet: the server is still pausing.
    assert!(child.try_wait().expect("try_wait").is_none());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("rest");
    assert_eq!(rest, "late\n");
    assert!(child.wait_status().success());
}

#[test]
fn json_output_shows_usage_and_chat() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("{\"x\":1}", 21, 5)])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--json", "openai:gpt-test", "hi"]);
    out.ok();
    let v = out.json();
    assert_eq!(v["reply"], "{\"x\":1}");
    assert_eq!(v["model"], "gpt-test");
    assert_eq!(v["provider"], "openai");
    assert_eq!(v["alias"], "openai:gpt-test");
    assert_eq!(v["usage"], json!({"input": 21, "output": 5}));
    assert!(v["elapsed_ms"].is_u64(), "{v}");
    let id = v["chat"].as_str().expect("chat id");
    assert!(env.home.join("chats").join(format!("{id}.jsonl")).exists());
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 21, "output": 5})
    );
}

#[test]
fn anthropic_usage_adds_cache_and_takes_final_output() {
    let start = event(
        "message_start",
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"cache_creation_input_tokens":2,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
    );
    let delta = |n: u64| {
        event(
            "message_delta",
            &format!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":null}},"usage":{{"output_tokens":{n}}}}}"#
            ),
        )
    };
    let s = Server::start(vec![Reply::sse(&[
        &start,
        &event("ping", r#"{"type": "ping"}"#),
        &an_text("A"),
        &event("ping", r#"{"type": "ping"}"#),
        &an_text("B"),
        &event("some_future_event", r#"{"type":"some_future_event"}"#),
        &delta(3),
        &delta(9),
        &event("message_stop", r#"{"type":"message_stop"}"#),
    ])]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["--json", "anthropic:claude-test", "hi"]);
    out.ok();
    let v = out.json();
    assert_eq!(v["reply"], "AB");
    assert_eq!(v["usage"], json!({"input": 17, "output": 9}));
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 17, "output": 9})
    );
}

#[test]
fn gemini_usage_keeps_the_last_report() {
    let mid = data(
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]},"index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1}}"#,
    );
    let s = Server::start(vec![Reply::sse(&[&mid, &gm_chunk("b", Some((4, 6)))])]);
    let env = Env::for_provider("gemini-api", &s);
    let out = env.run(&["gemini-api:gm-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "ab\n");
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 4, "output": 6})
    );
}

#[test]
fn ollama_usage_from_the_final_line() {
    let s = Server::start(vec![Reply::ndjson(&[
        &ol_text("x"),
        &ol_text("y"),
        &ol_done(30, 2),
    ])]);
    let env = Env::for_provider("ollama-api", &s);
    let out = env.run(&["--json", "ollama-api:llama-test", "hi"]);
    out.ok();
    assert_eq!(out.json()["usage"], json!({"input": 30, "output": 2}));
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 30, "output": 2})
    );
}

#[test]
fn crlf_line_endings() {
    let crlf = |s: String| s.replace('\n', "\r\n");
    let s = Server::start(vec![
        Reply::sse(&[&crlf(oa_stream("openai crlf", 1, 1))]),
        Reply::sse(&[&crlf(format!(
            "{}{}{}",
            an_start(1),
            an_text("anthropic crlf"),
            an_end(1)
        ))]),
        Reply::sse(&[&crlf(gm_chunk("gemini crlf", Some((1, 1))))]),
        Reply::ndjson(&[&crlf(format!(
            "{}{}",
            ol_text("ollama crlf"),
            ol_done(1, 1)
        ))]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.set("ANTHROPIC_API_KEY", KEY)
        .set("ANTHROPIC_BASE_URL", &s.url())
        .set("GEMINI_API_KEY", KEY)
        .set("GEMINI_BASE_URL", &s.url())
        .set("OLLAMA_HOST", &s.url());
    for (model, want) in [
        ("openai:m", "openai crlf\n"),
        ("anthropic:m", "anthropic crlf\n"),
        ("gemini-api:m", "gemini crlf\n"),
        ("ollama-api:m", "ollama crlf\n"),
    ] {
        let out = env.run(&[model, "hi"]);
        out.ok();
        assert_eq!(out.stdout, want);
    }
    assert_eq!(s.requests().len(), 4);
}

#[test]
fn comment_lines_and_keep_alives_are_ignored() {
    let s = Server::start(vec![Reply::sse(&[
        ": OPENROUTER PROCESSING\n\n",
        &oa_text("after a comment"),
        ": OPENROUTER PROCESSING\n\n",
        "id: 7\nretry: 1000\n",
        &oa_end(2, 3),
    ])]);
    let env = Env::for_provider("openrouter", &s);
    let out = env.run(&["openrouter:vendor/m", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "after a comment\n");
}

#[test]
fn events_split_across_writes() {
    // The same stream cut into small pieces at awkward places: inside "data:", inside the
    // JSON, between "\r" and "\n", and inside a multi-byte character.
    let whole =
        format!("{}{}{}", oa_text("split "), oa_text("héllo"), oa_end(1, 2)).replace('\n', "\r\n");
    let bytes = whole.as_bytes();
    let mut pieces: Vec<String> = Vec::new();
    let mut i = 0;
    let mut size = 1;
    while i < bytes.len() {
        let mut end = (i + size).min(bytes.len());
        while !whole.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(whole[i..end].to_owned());
        i = end;
        size = size % 7 + 1;
    }
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let s = Server::start(vec![Reply::sse(&refs)]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "split héllo\n");
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 1, "output": 2})
    );
}

#[test]
fn anthropic_events_split_mid_line() {
    let whole = format!("{}{}{}", an_start(3), an_text("in pieces"), an_end(2));
    let (a, b) = whole.split_at(whole.find("text_delta").expect("delta") + 4);
    let (b, c) = b.split_at(b.len() - 10);
    let s = Server::start(vec![Reply::sse(&[a, b, c])]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:claude-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "in pieces\n");
}

#[test]
fn openai_tolerates_null_and_missing_content() {
    let s = Server::start(vec![Reply::sse(&[
        &data(
            r#"{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
        ),
        &data(
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":null},"finish_reason":null}]}"#,
        ),
        &data(
            r#"{"id":"c","obfuscation":"xyz","choices":[{"index":0,"delta":{"content":"fine"}}]}"#,
        ),
        &data(r#"{"id":"c","choices":[{"index":0}]}"#),
        &oa_end(1, 1),
    ])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "fine\n");
}

#[test]
fn one_shot_without_chat_saves_nothing() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("not kept", 1, 1)])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", "--json", "openai:gpt-test", "hi"]);
    out.ok();
    let v = out.json();
    assert_eq!(v["reply"], "not kept");
    assert_eq!(v["chat"], serde_json::Value::Null);
    assert_eq!(v["usage"], json!({"input": 1, "output": 1}));
    assert!(env.chats().is_empty());
}

/// A reply stopped by the max-tokens limit is kept, with a warning that says how to get more.
#[test]
fn a_reply_cut_by_max_tokens_warns() {
    let s = Server::start(vec![
        Reply::sse(&[
            &oa_text("a long answer that"),
            &data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#),
            "data: [DONE]\n\n",
        ]),
        Reply::sse(&[&format!(
            "{}{}{}{}",
            an_start(2),
            an_text("cut"),
            event(
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#
            ),
            event("message_stop", r#"{"type":"message_stop"}"#)
        )]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:m", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "a long answer that\n");
    assert!(
        out.stderr
            .contains("stopped at the 4096 token limit of openai"),
        "{out:#?}"
    );
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:m", "hi"]);
    out.ok();
    assert!(out.stderr.contains("token limit of anthropic"), "{out:#?}");
}

#[test]
fn a_whole_reply_cut_at_max_tokens_is_warned_about_too() {
    // I3-7: a non-streamed reply dropped `finish_reason: "length"` (and its kin).
    for (provider, body) in [
        (
            "openai",
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"cut short"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":24}}"#,
        ),
        (
            "anthropic",
            r#"{"content":[{"type":"text","text":"cut short"}],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":24}}"#,
        ),
        (
            "gemini-api",
            r#"{"candidates":[{"content":{"parts":[{"text":"cut short"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":24}}"#,
        ),
        (
            "ollama-api",
            r#"{"message":{"role":"assistant","content":"cut short"},"done":true,"done_reason":"length","prompt_eval_count":3,"eval_count":24}"#,
        ),
    ] {
        let s = Server::start(vec![Reply::json(200, body)]);
        let env = Env::for_provider(provider, &s);
        env.write_config(&format!(
            r#"{{"providers":{{"{provider}":{{"stream":false,"max_tokens":24}}}}}}"#
        ));
        let out = env.run(&[&format!("{provider}:m"), "hi"]);
        out.ok();
        assert_eq!(out.stdout, "cut short\n", "{provider}");
        assert!(
            out.stderr
                .contains(&format!("stopped at the 24 token limit of {provider}")),
            "{provider}: {out:#?}"
        );
    }
}
