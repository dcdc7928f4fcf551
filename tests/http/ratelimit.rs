//! `max_requests_per_minute`: the budget is shared between calls through a state file.

use crate::support::*;

#[test]
fn an_exhausted_budget_with_no_wait_exits_75_without_a_request() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("first", 1, 1)]),
        Reply::sse(&[&oa_stream("must not be asked for", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"max_requests_per_minute":1}}}"#);
    let out = env.run(&["openai:gpt-test", "one"]);
    out.ok();
    assert_eq!(out.stdout, "first\n");

    let out = env.run(&["--no-wait", "openai:gpt-test", "two"]);
    assert_eq!(out.code, Some(75), "{out:#?}");
    assert_eq!(out.stdout, "");
    let e = out.error();
    assert!(e.contains("rate limit"), "{e}");
    assert_eq!(s.requests().len(), 1, "the second call made no request");

    let state = env.home.join("state");
    let files: Vec<_> = std::fs::read_dir(&state)
        .expect("state folder")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        files.iter().any(|f| f.contains("openai")),
        "no rate state for openai in {files:?}"
    );
}

#[test]
fn the_budget_is_per_provider() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("openai", 1, 1)]),
        Reply::sse(&[&oa_stream("openrouter", 1, 1)]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.set("OPENROUTER_API_KEY", KEY)
        .set("OPENROUTER_BASE_URL", &s.url());
    env.write_config(
        r#"{"providers":{"openai":{"max_requests_per_minute":1},"openrouter":{"max_requests_per_minute":1}}}"#,
    );
    env.run(&["--no-wait", "openai:m", "one"]).ok();
    let out = env.run(&["--no-wait", "openrouter:m", "two"]);
    out.ok();
    assert_eq!(out.stdout, "openrouter\n");
    assert_eq!(s.requests().len(), 2);
}

/// Ctrl+C while waiting for the budget: ai stops at once, sends nothing, keeps the prompt.
#[test]
fn interrupting_the_wait_sends_nothing() {
    use std::io::{BufRead, BufReader};
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("first", 1, 1)]),
        Reply::sse(&[&oa_stream("must not be asked for", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"max_requests_per_minute":1}}}"#);
    env.run(&["openai:gpt-test", "one"]).ok();
    let mut child = env
        .command(&["openai:gpt-test", "two"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("waiting") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "no waiting notice");
    }
    let started = std::time::Instant::now();
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait_status();
    assert_eq!(status.code(), Some(130));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "waited out the budget"
    );
    assert_eq!(s.requests().len(), 1, "nothing was sent after Ctrl+C");
    let last = env
        .chats()
        .into_iter()
        .flatten()
        .filter(|r| r["type"] == "pending")
        .count();
    assert_eq!(last, 1, "the prompt is kept");
}
