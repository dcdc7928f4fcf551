//! Escape sequences in an HTTP stream: cleaned on a terminal even when a sequence is split
//! across stream events, and byte-exact into a pipe.

use crate::support::{Env, Reply, Server, oa_end, oa_text};

/// An OSC 52 clipboard write and a title change, each split across two events.
fn split_stream() -> Reply {
    Reply::sse(&[
        &oa_text("one \u{1b}]5"),
        &oa_text("2;c;ZXZpbA==\u{7}two \u{1b}]0;PWNED"),
        &oa_text("-TITLE\u{7}three \u{202e}x"),
        &oa_end(1, 3),
    ])
}

const EXACT: &str = "one \u{1b}]52;c;ZXZpbA==\u{7}two \u{1b}]0;PWNED-TITLE\u{7}three \u{202e}x";

/// Run `ai ARGS` on a pseudo-terminal (util-linux `script`), with no input; everything the
/// terminal showed.
fn on_terminal(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let line: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    crate::support::on_terminal(env, &line.join(" "), "")
}

#[test]
fn a_split_escape_in_an_http_stream_is_cleaned_on_a_terminal() {
    let s = Server::start(vec![split_stream()]);
    let env = Env::for_provider("openai", &s);
    let (code, shown) = on_terminal(&env, &["-q", "openai:gpt-test", "hello"]);
    assert_eq!(code, Some(0), "{shown}");
    for raw in ["\u{1b}]52", "\u{1b}]0;", "\u{202e}", "ZXZpbA", "PWNED"] {
        assert!(
            !shown.contains(raw),
            "{raw:?} reached the terminal: {shown:?}"
        );
    }
    assert!(shown.contains("one two three \\u{202e}x"), "{shown:?}");
}

#[test]
fn an_http_stream_into_a_pipe_is_byte_exact() {
    let s = Server::start(vec![split_stream()]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["openai:gpt-test", "hello"]);
    out.ok();
    assert_eq!(out.stdout, format!("{EXACT}\n"));
}
