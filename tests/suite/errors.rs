//! Exit codes and error messages: `error: …` then `hint: …` on stderr, nothing on stdout.

use crate::support::{Env, Out, echo_reply};

/// The `error: …` line of stderr (notices, such as where a failed prompt was kept, may come
/// before it).
fn error_line(err: &str) -> &str {
    err.lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no `error: ` line in {err:?}"))
}

fn assert_clean_failure(out: &Out, code: i32) -> String {
    let err = out.stderr.clone();
    assert_eq!(out.code, Some(code), "stderr: {err}");
    assert_eq!(out.stdout, "", "stdout stays empty on failure");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("RUST_BACKTRACE"), "{err}");
    err
}

/// Exit 0 means the whole job was done: the reply on stdout, nothing but the chat footer on
/// stderr, and the turn stored.
#[test]
fn success_is_zero() {
    let env = Env::new();
    let out = env.run(&["sonnet", "hi"]).success();
    assert_eq!(out.stdout, "reply from claude\n");
    assert_eq!(env.stdin_text("claude"), "hi");
    let id = out.chat_id();
    assert_eq!(out.stderr, format!("[chat: {id}]\n"));
    let m = env.messages(&id);
    assert_eq!(m.len(), 2, "{m:?}");
    assert_eq!(
        (&m[0]["role"], &m[0]["content"]),
        (&"user".into(), &"hi".into())
    );
    assert_eq!(
        (&m[1]["role"], &m[1]["content"]),
        (&"assistant".into(), &"reply from claude\n".into())
    );

    let out = env.run(&["echo", "hi"]).success();
    assert_eq!(out.stdout, echo_reply("hi", 0));
    let echo = out.chat_id();
    assert_ne!(echo, id, "a new chat");
    assert_eq!(env.messages(&echo).len(), 2);
    assert_eq!(env.calls(), ["claude"], "echo runs no CLI");
}

#[test]
fn backend_failure_is_one_with_its_message_and_code() {
    let env = Env::new();
    env.reply("codex", "");
    env.stderr("codex", "codex: quota exceeded for this month\n");
    env.exit_code("codex", 3);
    let out = env.ai().args(["codex", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    let line = error_line(&err);
    assert!(
        line.contains("codex: quota exceeded for this month"),
        "{err}"
    );
    assert!(line.contains("exit code 3"), "{err}");
    assert!(err.contains("\nhint: "), "{err}");
}

#[test]
fn backend_failure_after_partial_output() {
    // What was streamed stays streamed; the failure is still reported with its code.
    let env = Env::new();
    env.reply("gemini", "partial answ");
    env.stderr("gemini", "API error: stream reset\n");
    env.exit_code("gemini", 1);
    let out = env.ai().args(["gemini", "hi"]).run();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.contains("error: "), "{}", out.stderr);
    assert!(
        out.stderr.contains("API error: stream reset"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("exit code 1"), "{}", out.stderr);
}

#[test]
fn gemini_auth_exit_code_gets_a_login_hint() {
    let env = Env::new();
    env.reply("gemini", "");
    env.stderr("gemini", "Please set an Auth method\n");
    env.exit_code("gemini", 41);
    let out = env.ai().args(["gemini", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    assert!(err.contains("exit code 41"), "{err}");
    assert!(err.contains("hint: log in"), "{err}");
}

#[test]
fn claude_errors_on_stdout_never_reach_stdout() {
    let env = Env::new();
    env.reply("claude", "Not logged in · Please run /login\n");
    env.exit_code("claude", 1);
    let out = env.ai().args(["sonnet", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    assert!(err.contains("error: "), "{err}");
    assert!(err.contains("Not logged in · Please run /login"), "{err}");
    assert!(err.contains("exit code 1"), "{err}");
    assert!(err.contains("hint: log in: run `claude` once"), "{err}");
}

#[test]
fn claude_reply_is_printed_once_it_succeeds() {
    let env = Env::new();
    env.reply("claude", "first part\nsecond part\n");
    let out = env.ai().args(["sonnet", "hi"]).run();
    assert!(out.status.success());
    assert_eq!(out.stdout, "first part\nsecond part\n");
}

#[test]
fn backend_killed_by_a_signal() {
    let env = Env::new();
    env.script("qwen", "kill -9 $$\n");
    let out = env.ai().args(["qwen", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    assert!(err.contains("qwen failed (signal 9)"), "{err}");
}

#[test]
fn backend_not_installed() {
    let env = Env::bare();
    let cases = [
        (
            "sonnet",
            "claude is not installed",
            "npm install -g @anthropic-ai/claude-code",
        ),
        (
            "codex",
            "codex is not installed",
            "npm install -g @openai/codex",
        ),
        (
            "gemini",
            "gemini is not installed",
            "npm install -g @google/gemini-cli",
        ),
        (
            "qwen",
            "qwen is not installed",
            "npm install -g @qwen-code/qwen-code",
        ),
        (
            "ollama",
            "ollama is not installed",
            "https://ollama.com/download",
        ),
    ];
    for (alias, what, install) in cases {
        let out = env.ai().args([alias, "hi"]).run();
        let err = assert_clean_failure(&out, 1);
        assert!(
            error_line(&err).starts_with(&format!("error: {what}")),
            "{err}"
        );
        let hint = err.lines().find(|l| l.starts_with("hint: ")).unwrap_or("");
        assert!(hint.contains(install), "{alias}: {err}");
        // Nothing was sent: no chat, no kept prompt to resend.
        assert!(!err.contains("the prompt is kept"), "{alias}: {err}");
        assert!(env.chat_ids().is_empty(), "{alias}: {:?}", env.chat_ids());
    }
    // A named chat is not created either.
    let out = env.ai().args(["sonnet", "--chat", "notes", "hi"]).run();
    assert_clean_failure(&out, 1);
    assert!(env.chat_ids().is_empty(), "{:?}", env.chat_ids());
}

#[test]
fn not_executable_backend() {
    let env = Env::new();
    let fake = env.bin.join("qwen");
    std::fs::remove_file(&fake).unwrap();
    std::fs::write(&fake, "#!/bin/sh\necho hi\n").unwrap(); // mode 0644
    let out = env.ai().args(["qwen", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    assert!(err.contains("error: "), "{err}");
    assert!(err.contains("hint: "), "{err}");
}

#[test]
fn no_prompt_is_a_usage_error() {
    let env = Env::new();
    let out = env.ai().arg("sonnet").run();
    let err = assert_clean_failure(&out, 2);
    assert!(err.contains("error: no prompt given"), "{err}");
    assert!(err.contains("hint: "), "{err}");
    // Whitespace only is no prompt either.
    let out = env.ai().arg("sonnet").write_stdin(" \n\n").run();
    assert_clean_failure(&out, 2);
    let out = env.ai().args(["sonnet", "  "]).run();
    assert_clean_failure(&out, 2);
    assert!(env.calls().is_empty());
}

#[test]
fn no_model_and_no_default_is_a_usage_error() {
    let env = Env::new();
    let out = env.ai().arg("hi").run();
    let err = assert_clean_failure(&out, 2);
    assert!(
        err.contains("error: no model named, and no default model is set"),
        "{err}"
    );
    assert!(
        err.contains("hint: ") && err.contains("ai default sonnet"),
        "{err}"
    );
    assert!(env.calls().is_empty());
}

#[test]
fn bad_timeout_is_a_usage_error() {
    let env = Env::new();
    for bad in ["abc", "0", "-1", "inf", "NaN", ""] {
        let out = env.ai().args(["--timeout", bad, "sonnet", "hi"]).run();
        let err = assert_clean_failure(&out, 2);
        assert!(err.contains("error: "), "--timeout {bad:?}: {err}");
        // clap names the option, or (for `-1`) the value it took for another option.
        assert!(
            err.contains("--timeout") || err.contains(&format!("'{bad}'")),
            "--timeout {bad:?}: {err}"
        );
    }
    assert!(env.calls().is_empty());
}

#[test]
fn unknown_option_is_a_usage_error() {
    let env = Env::new();
    let out = env.ai().args(["--frobnicate", "sonnet", "hi"]).run();
    assert_clean_failure(&out, 2);
}

#[test]
fn invalid_config_names_line_and_column() {
    let env = Env::new();
    env.write_config("{\n  \"aliases\": {\n    \"x\": [\"ollama\", \"m\"],\n  }\n}\n");
    let out = env.ai().args(["sonnet", "hi"]).run();
    let err = assert_clean_failure(&out, 3);
    assert!(err.contains("error: invalid config"), "{err}");
    assert!(
        err.contains(&env.config_path().display().to_string()),
        "{err}"
    );
    assert!(err.contains("line 4, column 3"), "{err}");
    assert!(err.contains("hint: "), "{err}");
    assert!(env.calls().is_empty());
}

#[test]
fn config_of_the_wrong_shape_is_a_config_error() {
    let env = Env::new();
    for text in [
        "[1, 2]",
        r#"{"aliases": {"x": "not a pair"}}"#,
        r#"{"timeout": -5}"#,
        r#"{"backends": {"b": {"program": "b", "typo_key": 1}}}"#,
    ] {
        env.write_config(text);
        let out = env.ai().args(["sonnet", "hi"]).run();
        let err = assert_clean_failure(&out, 3);
        assert!(err.contains("error: invalid config"), "{text}: {err}");
    }
}

#[test]
fn alias_with_an_unknown_provider_is_a_config_error() {
    let env = Env::new();
    env.write_config(r#"{"aliases": {"mine": ["nosuchprovider", "m"]}}"#);
    let out = env.ai().args(["mine", "hi"]).run();
    let err = assert_clean_failure(&out, 3);
    assert!(err.contains("unknown provider 'nosuchprovider'"), "{err}");
}

#[test]
fn unknown_alias_suggests_the_closest() {
    let env = Env::new();
    let out = env.ai().args(["sonet", "hi"]).run();
    let err = assert_clean_failure(&out, 4);
    assert!(err.contains("error: unknown model 'sonet'"), "{err}");
    let hint = err.lines().find(|l| l.starts_with("hint: ")).unwrap_or("");
    assert!(hint.contains("sonnet"), "{err}");
    assert!(env.calls().is_empty());

    let out = env.ai().args(["nosuchprov:model", "hi"]).run();
    let err = assert_clean_failure(&out, 4);
    assert!(err.contains("unknown provider 'nosuchprov'"), "{err}");
}

#[test]
fn broken_pipe_exits_quietly() {
    use std::io::Read;
    use std::process::Stdio;

    // echo replies with the prompt: 1 MiB of it cannot fit in a pipe, so the write fails.
    let env = Env::new();
    let input = env.path("big-input.txt");
    std::fs::write(&input, crate::support::big_text(1024 * 1024)).unwrap();
    let err_file = env.path("stderr.txt");
    let mut child = env
        .ai()
        .arg("echo")
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then closed: `| head -c1`
    let status = child.wait_status();
    let err = std::fs::read_to_string(&err_file).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.to_lowercase().contains("error"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn broken_pipe_while_streaming_stops_the_backend() {
    use std::io::Read;
    use std::process::Stdio;

    let env = Env::new();
    let pid_file = env.path("yes.pid");
    env.script(
        "codex",
        &format!(
            "echo $$ > '{}'\nwhile :; do echo 'an endless reply, line after line'; done\n",
            pid_file.display()
        ),
    );
    let err_file = env.path("stderr.txt");
    let mut child = env
        .ai()
        .args(["codex", "go"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let status = child.wait_status();
    let err = std::fs::read_to_string(&err_file).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.to_lowercase().contains("error"), "{err}");
    let pid = crate::support::read_pid(&pid_file);
    assert!(
        crate::support::wait_gone(pid, std::time::Duration::from_secs(10)),
        "the backend (pid {pid}) still runs"
    );
}

#[test]
fn backend_message_is_cleaned_of_control_sequences() {
    let env = Env::new();
    env.reply("codex", "");
    env.stderr(
        "codex",
        "\x1b[31mfatal\x1b[0m: bad \x1b]0;evil title\x07request\n",
    );
    env.exit_code("codex", 1);
    let out = env.ai().args(["codex", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    assert!(err.contains("fatal: bad request"), "{err:?}");
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
}

#[test]
fn huge_stderr_from_a_failing_backend_keeps_its_end() {
    // More than a pipe holds: ai must keep reading stderr while it waits, and report the end.
    let env = Env::new();
    let mut noise = String::new();
    for i in 0..40_000 {
        noise.push_str(&format!("progress line {i}\n"));
    }
    noise.push_str("the real reason: disk full\n");
    env.reply("gemini", "");
    env.stderr("gemini", &noise);
    env.exit_code("gemini", 1);
    let out = env.ai().args(["gemini", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    assert!(err.contains("the real reason: disk full"), "{err}");
    assert!(!err.contains("progress line 0\n"), "only the end is kept");
    assert!(
        err.len() < 10_000,
        "the message is bounded: {} bytes",
        err.len()
    );
}

#[test]
fn claude_failing_silently() {
    let env = Env::new();
    env.reply("claude", "");
    env.exit_code("claude", 1);
    let out = env.ai().args(["sonnet", "hi"]).run();
    let err = assert_clean_failure(&out, 1);
    assert!(
        err.contains("claude failed (exit code 1) and printed nothing"),
        "{err}"
    );
}

/// Bare `ai` at a terminal shows the help (on stderr) and exits 2; without a terminal it is a
/// call with no prompt.
#[test]
fn bare_ai_at_a_terminal_shows_help() {
    let env = crate::support::Env::new();
    let (code, text) = crate::support::on_terminal(&env, "", "");
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("Usage: ai [OPTIONS] [MODEL|PROMPT]..."),
        "{text}"
    );
    let out = env.ai().run();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.contains("no prompt given"));
}

/// A slow backend on a terminal: a spinner on stderr, cleared before the reply starts.
#[test]
fn spinner_on_a_terminal_is_cleared_before_the_reply() {
    let env = crate::support::Env::new();
    env.script("claude", "\"$SLEEP\" 0.8\n");
    env.reply("claude", "the answer\n");
    let (code, text) = crate::support::on_terminal(&env, "sonnet hello", "");
    assert_eq!(code, Some(0), "{text:?}");
    let spin = text
        .find("sonnet 0s")
        .unwrap_or_else(|| panic!("no spinner: {text:?}"));
    let answer = text.find("the answer").unwrap();
    assert!(spin < answer);
    assert!(
        text[spin..answer].ends_with("\r\x1b[K"),
        "line not cleared: {text:?}"
    );
    // -q: no spinner at all.
    let (_, text) = crate::support::on_terminal(&env, "-q sonnet hello", "");
    assert!(!text.contains("sonnet 0s"), "{text:?}");
    assert!(text.contains("the answer"));
}

/// Durations too large to wait are usage or config errors, never a panic.
#[test]
fn absurd_durations_are_errors_not_panics() {
    let env = crate::support::Env::new();
    let out = env.ai().args(["--timeout", "1e30", "echo", "hi"]).run();
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.contains("panicked"));
    env.write_config(r#"{"timeout": 1e20}"#);
    let out = env.ai().args(["echo", "hi"]).run();
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
}

/// With a default model, ordinary first words start the prompt, even when they are close to an
/// alias (`code` ~ `codex`); a single prompt after a near-miss is a mistyped model.
#[test]
fn english_first_words_go_to_the_default_model() {
    let env = crate::support::Env::new();
    env.write_config(r#"{"default_alias": "echo"}"#);
    for words in [
        &["code", "review", "this"][..],
        &["open", "the", "door"],
        &["fast", "way", "to", "sort"],
    ] {
        let out = env.ai().args(words).run();
        assert!(out.status.success(), "{words:?}: {}", out.stderr);
        assert!(out.stdout.contains(&words.join(" ")));
    }
    let out = env.ai().args(["sonet", "explain recursion"]).run();
    assert_eq!(out.status.code(), Some(4));
}
