//! config.json: shared with the Python tool, read as it writes it, unknown keys kept.

use serde_json::json;

use crate::support::{Env, args, big_text};

/// As the Python `ai-cli` writes it.
const PYTHON_CONFIG: &str = r#"{
  "aliases": {
    "l3": [
      "ollama",
      "llama3.2"
    ]
  },
  "default_alias": "l3",
  "installed_tools": [
    "claude",
    "ollama"
  ],
  "models": {
    "openrouter": [
      "xiaomi/mimo-v2-flash:free",
      "openai/gpt-oss-120b:free"
    ]
  },
  "some_unknown_key": {
    "nested": [
      1,
      2
    ]
  }
}"#;

#[test]
fn python_config_is_read() {
    let env = Env::new();
    env.write_config(PYTHON_CONFIG);
    let out = env.ai().arg("hi").run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.calls(), ["ollama"]);
    assert_eq!(env.argv("ollama"), args(&["run", "llama3.2"]));
    assert_eq!(env.stdin_text("ollama"), "hi");

    let out = env.ai().args(["l3", "hi there"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("ollama"), args(&["run", "llama3.2"]));
    assert_eq!(env.stdin_text("ollama"), "hi there");
}

#[test]
fn default_and_init_keep_what_they_do_not_own() {
    let env = Env::new();
    env.write_config(PYTHON_CONFIG);
    let before = env.config();

    env.ai().args(["default", "sonnet"]).run().success();
    let after = env.config();
    assert_eq!(after["default_alias"], "sonnet");
    for key in ["aliases", "installed_tools", "models", "some_unknown_key"] {
        assert_eq!(after[key], before[key], "`ai default` changed {key}");
    }
    assert_eq!(
        after.as_object().unwrap().len(),
        before.as_object().unwrap().len()
    );

    env.reply("ollama", "NAME    ID    SIZE    MODIFIED\n");
    env.ai().arg("init").run().success();
    let after = env.config();
    assert_eq!(after["some_unknown_key"], json!({"nested": [1, 2]}));
    assert_eq!(after["aliases"]["l3"], json!(["ollama", "llama3.2"]));
    assert_eq!(
        after["models"]["openrouter"],
        json!(["xiaomi/mimo-v2-flash:free", "openai/gpt-oss-120b:free"])
    );
    assert_eq!(after["default_alias"], "sonnet");
    assert_eq!(
        after["installed_tools"],
        json!(["claude", "codex", "gemini", "qwen", "ollama"])
    );

    // Still readable, and still the Python shape.
    let out = env.ai().args(["l3", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("ollama"), args(&["run", "llama3.2"]));
}

#[test]
fn saved_config_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.ai().args(["default", "echo"]).run().success();
    let mode = std::fs::metadata(env.config_path())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn ai_cli_home_moves_the_home() {
    // Without AI_CLI_HOME: $HOME/.ai-cli.
    let env = Env::new().without_ai_home();
    env.ai().args(["default", "echo"]).run().success();
    let dot = env.root.join(".ai-cli/config.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dot).unwrap()).unwrap();
    assert_eq!(v["default_alias"], "echo");
    assert!(!env.config_path().exists());

    // With it: there, and $HOME/.ai-cli is not read.
    let env = Env::new();
    std::fs::create_dir_all(env.root.join(".ai-cli")).unwrap();
    std::fs::write(
        env.root.join(".ai-cli/config.json"),
        r#"{"default_alias": "codex"}"#,
    )
    .unwrap();
    env.write_config(r#"{"default_alias": "gemini"}"#);
    let out = env.ai().arg("hi").run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.calls(), ["gemini"]);

    // A home that does not exist yet is created on the first save.
    let env = Env::new();
    let nested = env.root.join("elsewhere/deeper");
    env.ai()
        .env("AI_CLI_HOME", &nested)
        .args(["default", "qwen"])
        .run()
        .success();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(nested.join("config.json")).unwrap())
            .unwrap();
    assert_eq!(v["default_alias"], "qwen");
}

#[test]
fn config_alias_overrides_a_builtin() {
    let env = Env::new();
    env.write_config(r#"{"aliases": {"sonnet": ["ollama", "qwen3"]}}"#);
    let out = env.ai().args(["sonnet", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.calls(), ["ollama"]);
    assert_eq!(env.argv("ollama"), args(&["run", "qwen3"]));
}

fn custom_env(prompt: &str) -> Env {
    let env = Env::new();
    env.install("mycli");
    env.write_config(&format!(
        r#"{{"backends": {{"mycli": {{"program": "mycli", "model_arg": "-m", "prompt": "{prompt}", "args": ["--fast"]}}}},
            "aliases": {{"my": ["mycli", "m1"]}}}}"#
    ));
    env
}

#[test]
fn custom_backend_prompt_as_argument() {
    let env = custom_env("arg");
    let out = env.ai().args(["my", "the prompt"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(out.stdout, "reply from mycli\n");
    assert_eq!(
        env.argv("mycli"),
        args(&["--fast", "-m", "m1", "the prompt"])
    );
    assert_eq!(env.stdin_source("mycli"), "/dev/null");

    // provider:model works for custom backends too.
    let out = env.ai().args(["mycli:m2", "x"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("mycli"), args(&["--fast", "-m", "m2", "x"]));
}

#[test]
fn custom_backend_prompt_after_dashdash() {
    let env = custom_env("after-dashdash");
    let out = env.ai().args(["my", "--", "-v please"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.argv("mycli"),
        args(&["--fast", "-m", "m1", "--", "-v please"])
    );
}

#[test]
fn custom_backend_prompt_on_stdin() {
    let env = custom_env("stdin");
    let out = env
        .ai()
        .args(["my", "question"])
        .write_stdin("context\n")
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("mycli"), args(&["--fast", "-m", "m1"]));
    assert_eq!(env.stdin_text("mycli"), "context\n\nquestion");
}

#[test]
fn custom_backend_model_arg_with_equals_and_extra_args() {
    let env = Env::new();
    env.install("llm");
    env.write_config(
        r#"{"backends": {"llm": {"program": "llm", "model_arg": "--model=",
              "yolo_args": ["--no-confirm"], "install": "pipx install llm"}},
            "aliases": {"l": ["llm", "gpt-4o"]}}"#,
    );
    let out = env.ai().args(["yolo", "l", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("llm"), args(&["--model=gpt-4o", "--no-confirm"]));
    assert_eq!(env.stdin_text("llm"), "hi");

    // Its own install hint when missing.
    env.uninstall("llm");
    let env = env.fakes_only_path();
    let out = env.ai().args(["l", "hi"]).run();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.contains("hint: pipx install llm"),
        "{}",
        out.stderr
    );
}

#[test]
fn custom_backend_argument_over_128_kib_is_a_usage_error() {
    for via in ["arg", "after-dashdash"] {
        let env = custom_env(via);
        let out = env.ai().arg("my").write_stdin(big_text(129 * 1024)).run();
        let err = out.stderr;
        assert_eq!(out.status.code(), Some(2), "{via}: {err}");
        assert!(err.contains("error: "), "{err}");
        assert!(err.contains("128 KiB"), "{err}");
        assert!(
            err.contains("hint: ") && err.contains("\"prompt\": \"stdin\""),
            "{err}"
        );
        assert!(env.calls().is_empty(), "{via}: nothing ran");
        assert!(out.stdout.is_empty());
    }
    // On stdin the same prompt is fine.
    let env = custom_env("stdin");
    let text = big_text(129 * 1024);
    let out = env.ai().arg("my").write_stdin(text.clone()).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert!(env.stdin("mycli") == text.as_bytes());
}

#[test]
fn custom_backend_shadows_a_builtin_name() {
    let env = Env::new();
    env.install("my-claude");
    env.write_config(r#"{"backends": {"claude": {"program": "my-claude", "model_arg": "-m"}}}"#);
    let out = env.ai().args(["sonnet", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.calls(), ["my-claude"]);
    assert_eq!(env.argv("my-claude"), args(&["-m", "sonnet"]));
}
