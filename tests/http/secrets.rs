//! The key never leaks: `--dry-run` shows `***`, `--json` and errors never carry it. (Every
//! call made through `Env::run` also checks stdout, stderr and every file under AI_CLI_HOME.)

use crate::support::*;

#[test]
fn dry_run_hides_the_key_for_every_provider() {
    let s = Server::start(vec![]);
    for (provider, header) in [
        ("openai", "Authorization: Bearer ***"),
        ("openrouter", "Authorization: Bearer ***"),
        ("glm", "Authorization: Bearer ***"),
        ("anthropic", "x-api-key: ***"),
        ("gemini-api", "x-goog-api-key: ***"),
        ("azure", "api-key: ***"),
    ] {
        let env = Env::for_provider(provider, &s);
        let out = env.run(&[
            "--dry-run",
            "--system",
            "be brief",
            &format!("{provider}:m"),
            "hi",
        ]);
        out.ok();
        assert!(out.stdout.starts_with("POST http://127.0.0.1:"), "{out:#?}");
        assert!(
            out.stdout.lines().any(|l| l == header),
            "{provider}: no line {header:?} in {}",
            out.stdout
        );
        assert!(out.stdout.contains("be brief"), "{out:#?}");
        assert!(env.chats().is_empty(), "a dry run saves nothing");
    }
    assert!(s.requests().is_empty(), "a dry run sends nothing");
}

#[test]
fn dry_run_shows_the_request_that_would_be_sent() {
    let s = Server::start(vec![]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&[
        "--dry-run",
        "--system",
        "be brief",
        "anthropic:claude-test",
        "hi",
    ]);
    out.ok();
    let first = out.stdout.lines().next().unwrap_or("");
    assert_eq!(first, format!("POST {}/v1/messages", s.url()));
    assert!(
        out.stdout.contains("anthropic-version: 2023-06-01"),
        "{out:#?}"
    );
    let body = &out.stdout[out.stdout.find("\n\n").expect("blank line") + 2..];
    let v: serde_json::Value = serde_json::from_str(body.trim()).expect("body is JSON");
    assert_eq!(v["system"], "be brief");
    assert_eq!(v["max_tokens"], 4096);
}

#[test]
fn dry_run_hides_a_key_in_a_custom_header() {
    let s = Server::start(vec![]);
    let mut env = Env::empty();
    env.set("LMSTUDIO_KEY", KEY);
    env.write_config(&format!(
        r#"{{"providers":{{"lmstudio":{{"base_url":"{}/v1","api_key_env":"LMSTUDIO_KEY","headers":{{"X-Also-Key":"${{LMSTUDIO_KEY}}"}}}}}}}}"#,
        s.url()
    ));
    let out = env.run(&["--dry-run", "lmstudio:qwen", "hi"]);
    out.ok();
    assert!(out.stdout.contains("X-Also-Key: ***"), "{out:#?}");
}

#[test]
fn json_output_and_chat_hold_no_key() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("the key is not here", 1, 1)])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--json", "openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.json()["reply"], "the key is not here");
    // Env::run has already scanned stdout, stderr and every file under AI_CLI_HOME.
    assert!(!env.chats().is_empty());
}

#[test]
fn an_echoed_key_in_a_stream_error_is_hidden() {
    let s = Server::start(vec![Reply::sse(&[
        &oa_text("x"),
        &data(&format!(
            r#"{{"error":{{"message":"key {KEY} was revoked","code":401}}}}"#
        )),
    ])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("***"), "{out:#?}");
}

#[test]
fn an_echoed_key_in_a_retried_error_is_hidden() {
    // The retry notice shows the error too.
    let s = Server::start(vec![
        Reply::sse(&[&data(&format!(
            r#"{{"error":{{"message":"overloaded, key {KEY}","type":"overloaded_error"}}}}"#
        ))]),
        Reply::sse(&[&oa_stream("fine", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(s.requests().len(), 2);
    assert!(out.stderr.contains("retrying"), "{out:#?}");
}

/// A secret in a `${VAR}` of base_url or headers, or written into a header, is hidden like the
/// key: in --dry-run, in errors, in chat files, in `ai list`.
#[test]
fn secrets_from_variables_and_headers_are_hidden_too() {
    let mut env = Env::empty();
    env.set("LM_SECRET", "var-secret-9876");
    env.write_config(
        r#"{"providers":{"lm":{"base_url":"http://127.0.0.1:9/v1?token=${LM_SECRET}",
            "headers":{"X-Api-Key":"${LM_SECRET}","X-Plain":"written-secret-5432"}}}}"#,
    );
    let leaks = |out: &Out| {
        for secret in ["var-secret-9876", "written-secret-5432"] {
            assert!(
                !out.stdout.contains(secret) && !out.stderr.contains(secret),
                "{secret}: {out:#?}"
            );
        }
    };
    let out = env.run(&["--dry-run", "lm:m", "hi"]);
    out.ok();
    leaks(&out);
    assert!(
        out.stdout.contains("token=***") && out.stdout.contains("X-Api-Key: ***"),
        "{out:#?}"
    );
    let out = env.run(&["lm:m", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    leaks(&out);
    leaks(&env.run(&["list", "--providers"]));
    for path in ["chats"].iter().map(|d| env.home.join(d)) {
        for entry in std::fs::read_dir(path).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            assert!(!text.contains("var-secret-9876"), "{text}");
        }
    }
}

/// A key written into the base URL's query (`?key=…`, the README's own example) is hidden like
/// any other: in --dry-run, in errors that echo the URL, in chat files (H2-8).
#[test]
fn a_key_in_the_base_urls_query_is_hidden_too() {
    let s = Server::respond(|req| {
        Reply::json(
            403,
            &format!(r#"{{"error":{{"message":"forbidden: {}"}}}}"#, req.target),
        )
    });
    let env = Env::empty();
    env.write_config(&format!(
        r#"{{"providers":{{"fake":{{"base_url":"http://user:pw@{}/v1?key=QUERYSECRET&api-key=a%2Bb%2Fcd&x=1"}}}}}}"#,
        s.host_port()
    ));
    let leaks = |out: &Out| {
        for secret in ["QUERYSECRET", "a%2Bb%2Fcd", "a+b/cd"] {
            assert!(
                !out.stdout.contains(secret) && !out.stderr.contains(secret),
                "{secret}: {out:#?}"
            );
        }
    };
    let out = env.run(&["--dry-run", "fake:m", "hello"]);
    out.ok();
    leaks(&out);
    assert!(out.stdout.contains("key=***&api-key=***&x=1"), "{out:#?}");
    let out = env.run(&["fake:m", "hello"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(
        out.error()
            .contains("forbidden: /v1/chat/completions?key=***"),
        "{out:#?}"
    );
    leaks(&out);
    assert!(
        s.requests()[0].target.contains("key=QUERYSECRET"),
        "still sent"
    );
    for entry in std::fs::read_dir(env.home.join("chats")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("QUERYSECRET"), "{text}");
    }
}

/// A server asking to wait an absurd time is not waited for, and nothing panics.
#[test]
fn an_absurd_retry_after_is_not_waited_for() {
    let s = Server::start(vec![
        Reply::json(
            429,
            r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
        )
        .header("Retry-After", "1e300"),
        Reply::json(
            429,
            r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
        )
        .header("Retry-After", "1e300"),
        Reply::json(
            429,
            r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
        )
        .header("Retry-After", "1e300"),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:m", "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("rate limiting"), "{out:#?}");
    assert!(!out.stderr.contains("panicked"), "{out:#?}");
}
