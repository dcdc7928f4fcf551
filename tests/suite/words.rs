//! The grammar's hard cases: options before a command word, aliases shaped like chat IDs, mode
//! words inside a prompt, and an unknown first word when no default model is set.

use crate::support::{Env, Out};

/// A world whose default model is `sonnet` (the fake claude): a command word that was taken for
/// a prompt would reach claude.
fn with_default() -> Env {
    let env = Env::new();
    env.write_config(r#"{"default_alias": "sonnet"}"#);
    env
}

fn run(env: &Env, args: &[&str]) -> Out {
    env.ai().args(args).run()
}

/// A new chat with the echo model; its ID.
fn new_chat(env: &Env) -> String {
    let out = run(env, &["chat", "new", "echo"]);
    assert!(out.status.success(), "{}", out.stderr);
    out.stdout.trim().to_owned()
}

fn assert_no_prompt_sent(env: &Env, args: &[&str], out: &Out) {
    assert!(
        env.calls().is_empty(),
        "{args:?} sent a prompt to {:?}; stderr: {}",
        env.calls(),
        out.stderr
    );
}

#[test]
fn options_before_a_command_word_apply_to_the_command() {
    let env = with_default();
    let id = new_chat(&env);
    let other = new_chat(&env);

    // Each form works as it does with the option after the command word.
    let plain = run(&env, &["chat", "list"]);
    let quiet = run(&env, &["-q", "chat", "list"]);
    assert_no_prompt_sent(&env, &["-q", "chat", "list"], &quiet);
    assert_eq!(quiet.status.code(), Some(0), "{}", quiet.stderr);
    assert_eq!(quiet.stdout, plain.stdout);

    let json = run(&env, &["--json", "list"]);
    assert_no_prompt_sent(&env, &["--json", "list"], &json);
    assert_eq!(json.status.code(), Some(0), "{}", json.stderr);
    assert_eq!(json.stdout, run(&env, &["list", "--json"]).stdout);

    let json = run(&env, &["--json", "chat", "list"]);
    assert_no_prompt_sent(&env, &["--json", "chat", "list"], &json);
    assert_eq!(json.status.code(), Some(0), "{}", json.stderr);
    assert!(json.stdout.trim_start().starts_with('['), "{}", json.stdout);

    // Options between `chat` and its action, too.
    let json = run(&env, &["chat", "--json", "show", &id]);
    assert_no_prompt_sent(&env, &["chat", "--json", "show"], &json);
    assert_eq!(json.status.code(), Some(0), "{}", json.stderr);
    assert!(
        json.stdout.contains(&format!("\"id\":\"{id}\""))
            || json.stdout.contains(&format!("\"id\": \"{id}\"")),
        "{}",
        json.stdout
    );

    let forms: Vec<Vec<&str>> = vec![
        vec!["-q", "chat", "show", &id],
        vec!["-q", "chat", "export", &id],
        vec!["-q", "chat", "rename", &id, "a", "title"],
        vec!["-q", "chat", "gc", "--older-than", "30d"],
        vec!["-q", "--dry-run", "chat", "gc", "--older-than", "1s"],
        vec!["chat", "-q", "list"],
        vec!["-q", "chat", "new", "echo"],
        vec!["-q", "default"],
        vec!["-q", "completions", "bash"],
        vec!["-q", "chat", "--no-wait", "delete", &other],
        vec!["-q", "help"],
        vec!["--json", "chat", "help", "list"],
    ];
    for form in &forms {
        let out = run(&env, form);
        assert_no_prompt_sent(&env, form, &out);
        assert_eq!(out.status.code(), Some(0), "{form:?}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{form:?}: -q silences notices");
    }
    assert!(
        !env.home
            .join("chats")
            .join(format!("{other}.jsonl"))
            .exists(),
        "-q chat delete deleted the chat"
    );
}

#[test]
fn an_option_a_command_does_not_take_is_a_usage_error_never_a_prompt() {
    let env = with_default();
    let id = new_chat(&env);
    for form in [
        &["--system", "x", "chat", "list"][..],
        &["-F", "a.txt", "chat", "show", &id],
        &["--timeout", "5", "list"],
        &["--yolo", "chat", "delete", &id],
    ] {
        let out = run(&env, form);
        assert_no_prompt_sent(&env, form, &out);
        assert_eq!(out.status.code(), Some(2), "{form:?}: {}", out.stderr);
        assert!(out.stderr.contains("error:"), "{form:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{form:?}");
    }
    assert!(
        env.home.join("chats").join(format!("{id}.jsonl")).exists(),
        "nothing was deleted"
    );
}

#[test]
fn a_chat_action_word_after_chat_is_never_a_prompt() {
    let env = with_default();
    // `ai sonnet chat delete X` is not a new chat with the prompt "delete X".
    for form in [
        &["sonnet", "chat", "delete", "K7Q"][..],
        &["sonnet", "chat", "list"],
    ] {
        let out = run(&env, form);
        assert_no_prompt_sent(&env, form, &out);
        assert_ne!(out.status.code(), Some(0), "{form:?}");
    }
}

#[test]
fn options_before_chat_continue_a_chat() {
    let env = Env::new();
    let id = new_chat(&env);
    let out = run(&env, &["-q", "chat", &id, "hello there"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("hello there"), "{}", out.stdout);
    assert_eq!(out.stderr, "");
    let out = run(&env, &["-q", "reply", "again"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("again"), "{}", out.stdout);
}

#[test]
fn aliases_with_digits_work_after_chat() {
    let env = Env::new();
    env.write_config(
        r#"{"aliases": {"qwen3": ["claude", "qwen3"], "llama3": ["claude", "llama3"], "phi4": ["claude", "phi4"]}}"#,
    );
    for alias in ["qwen3", "llama3", "phi4"] {
        let out = run(&env, &["chat", alias, "hi"]);
        assert_eq!(out.status.code(), Some(0), "{alias}: {}", out.stderr);
        assert_eq!(env.calls().last().map(String::as_str), Some("claude"));
        assert_eq!(env.stdin_text("claude"), "hi", "{alias}");
    }
    // glm5 is built in (an HTTP provider): the dry run shows it was taken for a model.
    let out = env
        .ai()
        .env("ZHIPU_API_KEY", "test-key-not-real")
        .args(["--dry-run", "chat", "glm5", "hi"])
        .run();
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("glm-5"), "{}", out.stdout);
    // An existing chat of that name still wins.
    let out = run(&env, &["chat", "new", "echo", "--name", "phi4"]);
    assert!(out.status.success(), "{}", out.stderr);
    let before = env.calls().len();
    let out = run(&env, &["chat", "phi4", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(
        env.calls().len(),
        before,
        "the echo chat answered, not claude"
    );
    // An ID-shaped word that is neither a chat nor an alias is still not found.
    let out = run(&env, &["chat", "Z9Z", "hi"]);
    assert_eq!(out.status.code(), Some(4), "{}", out.stderr);
}

#[test]
fn an_unknown_first_word_without_a_default_names_the_word() {
    let env = Env::new();
    let out = run(&env, &["nosuchmodelzz", "x"]);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    let err = out.stderr;
    assert!(
        err.contains("'nosuchmodelzz' is not a known model"),
        "{err}"
    );
    assert!(err.contains("ai default"), "{err}");
    // Close aliases are offered.
    let out = run(&env, &["sonnnet", "explain", "this"]);
    let err = out.stderr;
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("sonnet"), "{err}");
    assert!(env.calls().is_empty());
}

#[test]
fn mode_words_inside_the_prompt_are_prompt_text() {
    let env = Env::new();
    for (args, prompt) in [
        (&["sonnet", "run", "the", "tests"][..], "run the tests"),
        (
            &["sonnet", "cmd", "line", "tools", "are", "great"],
            "cmd line tools are great",
        ),
        (&["sonnet", "json", "is", "a", "format"], "json is a format"),
        (&["sonnet", "yolo", "means"], "yolo means"),
    ] {
        let out = run(&env, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", out.stderr);
        assert_eq!(env.stdin_text("claude"), prompt, "{args:?}");
        assert_eq!(out.stdout, "reply from claude\n", "{args:?}: not a mode");
        assert!(
            !env.argv("claude")
                .iter()
                .any(|a| a.contains("skip-permissions")),
            "{args:?}: not yolo"
        );
    }
    // Before the model, a mode word is a mode.
    env.reply("claude", "```sh\necho hi\n```\n");
    let out = run(&env, &["cmd", "sonnet", "say hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "echo hi\n");
    assert_eq!(
        run(&env, &["sonnet", "--cmd", "say hi"]).stdout,
        "echo hi\n"
    );
    // After the model, before one quoted prompt: a mode too (it cannot be prompt text there).
    assert_eq!(run(&env, &["sonnet", "cmd", "say hi"]).stdout, "echo hi\n");
}
