//! The grammar's hard cases: options before a command word, aliases shaped like chat IDs, mode
//! words inside a prompt, and an unknown first word when no default model is set.

use std::process::Output;

use crate::util::{Env, stderr, stdout};

/// A world whose default model is `sonnet` (the fake claude): a command word that was taken for
/// a prompt would reach claude.
fn with_default() -> Env {
    let env = Env::new();
    env.write_config(r#"{"default_alias": "sonnet"}"#);
    env
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.ai().args(args).output().unwrap()
}

/// A new chat with the echo model; its ID.
fn new_chat(env: &Env) -> String {
    let out = run(env, &["chat", "new", "echo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

fn assert_no_prompt_sent(env: &Env, args: &[&str], out: &Output) {
    assert!(
        env.calls().is_empty(),
        "{args:?} sent a prompt to {:?}; stderr: {}",
        env.calls(),
        stderr(out)
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
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    assert_eq!(stdout(&quiet), stdout(&plain));

    let json = run(&env, &["--json", "list"]);
    assert_no_prompt_sent(&env, &["--json", "list"], &json);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    assert_eq!(stdout(&json), stdout(&run(&env, &["list", "--json"])));

    let json = run(&env, &["--json", "chat", "list"]);
    assert_no_prompt_sent(&env, &["--json", "chat", "list"], &json);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    assert!(
        stdout(&json).trim_start().starts_with('['),
        "{}",
        stdout(&json)
    );

    // Options between `chat` and its action, too.
    let json = run(&env, &["chat", "--json", "show", &id]);
    assert_no_prompt_sent(&env, &["chat", "--json", "show"], &json);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    assert!(
        stdout(&json).contains(&format!("\"id\":\"{id}\""))
            || stdout(&json).contains(&format!("\"id\": \"{id}\"")),
        "{}",
        stdout(&json)
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
        assert_eq!(out.status.code(), Some(0), "{form:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{form:?}: -q silences notices");
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
        assert_eq!(out.status.code(), Some(2), "{form:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("error:"),
            "{form:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty(), "{form:?}");
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
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("hello there"), "{}", stdout(&out));
    assert_eq!(stderr(&out), "");
    let out = run(&env, &["-q", "reply", "again"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("again"), "{}", stdout(&out));
}

#[test]
fn aliases_with_digits_work_after_chat() {
    let env = Env::new();
    env.write_config(
        r#"{"aliases": {"qwen3": ["claude", "qwen3"], "llama3": ["claude", "llama3"], "phi4": ["claude", "phi4"]}}"#,
    );
    for alias in ["qwen3", "llama3", "phi4"] {
        let out = run(&env, &["chat", alias, "hi"]);
        assert_eq!(out.status.code(), Some(0), "{alias}: {}", stderr(&out));
        assert_eq!(env.calls().last().map(String::as_str), Some("claude"));
        assert_eq!(env.stdin_text("claude"), "hi", "{alias}");
    }
    // glm5 is built in (an HTTP provider): the dry run shows it was taken for a model.
    let out = env
        .ai()
        .env("ZHIPU_API_KEY", "test-key-not-real")
        .args(["--dry-run", "chat", "glm5", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("glm-5"), "{}", stdout(&out));
    // An existing chat of that name still wins.
    let out = run(&env, &["chat", "new", "echo", "--name", "phi4"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let before = env.calls().len();
    let out = run(&env, &["chat", "phi4", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        env.calls().len(),
        before,
        "the echo chat answered, not claude"
    );
    // An ID-shaped word that is neither a chat nor an alias is still not found.
    let out = run(&env, &["chat", "Z9Z", "hi"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
}

#[test]
fn an_unknown_first_word_without_a_default_names_the_word() {
    let env = Env::new();
    let out = run(&env, &["nosuchmodelzz", "x"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("'nosuchmodelzz' is not a known model"),
        "{err}"
    );
    assert!(err.contains("ai default"), "{err}");
    // Close aliases are offered.
    let out = run(&env, &["sonnnet", "explain", "this"]);
    let err = stderr(&out);
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
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(env.stdin_text("claude"), prompt, "{args:?}");
        assert_eq!(stdout(&out), "reply from claude\n", "{args:?}: not a mode");
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
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "echo hi\n");
    assert_eq!(
        stdout(&run(&env, &["sonnet", "--cmd", "say hi"])),
        "echo hi\n"
    );
    // After the model, before one quoted prompt: a mode too (it cannot be prompt text there).
    assert_eq!(
        stdout(&run(&env, &["sonnet", "cmd", "say hi"])),
        "echo hi\n"
    );
}
