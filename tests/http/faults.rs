//! Every kind of failure: what is retried and what is not, the exit code and message of each,
//! and what a cut reply leaves in the chat.

use serde_json::Value;

use crate::support::*;

fn error_json(message: &str, kind: &str, code: &str) -> String {
    serde_json::json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        .to_string()
}

/// The chat's last record is a pending prompt (a turn that failed before any text).
fn assert_pending(env: &Env, prompt: &str) -> Value {
    let chat = env.only_chat();
    let last = chat.last().expect("records").clone();
    assert_eq!(last["type"], "pending", "{chat:#?}");
    assert_eq!(last["content"], prompt);
    assert!(
        !chat
            .iter()
            .any(|r| r["type"] == "message" && r["role"] == "assistant"),
        "{chat:#?}"
    );
    last
}

/// The chat holds the prompt and the partial reply, marked interrupted.
fn assert_interrupted(env: &Env, prompt: &str, partial: &str) {
    let m = env.only_messages();
    assert_eq!(m.len(), 2, "{m:#?}");
    assert_eq!(m[0]["role"], "user");
    assert_eq!(m[0]["content"], prompt);
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["content"], partial);
    assert_eq!(m[1]["interrupted"], true, "{m:#?}");
}

#[test]
fn rate_limited_then_success() {
    let s = Server::start(vec![
        Reply::json(
            429,
            &error_json("Rate limit reached", "requests", "rate_limit_exceeded"),
        )
        .header("Retry-After", "1"),
        Reply::sse(&[&oa_stream("made it", 3, 2)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "made it\n");
    assert!(out.stderr.contains("429"), "{out:#?}");
    assert_eq!(s.requests().len(), 2);
    let m = env.only_messages();
    assert_eq!(m.len(), 2);
    assert_eq!(m[1]["content"], "made it");
}

#[test]
fn retry_after_ms_is_honoured() {
    let s = Server::start(vec![
        Reply::json(
            429,
            &error_json("slow down", "requests", "rate_limit_exceeded"),
        )
        .header("retry-after-ms", "10")
        .header("Retry-After", "30"),
        Reply::sse(&[&oa_stream("quick", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let started = std::time::Instant::now();
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "quick\n");
    assert_eq!(s.requests().len(), 2);
    // retry-after-ms wins over Retry-After: 30 (a generous bound, far from both).
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
}

#[test]
fn server_error_then_success() {
    let s = Server::start(vec![
        Reply::json(
            500,
            &error_json("The server had an error", "server_error", "server_error"),
        )
        .header("retry-after-ms", "10"),
        Reply::sse(&[&oa_stream("recovered", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "recovered\n");
    assert_eq!(s.requests().len(), 2);
    // The same request both times.
    let r = s.requests();
    assert_eq!(r[0].body, r[1].body);
}

#[test]
fn anthropic_overloaded_529_then_success() {
    let s = Server::start(vec![
        Reply::json(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#,
        )
        .header("retry-after-ms", "10"),
        Reply::sse(&[&format!("{}{}{}", an_start(2), an_text("back"), an_end(1))]),
    ]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:claude-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "back\n");
    assert_eq!(s.requests().len(), 2);
}

#[test]
fn anthropic_overloaded_in_stream_before_text_is_retried() {
    let s = Server::start(vec![
        Reply::sse(&[
            &an_start(2),
            &event(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
        ]),
        Reply::sse(&[&format!(
            "{}{}{}",
            an_start(2),
            an_text("second try"),
            an_end(1)
        )]),
    ]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:claude-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "second try\n");
    assert_eq!(s.requests().len(), 2);
}

#[test]
fn retries_exhausted() {
    let fail = || {
        Reply::json(500, &error_json("boom", "server_error", "server_error"))
            .header("retry-after-ms", "10")
    };
    let s = Server::start(vec![fail(), fail(), fail()]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "");
    // The default: 2 retries, so 3 requests.
    assert_eq!(s.requests().len(), 3);
    let e = out.error();
    assert!(e.contains("500") && e.contains("boom"), "{e}");
    assert_pending(&env, "hi");
}

#[test]
fn retries_setting_is_obeyed() {
    let fail = || Reply::json(503, "upstream down").header("retry-after-ms", "10");
    let s = Server::start(vec![fail(), fail()]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"retries":1}}}"#);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(s.requests().len(), 2);
    assert!(out.error().contains("503"), "{out:#?}");
}

#[test]
fn insufficient_quota_is_not_retried() {
    let s = Server::start(vec![
        Reply::json(
            429,
            &error_json(
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
                "insufficient_quota",
            ),
        )
        .header("Retry-After", "1"),
        Reply::sse(&[&oa_stream("must not be asked for", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert!(out.error().contains("quota"), "{out:#?}");
    assert!(!out.stderr.contains("retrying"), "{out:#?}");
}

#[test]
fn unauthorized_names_the_variable() {
    // The server echoes the key back, as some do; it must still not be shown.
    let s = Server::start(vec![Reply::json(
        401,
        &error_json(
            &format!(
                "Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com."
            ),
            "invalid_request_error",
            "invalid_api_key",
        ),
    )]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert!(out.error().contains("401"), "{out:#?}");
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("hint:") && l.contains("OPENAI_API_KEY")),
        "{out:#?}"
    );
    let pending = assert_pending(&env, "hi");
    assert!(!pending["error"].as_str().unwrap_or("").contains(KEY));
}

#[test]
fn gemini_bad_key_is_a_400() {
    let s = Server::start(vec![Reply::json(
        400,
        r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#,
    )]);
    let env = Env::for_provider("gemini-api", &s);
    let out = env.run(&["gemini-api:gm-test", "hi"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.stderr.contains("GEMINI_API_KEY"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn unknown_model_is_not_found() {
    let s = Server::start(vec![Reply::json(
        404,
        &error_json(
            "The model `gpt-nope` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        ),
    )]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-nope", "hi"]);
    assert_eq!(out.code, Some(4), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert!(out.error().contains("gpt-nope"), "{out:#?}");
}

#[test]
fn ollama_unknown_model() {
    let s = Server::start(vec![Reply::json(
        404,
        r#"{"error":"model \"nope\" not found, try pulling it first"}"#,
    )]);
    let env = Env::for_provider("ollama-api", &s);
    let out = env.run(&["ollama-api:nope", "hi"]);
    assert_eq!(out.code, Some(4), "{out:#?}");
    assert!(out.error().contains("nope"), "{out:#?}");
}

#[test]
fn context_too_long() {
    let s = Server::start(vec![Reply::json(
        400,
        &error_json(
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            "invalid_request_error",
            "context_length_exceeded",
        ),
    )]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert!(out.error().contains("conversation is too long"), "{out:#?}");
}

#[test]
fn connection_refused() {
    let mut env = Env::empty();
    env.set("OPENAI_API_KEY", KEY)
        .set("OPENAI_BASE_URL", &format!("{}/v1", closed_port_url()));
    env.write_config(r#"{"providers":{"openai":{"retries":0}}}"#);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    let e = out.error();
    assert!(e.contains("connection refused"), "{out:#?}");
    assert!(out.stderr.contains("is the server running"), "{out:#?}");
    assert!(out.stderr.contains("OPENAI_BASE_URL"), "{out:#?}");
    assert_pending(&env, "hi");
}

#[test]
fn malformed_json_in_stream() {
    let s = Server::start(vec![
        Reply::sse(&["data: {\"choices\":[{\"delta\":{\"content\":\"x\"\n\n"]),
        Reply::sse(&[&oa_stream("must not be asked for", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "");
    assert!(out.error().contains("invalid response"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert_pending(&env, "hi");
}

#[test]
fn malformed_json_after_text() {
    let s = Server::start(vec![Reply::sse(&[&oa_text("half"), "data: {oops\n\n"])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "half\n");
    assert!(out.error().contains("invalid response"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert_interrupted(&env, "hi", "half");
}

#[test]
fn non_streamed_body_that_is_not_json() {
    let s = Server::start(vec![
        Reply::new(200)
            .header("Content-Type", "text/html")
            .body("<html>a captive portal</html>"),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"stream":false}}}"#);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("invalid response"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn non_streamed_error_body_in_a_200_reply_is_the_providers_error() {
    let s = Server::start(vec![Reply::json(
        200,
        r#"{"error":{"message":"context too long for this model","type":"invalid_request_error","param":null,"code":null}}"#,
    )]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"stream":false}}}"#);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(
        out.error()
            .contains("openai reported an error: context too long"),
        "{out:#?}"
    );
    assert!(!out.stderr.contains("invalid response"), "{out:#?}");
    assert_eq!(s.requests().len(), 1, "a request error is not retried");
    assert_pending(&env, "hi");
}

#[test]
fn connection_dropped_mid_stream() {
    // Chunked encoding cut short: the client sees a broken body, not a clean end.
    let s = Server::start(vec![
        Reply::sse(&[&oa_text("The answer is"), &oa_text(" forty")]).cut(),
        Reply::sse(&[&oa_stream("must not be asked for", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "what is it"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "The answer is forty\n");
    assert_eq!(s.requests().len(), 1, "a cut reply is never retried");
    out.error();
    assert!(out.stderr.contains("marked interrupted"), "{out:#?}");
    assert_interrupted(&env, "what is it", "The answer is forty");
}

#[test]
fn connection_dropped_mid_stream_anthropic() {
    let s = Server::start(vec![
        Reply::sse(&[&an_start(4), &an_text("partial")]).cut(),
        Reply::sse(&[&format!("{}{}{}", an_start(2), an_text("no"), an_end(1))]),
    ]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:claude-test", "go"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "partial\n");
    assert_eq!(s.requests().len(), 1);
    assert_interrupted(&env, "go", "partial");
}

#[test]
fn non_streamed_body_cut_short_is_retried() {
    // A Content-Length promising more than arrives: nothing was printed, so it may be retried.
    let s = Server::start(vec![
        Reply::new(200)
            .header("Content-Type", "application/json")
            .body(r#"{"choices":[{"message":{"content":"tru"#)
            .cut()
            .body(r#"ncated"}}]}"#),
        Reply::json(
            200,
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}"#,
        ),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"stream":false}}}"#);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "whole\n");
    assert_eq!(s.requests().len(), 2);
}

#[test]
fn openai_error_event_mid_stream() {
    let s = Server::start(vec![Reply::sse(&[
        &oa_text("so far"),
        &data(r#"{"error":{"message":"upstream provider failed","code":502}}"#),
        &oa_end(1, 1),
    ])]);
    let env = Env::for_provider("openrouter", &s);
    let out = env.run(&["openrouter:vendor/m", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "so far\n");
    assert!(out.error().contains("upstream provider failed"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert_interrupted(&env, "hi", "so far");
}

#[test]
fn openrouter_finish_reason_error() {
    let s = Server::start(vec![Reply::sse(&[
        &oa_text("partial"),
        &data(
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
        ),
        "data: [DONE]\n\n",
    ])]);
    let env = Env::for_provider("openrouter", &s);
    let out = env.run(&["openrouter:vendor/m", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "partial\n");
    assert_interrupted(&env, "hi", "partial");
}

#[test]
fn anthropic_error_event() {
    let s = Server::start(vec![
        Reply::sse(&[
            &an_start(2),
            &event(
                "error",
                r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
            ),
        ]),
        Reply::sse(&[&format!("{}{}{}", an_start(2), an_text("no"), an_end(1))]),
    ]);
    let env = Env::for_provider("anthropic", &s);
    // An error event before any text is retried (PROTOCOLS.md §3): the second attempt answers.
    let out = env.run(&["anthropic:claude-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "no\n");
    assert_eq!(s.requests().len(), 2);
}

#[test]
fn anthropic_error_event_about_the_request_is_not_retried() {
    let s = Server::start(vec![
        Reply::sse(&[
            &an_start(2),
            &event(
                "error",
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages: bad order"}}"#,
            ),
        ]),
        Reply::sse(&[&format!("{}{}{}", an_start(2), an_text("no"), an_end(1))]),
    ]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:claude-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "");
    assert!(
        out.error()
            .contains("reported an error: messages: bad order"),
        "{out:#?}"
    );
    assert_eq!(s.requests().len(), 1);
    assert_pending(&env, "hi");
}

#[test]
fn anthropic_error_event_after_text() {
    let s = Server::start(vec![Reply::sse(&[
        &an_start(2),
        &an_text("begun"),
        &event(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
    ])]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["anthropic:claude-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "begun\n");
    assert!(out.error().contains("overloaded"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert_interrupted(&env, "hi", "begun");
}

#[test]
fn ollama_error_line() {
    let s = Server::start(vec![Reply::ndjson(&[
        &ol_text("some"),
        "{\"error\":\"llama runner process has terminated\"}\n",
    ])]);
    let env = Env::for_provider("ollama-api", &s);
    let out = env.run(&["ollama-api:llama-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "some\n");
    assert!(
        out.error().contains("llama runner process has terminated"),
        "{out:#?}"
    );
    assert_interrupted(&env, "hi", "some");
}

#[test]
fn gemini_error_in_stream() {
    let s = Server::start(vec![Reply::sse(&[
        &gm_chunk("par", None),
        &data(
            r#"{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}"#,
        ),
    ])]);
    let env = Env::for_provider("gemini-api", &s);
    let out = env.run(&["gemini-api:gm-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "par\n");
    assert!(out.error().contains("internal error"), "{out:#?}");
    assert_interrupted(&env, "hi", "par");
}

#[test]
fn stream_without_terminator_is_an_error() {
    // Each stream ends cleanly at the HTTP level, but before its protocol's terminator.
    let s = Server::start(vec![
        Reply::sse(&[&oa_text("openai part")]),
        Reply::sse(&[&an_start(1), &an_text("anthropic part")]),
        Reply::sse(&[&gm_chunk("gemini part", None)]),
        Reply::ndjson(&[&ol_text("ollama part")]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.set("ANTHROPIC_API_KEY", KEY)
        .set("ANTHROPIC_BASE_URL", &s.url())
        .set("GEMINI_API_KEY", KEY)
        .set("GEMINI_BASE_URL", &s.url())
        .set("OLLAMA_HOST", &s.url());
    for (model, text) in [
        ("openai:m", "openai part"),
        ("anthropic:m", "anthropic part"),
        ("gemini-api:m", "gemini part"),
        ("ollama-api:m", "ollama part"),
    ] {
        let out = env.run(&[model, "hi"]);
        assert_eq!(out.code, Some(1), "{model}: {out:#?}");
        assert_eq!(out.stdout, format!("{text}\n"));
        assert!(
            out.error().contains("ended before it was complete"),
            "{out:#?}"
        );
    }
    assert_eq!(s.requests().len(), 4, "none of them retried");
    for chat in env.chats() {
        let last = chat.last().expect("records");
        assert_eq!(last["role"], "assistant");
        assert_eq!(last["interrupted"], true, "{chat:#?}");
    }
}

#[test]
fn stream_ending_on_connection_close() {
    // No length, no chunking: the body ends when the server closes, after [DONE].
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("closed cleanly", 1, 1)]).framing(Framing::Close),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "closed cleanly\n");
}

#[test]
fn html_error_page() {
    let s = Server::start(vec![
        Reply::new(502)
            .header("Content-Type", "text/html")
            .header("x-should-retry", "false")
            .body("<html><body>502 Bad Gateway</body></html>"),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(s.requests().len(), 1, "x-should-retry: false is obeyed");
    assert!(out.error().contains("502"), "{out:#?}");
}

#[test]
fn timeout_flag_applies_to_http_providers() {
    // The server sends the headers, then nothing for far longer than --timeout.
    let s = Server::start(vec![
        Reply::sse(&[])
            .pause(6000)
            .body(&oa_stream("too late", 1, 1)),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"retries":0}}}"#);
    let out = env.run(&["--timeout", "1", "openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("no answer"), "{out:#?}");
}

/// `--timeout` wins over a provider's own timeout even when it equals the global one.
#[test]
fn timeout_flag_equal_to_the_global_one_still_wins() {
    let s = Server::start(vec![
        Reply::sse(&[])
            .pause(6000)
            .body(&oa_stream("too late", 1, 1)),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"timeout":1,"providers":{"openai":{"retries":0,"timeout":30}}}"#);
    let started = std::time::Instant::now();
    let out = env.run(&["--timeout", "1", "openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("within 1s"), "{out:#?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "waited for the server"
    );
}

#[test]
fn provider_timeout_from_config() {
    let s = Server::start(vec![
        Reply::sse(&[])
            .pause(6000)
            .body(&oa_stream("too late", 1, 1)),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"retries":0,"timeout":1}}}"#);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("no answer"), "{out:#?}");
}

#[test]
fn timeout_after_some_text_keeps_it() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_text("slow start")])
            .pause(6000)
            .body(&oa_end(1, 1)),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--timeout", "1", "openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(out.stdout, "slow start\n");
    assert!(out.error().contains("took longer than 1s"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert_interrupted(&env, "hi", "slow start");
}

#[test]
fn a_long_retry_after_is_not_waited_for() {
    let s = Server::start(vec![
        Reply::json(
            429,
            &error_json("Rate limit reached", "requests", "rate_limit_exceeded"),
        )
        .header("Retry-After", "3600"),
        Reply::sse(&[&oa_stream("must not be asked for", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert!(out.error().contains("rate limiting"), "{out:#?}");
    assert!(out.stderr.contains("max_requests_per_minute"), "{out:#?}");
}

#[test]
fn gemini_retry_delay_in_the_body() {
    let s = Server::start(vec![
        Reply::json(
            429,
            r#"{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.01s"}]}}"#,
        ),
        Reply::sse(&[&gm_chunk("after the delay", Some((1, 1)))]),
    ]);
    let env = Env::for_provider("gemini-api", &s);
    let out = env.run(&["gemini-api:gm-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "after the delay\n");
    assert_eq!(s.requests().len(), 2);
}

#[test]
fn gemini_blocked_prompt() {
    let s = Server::start(vec![Reply::sse(&[&data(
        r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}"#,
    )])]);
    let env = Env::for_provider("gemini-api", &s);
    let out = env.run(&["gemini-api:gm-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("blocked (SAFETY)"), "{out:#?}");
    assert!(out.stderr.contains("rephrase the prompt"), "{out:#?}");
    assert!(!out.stderr.contains("invalid response"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
    assert_pending(&env, "hi");
}

#[test]
fn other_providers_name_their_key_variable() {
    let s = Server::start(vec![
        Reply::json(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"}"#,
        ),
        Reply::json(
            401,
            r#"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}"#,
        ),
    ]);
    let mut env = Env::for_provider("anthropic", &s);
    env.set("AZURE_OPENAI_API_KEY", KEY)
        .set("AZURE_OPENAI_ENDPOINT", &s.url());
    for (model, var) in [
        ("anthropic:claude-test", "ANTHROPIC_API_KEY"),
        ("azure:my-dep", "AZURE_OPENAI_API_KEY"),
    ] {
        let out = env.run(&[model, "hi"]);
        assert_eq!(out.code, Some(3), "{out:#?}");
        assert!(out.stderr.contains(var), "{out:#?}");
    }
    assert_eq!(s.requests().len(), 2);
}

#[test]
fn azure_unknown_deployment() {
    let s = Server::start(vec![Reply::json(
        404,
        r#"{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}"#,
    )]);
    let env = Env::for_provider("azure", &s);
    let out = env.run(&["azure:no-such-dep", "hi"]);
    assert_eq!(out.code, Some(4), "{out:#?}");
    assert!(out.error().contains("no-such-dep"), "{out:#?}");
}

#[test]
fn a_failed_turn_can_be_retried() {
    let s = Server::start(vec![
        Reply::json(500, &error_json("boom", "server_error", "server_error")),
        Reply::sse(&[&oa_stream("second time lucky", 2, 3)]),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"retries":0}}}"#);
    let out = env.run(&["openai:gpt-test", "please"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_pending(&env, "please");
    let id = env.chats().len();
    assert_eq!(id, 1);
    let chat_id = env.only_chat()[0]["id"].as_str().expect("id").to_owned();
    let out = env.run(&["chat", "retry", &chat_id]);
    out.ok();
    assert_eq!(out.stdout, "second time lucky\n");
    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body, reqs[1].body, "the same prompt is sent again");
    let m = env.only_messages();
    assert_eq!(m.len(), 2, "{m:#?}");
    assert_eq!(m[0]["content"], "please");
    assert_eq!(m[1]["content"], "second time lucky");
    assert_eq!(m[1]["usage"], serde_json::json!({"input": 2, "output": 3}));
}

#[test]
fn a_closed_stdout_ends_the_call_quietly() {
    // `ai … | head -c 5`: the reader goes away mid-stream.
    use std::io::Read;
    use std::process::Stdio;
    // The rest waits at a gate until the reader is gone: a pause could end first on a loaded
    // machine, and the whole reply would fit the pipe.
    let gate = Gate::new();
    let s = Server::start(vec![
        Reply::sse(&[&oa_text("first ")])
            .hold(&gate)
            .body(&oa_text("second "))
            .pause(300)
            .body(&oa_text("third"))
            .body(&oa_end(1, 1)),
    ]);
    let env = Env::for_provider("openai", &s);
    let mut child = env
        .command(&["openai:gpt-test", "hi"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ai");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 6];
    stdout.read_exact(&mut first).expect("first bytes");
    drop(stdout);
    gate.open();
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("error:"), "{stderr}");
    assert!(!stderr.contains(KEY));
    env.assert_no_key_in_files();
    let m = env.only_messages();
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["interrupted"], true, "{m:#?}");
    assert!(m[1]["content"].as_str().unwrap_or("").starts_with("first "));
}
