//! config.json is checked whole when it is read: a wrong type names its key path, numbers are
//! read sensibly and never echoed at length, and bad `providers` entries fail before anything
//! (a chat) is written. An unreadable file is a config error (exit 3).

use std::fs;

use crate::support::Env;

/// `ai echo hi` with this config: exit 3 and the error, and no chat was written.
fn rejected(config: &str) -> String {
    let env = Env::new();
    env.write_config(config);
    let out = env.ai().args(["echo", "hi"]).run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(3), "{config}: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        !env.home.join("chats").exists(),
        "{config}: a chat was written"
    );
    err
}

fn accepted(config: &str) {
    let env = Env::new();
    env.write_config(config);
    let out = env.ai().args(["echo", "hi"]).run();
    assert!(out.status.success(), "{config}: {}", out.stderr);
}

#[test]
fn type_errors_name_the_key_path() {
    let cases = [
        (
            r#"{"chat":{"system":42}}"#,
            "chat.system: expected a string, found 42",
        ),
        (
            r#"{"default_alias":5}"#,
            "default_alias: expected a string, found 5",
        ),
        (r#"{"aliases":{"x":[1,2]}}"#, "aliases.x: "),
        (
            r#"{"chat":{"save":"yes"}}"#,
            "chat.save: expected a boolean, found \"yes\"",
        ),
        (
            r#"{"chat":"long"}"#,
            "chat: expected an object, found \"long\"",
        ),
        (
            r#"{"backends":{"llm":{"program":"llm","args":[5]}}}"#,
            "backends.llm.args: ",
        ),
        (
            r#"{"backends":{"llm":{"program":"llm","prgram":1}}}"#,
            "backends.llm: unknown field `prgram`",
        ),
    ];
    for (config, want) in cases {
        let err = rejected(config);
        assert!(err.contains(want), "{config}: want {want:?} in:\n{err}");
    }
}

#[test]
fn numbers_are_read_sensibly_and_not_echoed_at_length() {
    accepted(r#"{"chat":{"window_tokens":1e12}}"#);
    accepted(r#"{"chat":{"window_tokens":8000.0}}"#);
    let err = rejected(r#"{"chat":{"window_tokens":1.5}}"#);
    assert!(
        err.contains("chat.window_tokens: expected a whole number"),
        "{err}"
    );
    let err = rejected(r#"{"chat":{"window_tokens":-3}}"#);
    assert!(err.contains("chat.window_tokens"), "{err}");
    let huge = format!(r#"{{"timeout":1{}}}"#, "0".repeat(300));
    for config in [r#"{"timeout":1e300}"#, huge.as_str()] {
        let err = rejected(config);
        assert!(err.contains("timeout"), "{err}");
        assert!(
            !err.contains("0000000000"),
            "the number is echoed in full: {err}"
        );
        assert!(err.len() < 400, "{err}");
    }
}

#[test]
fn context_tokens_entries_are_checked() {
    for (config, key) in [
        (
            r#"{"context_tokens":"big"}"#,
            "context_tokens: expected an object",
        ),
        (
            r#"{"context_tokens":{"openai":"big"}}"#,
            "context_tokens.openai: ",
        ),
        (r#"{"context_tokens":{"echo":-1}}"#, "context_tokens.echo: "),
        (r#"{"context_tokens":{"echo":0}}"#, "context_tokens.echo: "),
    ] {
        let err = rejected(config);
        assert!(err.contains(key), "{config}: want {key:?} in:\n{err}");
    }
    accepted(r#"{"context_tokens":{"echo":32768,"openai":1e6}}"#);
}

#[test]
fn bad_providers_entries_fail_before_anything_is_written() {
    for (config, key) in [
        (
            r#"{"providers":{"openai":{"retries":"x"}}}"#,
            "providers.openai.retries: ",
        ),
        (r#"{"providers":{"openai":{"base_ulr":"x"}}}"#, "base_ulr"),
        (
            r#"{"providers":{"lab":{"base_url":"http://127.0.0.1:1","timeout":-1}}}"#,
            "providers.lab.timeout",
        ),
        (
            r#"{"providers":{"lab":{"headers":{"X-A":"a\r\nX-B: b"}}}}"#,
            "providers.lab.headers.X-A",
        ),
        (
            r#"{"providers":{"lab":["x"]}}"#,
            "providers.lab: expected an object",
        ),
        (r#"{"providers":7}"#, "providers: expected an object"),
    ] {
        let err = rejected(config);
        assert!(err.contains(key), "{config}: want {key:?} in:\n{err}");
    }
}

#[test]
fn an_unreadable_config_is_a_config_error() {
    let env = Env::new();
    fs::create_dir(env.config_path()).unwrap();
    let out = env.ai().args(["echo", "hi"]).run();
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    assert!(out.stderr.contains("config"), "{}", out.stderr);
}

#[test]
fn a_fifo_config_never_hangs_ai() {
    let env = Env::new();
    let path = std::ffi::CString::new(env.config_path().display().to_string()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo(3) takes no other pointers.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let out = env.ai().args(["echo", "hi"]).run();
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
}
