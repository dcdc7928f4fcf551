//! The exact request each provider gets: URL, query, headers, body shape (system prompt,
//! roles, max-tokens field, stream flags), streaming and not.

use serde_json::{Value, json};

use crate::support::*;

fn assert_json_post(r: &Recorded) {
    assert_eq!(r.method, "POST");
    assert_eq!(r.header("content-type"), Some("application/json"), "{r:#?}");
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort();
    k
}

#[test]
fn openai_streaming_request() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("Hello there", 12, 3)])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "--system", "be brief", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Hello there\n");

    let r = s.only();
    assert_json_post(&r);
    assert_eq!(r.target, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("x-api-key"), None);
    let b = r.json();
    assert_eq!(b["model"], "gpt-test");
    assert_eq!(
        b["messages"],
        json!([{"role":"system","content":"be brief"},{"role":"user","content":"hi"}])
    );
    assert_eq!(b["max_completion_tokens"], 4096);
    assert!(b.get("max_tokens").is_none(), "{b}");
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    assert!(b.get("response_format").is_none(), "{b}");
}

#[test]
fn openai_not_streamed() {
    let s = Server::start(vec![Reply::json(
        200,
        r#"{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Whole answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}"#,
    )]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"stream":false}}}"#);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Whole answer\n");
    let b = s.only().json();
    assert_ne!(b.get("stream"), Some(&json!(true)), "{b}");
    assert!(b.get("stream_options").is_none(), "{b}");
    assert_eq!(keys(&b), ["max_completion_tokens", "messages", "model"]);
    let m = env.only_messages();
    assert_eq!(m[1]["content"], "Whole answer");
    assert_eq!(m[1]["usage"], json!({"input": 7, "output": 2}));
}

#[test]
fn openrouter_request_has_attribution_and_max_tokens() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let env = Env::for_provider("openrouter", &s);
    env.run(&["openrouter:vendor/some-model:free", "hi"]).ok();
    let r = s.only();
    assert_json_post(&r);
    assert_eq!(r.target, "/api/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(
        r.header("http-referer")
            .is_some_and(|v| v.starts_with("http")),
        "{r:#?}"
    );
    assert_eq!(r.header("x-title"), Some("ai"));
    let b = r.json();
    assert_eq!(b["model"], "vendor/some-model:free");
    assert_eq!(b["max_tokens"], 4096);
    assert!(b.get("max_completion_tokens").is_none(), "{b}");
    assert_eq!(b["stream"], true);
}

#[test]
fn glm_request() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("你好", 1, 1)])]);
    let env = Env::for_provider("glm", &s);
    let out = env.run(&["glm:glm-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "你好\n");
    let r = s.only();
    assert_eq!(r.target, "/api/paas/v4/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let b = r.json();
    assert_eq!(b["max_tokens"], 4096);
    assert!(b.get("max_completion_tokens").is_none(), "{b}");
}

#[test]
fn anthropic_streaming_request() {
    let body = format!("{}{}{}", an_start(10), an_text("Hi!"), an_end(4));
    let s = Server::start(vec![Reply::sse(&[&body])]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:claude-test", "--system", "be brief", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Hi!\n");

    let r = s.only();
    assert_json_post(&r);
    assert_eq!(r.target, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    let b = r.json();
    assert_eq!(b["model"], "claude-test");
    assert_eq!(b["system"], "be brief");
    assert_eq!(b["messages"], json!([{"role":"user","content":"hi"}]));
    assert_eq!(b["max_tokens"], 4096);
    assert_eq!(b["stream"], true);
}

#[test]
fn anthropic_not_streamed_and_continued() {
    let whole = |text: &str| {
        json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-test",
               "content":[{"type":"text","text":text}],"stop_reason":"end_turn",
               "usage":{"input_tokens":5,"output_tokens":2}})
        .to_string()
    };
    let s = Server::start(vec![
        Reply::json(200, &whole("first")),
        Reply::json(200, &whole("second")),
    ]);
    let env = Env::for_provider("anthropic", &s);
    env.write_config(r#"{"providers":{"anthropic":{"stream":false}}}"#);
    let out = env.run(&["anthropic:claude-test", "one"]);
    out.ok();
    assert_eq!(out.stdout, "first\n");
    let id = out.chat_id();
    let out = env.run(&["chat", &id, "two"]);
    out.ok();
    assert_eq!(out.stdout, "second\n");

    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    let b = reqs[1].json();
    assert!(b.get("stream").is_none(), "{b}");
    assert!(b.get("system").is_none(), "{b}");
    assert_eq!(
        b["messages"],
        json!([{"role":"user","content":"one"},{"role":"assistant","content":"first"},{"role":"user","content":"two"}])
    );
}

#[test]
fn gemini_streaming_request_and_model_role() {
    let s = Server::start(vec![
        Reply::sse(&[&gm_chunk("Hel", None), &gm_chunk("lo", Some((3, 2)))]),
        Reply::sse(&[&gm_chunk("again", Some((9, 1)))]),
    ]);
    let env = Env::for_provider("gemini-api", &s);
    let out = env.run(&["gemini-api:gm-test", "--system", "be brief", "one"]);
    out.ok();
    assert_eq!(out.stdout, "Hello\n");
    let id = out.chat_id();
    let out = env.run(&["chat", &id, "two"]);
    out.ok();
    assert_eq!(out.stdout, "again\n");

    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    let r = &reqs[0];
    assert_json_post(r);
    assert_eq!(
        r.target,
        "/v1beta/models/gm-test:streamGenerateContent?alt=sse"
    );
    assert_eq!(r.header("x-goog-api-key"), Some(KEY));
    assert_eq!(r.header("authorization"), None);
    let b = r.json();
    assert_eq!(
        b["systemInstruction"],
        json!({"parts":[{"text":"be brief"}]})
    );
    assert_eq!(
        b["contents"],
        json!([{"role":"user","parts":[{"text":"one"}]}])
    );
    assert_eq!(b["generationConfig"]["maxOutputTokens"], 4096);
    assert!(
        b.get("model").is_none() && b.get("messages").is_none(),
        "{b}"
    );

    // The second turn: the reply goes back with role "model", the system prompt again.
    let b = reqs[1].json();
    assert_eq!(
        b["contents"],
        json!([
            {"role":"user","parts":[{"text":"one"}]},
            {"role":"model","parts":[{"text":"Hello"}]},
            {"role":"user","parts":[{"text":"two"}]}
        ])
    );
    assert_eq!(
        b["systemInstruction"],
        json!({"parts":[{"text":"be brief"}]})
    );
}

#[test]
fn gemini_not_streamed() {
    let s = Server::start(vec![Reply::json(
        200,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"thinking","thought":true},{"text":"Whole"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":1,"totalTokenCount":5}}"#,
    )]);
    let env = Env::for_provider("gemini-api", &s);
    env.write_config(r#"{"providers":{"gemini-api":{"stream":false}}}"#);
    let out = env.run(&["gemini-api:gm-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Whole\n");
    let r = s.only();
    assert_eq!(r.target, "/v1beta/models/gm-test:generateContent");
    assert_eq!(r.header("x-goog-api-key"), Some(KEY));
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 4, "output": 1})
    );
}

#[test]
fn gemini_google_api_key_is_accepted() {
    let s = Server::start(vec![Reply::sse(&[&gm_chunk("ok", Some((1, 1)))])]);
    let mut env = Env::empty();
    env.set("GOOGLE_API_KEY", KEY)
        .set("GEMINI_BASE_URL", &format!("{}/v1beta", s.url()));
    env.run(&["gemini-api:gm-test", "hi"]).ok();
    assert_eq!(s.only().header("x-goog-api-key"), Some(KEY));
}

#[test]
fn ollama_streaming_request() {
    let body = format!("{}{}{}", ol_text("Hi"), ol_text(" there"), ol_done(8, 2));
    let s = Server::start(vec![Reply::ndjson(&[&body])]);
    let env = Env::for_provider("ollama-api", &s);
    let out = env.run(&["ollama-api:llama-test", "--system", "be brief", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Hi there\n");
    let r = s.only();
    assert_json_post(&r);
    assert_eq!(r.target, "/api/chat");
    assert_eq!(r.header("authorization"), None);
    let b = r.json();
    assert_eq!(b["model"], "llama-test");
    assert_eq!(
        b["messages"],
        json!([{"role":"system","content":"be brief"},{"role":"user","content":"hi"}])
    );
    assert_eq!(b["stream"], true);
    assert_eq!(b["options"]["num_predict"], 4096);
}

#[test]
fn ollama_not_streamed() {
    let s = Server::start(vec![Reply::json(
        200,
        r#"{"model":"m","message":{"role":"assistant","content":"Whole"},"done":true,"prompt_eval_count":6,"eval_count":1}"#,
    )]);
    let env = Env::for_provider("ollama-api", &s);
    env.write_config(r#"{"providers":{"ollama-api":{"stream":false}}}"#);
    let out = env.run(&["ollama-api:llama-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Whole\n");
    assert_eq!(s.only().json()["stream"], false);
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 6, "output": 1})
    );
}

#[test]
fn azure_request_and_empty_first_chunk() {
    // Azure's first chunk carries prompt_filter_results and no choices.
    let first = data(
        r#"{"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}"#,
    );
    let tail = data(
        r#"{"id":"c1","choices":[{"index":0,"finish_reason":"stop","content_filter_results":{}}],"usage":null}"#,
    );
    let s = Server::start(vec![Reply::sse(&[
        &first,
        &oa_text("Azure says hi"),
        &tail,
        "data: [DONE]\n\n",
    ])]);
    let env = Env::for_provider("azure", &s);
    let out = env.run(&["azure:my-dep", "--system", "be brief", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Azure says hi\n");
    let r = s.only();
    assert_json_post(&r);
    assert_eq!(
        r.target,
        "/openai/deployments/my-dep/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(r.header("api-key"), Some(KEY));
    assert_eq!(r.header("authorization"), None);
    let b = r.json();
    assert_eq!(
        b["messages"][0],
        json!({"role":"system","content":"be brief"})
    );
    assert_eq!(b["max_tokens"], 4096);
    assert_eq!(b["stream"], true);
}

#[test]
fn azure_api_version_from_config() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let env = Env::for_provider("azure", &s);
    env.write_config(r#"{"providers":{"azure":{"api_version":"2025-01-01-preview"}}}"#);
    env.run(&["azure:my-dep", "hi"]).ok();
    assert_eq!(
        s.only().target,
        "/openai/deployments/my-dep/chat/completions?api-version=2025-01-01-preview"
    );
}

#[test]
fn openai_continued_chat_sends_history() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("first", 1, 1)]),
        Reply::sse(&[&oa_stream("second", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "--system", "be brief", "one"]);
    out.ok();
    env.run(&["chat", &out.chat_id(), "two"]).ok();
    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[1].json()["messages"],
        json!([
            {"role":"system","content":"be brief"},
            {"role":"user","content":"one"},
            {"role":"assistant","content":"first"},
            {"role":"user","content":"two"}
        ])
    );
}

#[test]
fn json_mode_asks_each_provider_for_json() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("{\"a\":1}", 1, 1)]),
        Reply::sse(&[&gm_chunk("{\"a\":1}", Some((1, 1)))]),
        Reply::ndjson(&[&format!("{}{}", ol_text("{\"a\":1}"), ol_done(1, 1))]),
        Reply::sse(&[&format!(
            "{}{}{}",
            an_start(1),
            an_text("{\"a\":1}"),
            an_end(1)
        )]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.set("GEMINI_API_KEY", KEY)
        .set("GEMINI_BASE_URL", &format!("{}/v1beta", s.url()))
        .set("OLLAMA_HOST", &s.url())
        .set("ANTHROPIC_API_KEY", KEY)
        .set("ANTHROPIC_BASE_URL", &s.url());
    // The `json` mode word (not the `--json` output flag).
    for model in [
        "openai:gpt-test",
        "gemini-api:gm-test",
        "ollama-api:llama-test",
        "anthropic:claude-test",
    ] {
        let out = env.run(&[model, "json", "give json"]);
        out.ok();
        assert_eq!(out.json()["reply"], "{\"a\":1}");
    }
    let reqs = s.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(
        reqs[0].json()["response_format"],
        json!({"type": "json_object"})
    );
    assert_eq!(
        reqs[1].json()["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert_eq!(reqs[2].json()["format"], "json");
    // Anthropic has no JSON switch: the system prompt asks for it.
    let system = reqs[3].json()["system"].as_str().unwrap_or("").to_owned();
    assert!(system.contains("JSON"), "{system}");
}
