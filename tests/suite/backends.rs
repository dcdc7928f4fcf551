//! Each backend CLI gets exactly the arguments of its table, and the prompt on stdin.

use crate::support::{Env, args};

/// Run `ai WORDS…` with prompt "hi"; assert one call of `program` with `expected` argv and the
/// prompt on a stdin pipe.
fn check(env: &Env, words: &[&str], program: &str, expected: &[&str]) {
    let before = env.calls().len();
    let out = env.ai().args(words).arg("hi").run();
    assert!(out.status.success(), "ai {words:?} failed: {}", out.stderr);
    assert_eq!(
        env.calls()[before..],
        [program.to_owned()],
        "ai {words:?} calls exactly {program}"
    );
    assert_eq!(env.argv(program), args(expected), "argv of ai {words:?}");
    assert_eq!(env.stdin_text(program), "hi", "stdin of ai {words:?}");
    assert!(
        env.stdin_source(program).starts_with("pipe:"),
        "the prompt reaches {program} on a pipe, not {}",
        env.stdin_source(program)
    );
    assert_eq!(out.stdout, format!("reply from {program}\n"));
}

#[test]
fn builtin_aliases() {
    let env = Env::new();
    check(
        &env,
        &["sonnet"],
        "claude",
        &[
            "--print",
            "--model",
            "sonnet",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["claude"],
        "claude",
        &[
            "--print",
            "--model",
            "sonnet",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["haiku"],
        "claude",
        &[
            "--print",
            "--model",
            "haiku",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["opus"],
        "claude",
        &[
            "--print",
            "--model",
            "opus",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["codex"],
        "codex",
        &[
            "exec",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.3-codex",
            "--json",
            "-",
        ],
    );
    check(
        &env,
        &["gpt"],
        "codex",
        &[
            "exec",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.2",
            "--json",
            "-",
        ],
    );
    check(
        &env,
        &["gemini"],
        "gemini",
        &[
            "--skip-trust",
            "-m",
            "gemini-3-flash-preview",
            "-o",
            "stream-json",
        ],
    );
    check(
        &env,
        &["pro"],
        "gemini",
        &[
            "--skip-trust",
            "-m",
            "gemini-3-pro-preview",
            "-o",
            "stream-json",
        ],
    );
    check(
        &env,
        &["qwen"],
        "qwen",
        &[
            "-m",
            "coder-model",
            "-o",
            "stream-json",
            "--include-partial-messages",
        ],
    );
    check(&env, &["ollama"], "ollama", &["run", "llama3"]);
}

#[test]
fn effort() {
    let env = Env::new();
    check(
        &env,
        &["opus-h"],
        "claude",
        &[
            "--print",
            "--model",
            "opus",
            "--effort",
            "high",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["opus-m"],
        "claude",
        &[
            "--print",
            "--model",
            "opus",
            "--effort",
            "medium",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["sonnet@low"],
        "claude",
        &[
            "--print",
            "--model",
            "sonnet",
            "--effort",
            "low",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["codex-xh"],
        "codex",
        &[
            "exec",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.3-codex",
            "-c",
            "model_reasoning_effort=\"xhigh\"",
            "--json",
            "-",
        ],
    );
    check(
        &env,
        &["codex-h"],
        "codex",
        &[
            "exec",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.3-codex",
            "-c",
            "model_reasoning_effort=\"high\"",
            "--json",
            "-",
        ],
    );
}

#[test]
fn provider_model_syntax() {
    let env = Env::new();
    check(
        &env,
        &["claude:opus@low"],
        "claude",
        &[
            "--print",
            "--model",
            "opus",
            "--effort",
            "low",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(
        &env,
        &["claude:claude-sonnet-4-5"],
        "claude",
        &[
            "--print",
            "--model",
            "claude-sonnet-4-5",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ],
    );
    check(&env, &["ollama:qwen3"], "ollama", &["run", "qwen3"]);
    check(
        &env,
        &["ollama:qwen2.5:7b"],
        "ollama",
        &["run", "qwen2.5:7b"],
    );
    check(
        &env,
        &["codex:gpt-5.2@high"],
        "codex",
        &[
            "exec",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.2",
            "-c",
            "model_reasoning_effort=\"high\"",
            "--json",
            "-",
        ],
    );
    check(
        &env,
        &["gemini:gemini-2.5-pro"],
        "gemini",
        &["--skip-trust", "-m", "gemini-2.5-pro", "-o", "stream-json"],
    );
    check(
        &env,
        &["qwen:vision-model"],
        "qwen",
        &[
            "-m",
            "vision-model",
            "-o",
            "stream-json",
            "--include-partial-messages",
        ],
    );
}

#[test]
fn effort_without_an_option_is_ignored_with_a_warning() {
    let env = Env::new();
    let out = env.ai().args(["gemini:gemini-2.5-pro@high", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.argv("gemini"),
        args(&["--skip-trust", "-m", "gemini-2.5-pro", "-o", "stream-json"])
    );
    assert!(
        out.stderr
            .contains("gemini has no effort option; @high is ignored"),
        "{}",
        out.stderr
    );
}

#[test]
fn yolo_word_and_flag() {
    let env = Env::new();
    let cases: [(&str, &str, &[&str]); 4] = [
        (
            "sonnet",
            "claude",
            &[
                "--print",
                "--model",
                "sonnet",
                "--dangerously-skip-permissions",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages",
            ],
        ),
        (
            "codex",
            "codex",
            &[
                "exec",
                "--skip-git-repo-check",
                "-m",
                "gpt-5.3-codex",
                "--dangerously-bypass-approvals-and-sandbox",
                "--json",
                "-",
            ],
        ),
        (
            "gemini",
            "gemini",
            &[
                "--skip-trust",
                "-m",
                "gemini-3-flash-preview",
                "--yolo",
                "-o",
                "stream-json",
            ],
        ),
        (
            "qwen",
            "qwen",
            &[
                "-m",
                "coder-model",
                "--yolo",
                "-o",
                "stream-json",
                "--include-partial-messages",
            ],
        ),
    ];
    for (alias, program, expected) in cases {
        check(&env, &["yolo", alias], program, expected);
        check(&env, &["yolo", alias, "--yolo"], program, expected);
        check(&env, &["--yolo", alias], program, expected);
        check(&env, &[alias, "--yolo"], program, expected);
    }
}

#[test]
fn yolo_on_ollama_is_ignored_with_a_warning() {
    let env = Env::new();
    let out = env.ai().args(["--yolo", "ollama", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("ollama"), args(&["run", "llama3"]));
    assert!(
        out.stderr.contains("ollama has no auto-approve option"),
        "{}",
        out.stderr
    );
}

#[test]
fn reply_without_final_newline_gets_one() {
    let env = Env::new();
    env.reply("gemini", "no newline at the end");
    let out = env.ai().args(["gemini", "hi"]).run();
    assert!(out.status.success());
    assert_eq!(out.stdout, "no newline at the end\n");
}

#[test]
fn stdout_carries_only_the_reply() {
    let env = Env::new();
    env.reply("codex", "line one\nline two\n");
    env.stderr("codex", "codex banner and progress\n");
    let out = env.ai().args(["codex", "hi"]).run();
    assert!(out.status.success());
    assert_eq!(out.stdout, "line one\nline two\n");
}

#[test]
fn dry_run_prints_the_command_and_runs_nothing() {
    let env = Env::new();
    let out = env.ai().args(["--dry-run", "sonnet", "hello there"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let text = out.stdout;
    assert!(
        text.contains(&format!("program: {}\n", env.bin.join("claude").display())),
        "{text}"
    );
    assert!(
        text.contains("command: claude --print --model sonnet --output-format stream-json --verbose --include-partial-messages\n"),
        "{text}"
    );
    assert!(text.contains("stdin: the prompt (11 bytes)\n"), "{text}");
    assert!(text.ends_with("--- prompt ---\nhello there\n"), "{text}");
    assert!(env.calls().is_empty(), "nothing ran: {:?}", env.calls());

    let out = env.ai().args(["--dry-run", "codex-xh", "x"]).run();
    let text = out.stdout;
    assert!(
        text.contains(
            "command: codex exec --skip-git-repo-check -m gpt-5.3-codex -c 'model_reasoning_effort=\"xhigh\"' --json -\n"
        ),
        "{text}"
    );
    assert!(env.calls().is_empty(), "nothing ran: {:?}", env.calls());
}

#[test]
fn dry_run_names_a_missing_program() {
    let env = Env::bare();
    let out = env.ai().args(["--dry-run", "qwen", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        out.stdout.contains("program: qwen (not found on PATH)"),
        "{}",
        out.stdout
    );
}

#[test]
fn json_prints_one_object() {
    let env = Env::new();
    env.reply("gemini", "the answer\n");
    let out = env.ai().args(["--json", "gemini", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let text = out.stdout;
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("stdout is JSON");
    assert_eq!(v["reply"].as_str().map(str::trim_end), Some("the answer"));
    assert_eq!(v["model"], "gemini-3-flash-preview");
    assert_eq!(v["provider"], "gemini");
    assert!(v.as_object().unwrap().contains_key("elapsed_ms"), "{v}");

    // The `json` word does the same.
    let out = env.ai().args(["json", "echo", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("stdout is JSON");
    assert_eq!(v["provider"], "echo");
    assert!(v["reply"].as_str().unwrap().ends_with("\nhi\n"), "{v}");
}

#[test]
fn echo_works_with_nothing_installed() {
    let env = Env::bare();
    let out = env.ai().args(["echo", "hello world"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "echo: model echo, 11 characters, 1 line\nhello world\n"
    );
    assert!(env.calls().is_empty());

    let out = env.ai().args(["echo", "q"]).write_stdin("a\nb\n").run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "echo: model echo, 6 characters, 4 lines\na\nb\n\nq\n"
    );
}

#[test]
fn dry_run_of_echo_and_of_a_prompt_argument() {
    let env = Env::new();
    let out = env.ai().args(["--dry-run", "echo", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "backend: echo (built in; no program runs)\nprompt (2 bytes):\nhi\n"
    );

    env.install("mycli");
    env.write_config(
        r#"{"backends": {"mycli": {"program": "mycli", "model_arg": "-m", "prompt": "arg"}},
            "aliases": {"my": ["mycli", "m1"]}}"#,
    );
    let out = env.ai().args(["--dry-run", "my", "it's here"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let text = out.stdout;
    assert!(
        text.contains("command: mycli -m m1 'it'\\''s here'\n"),
        "{text}"
    );
    assert!(text.contains("stdin: /dev/null"), "{text}");
    assert!(env.calls().is_empty());
}

#[test]
fn large_replies_arrive_whole() {
    // Streamed (codex) and held until exit (claude): every byte, nothing added.
    let env = Env::new();
    let reply = crate::support::big_text(3 * 1024 * 1024) + "\n";
    for (alias, program) in [("codex", "codex"), ("sonnet", "claude")] {
        env.reply(program, &reply);
        let out = env.ai().args([alias, "hi"]).run();
        assert!(out.status.success(), "{}", out.stderr);
        assert_eq!(out.stdout.len(), reply.len(), "{alias}");
        assert!(
            out.stdout_bytes == reply.as_bytes(),
            "{alias}: the reply changed"
        );
    }
}

#[test]
fn reply_bytes_pass_through_unchanged() {
    // Not UTF-8, escape sequences, CRs: the reply is the backend's, byte for byte.
    let env = Env::new();
    let reply: &[u8] = b"caf\xe9 \x1b[1mbold\x1b[0m\r\n";
    std::fs::write(env.root.join("behave/gemini.stdout"), reply).unwrap();
    // Not text: the std Output, whose stdout is bytes.
    let out = env.ai().args(["gemini", "hi"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, reply);
}

#[test]
fn quiet_silences_notices_but_not_errors() {
    let env = Env::new();
    let out = env.ai().args(["-q", "--yolo", "ollama", "hi"]).run();
    assert!(out.status.success());
    assert_eq!(out.stderr, "");
    assert_eq!(out.stdout, "reply from ollama\n");

    let out = env.ai().args(["-q", "sonet", "hi"]).run();
    assert_eq!(out.status.code(), Some(4));
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
}

#[test]
fn version() {
    let env = Env::bare();
    let out = env.ai().arg("--version").run();
    assert!(out.status.success());
    assert_eq!(out.stdout, format!("ai {}\n", env!("CARGO_PKG_VERSION")));
}
