//! Regressions from the second hostile test (of the merged turn engine and fixes): a SIGKILL
//! of `ai` and what the backend started, reserved names in any case, Ctrl+C while waiting for a
//! chat, edge shapes of chat files, retry after rounds, imports, several models with `chat`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn a_sigkill_of_ai_stops_what_the_backend_started() {
    let env = Env::new();
    let marker = env.path("grandchild.pid");
    env.script(
        "claude",
        &format!(
            "\"$SLEEP\" 30 &\necho $! > '{}.tmp' && mv '{0}.tmp' '{0}'\nwait\nexit 0\n",
            marker.display()
        ),
    );
    let mut p = env.spawn(&["sonnet", "hi"]);
    assert!(
        wait_for_file(&marker, Duration::from_secs(20)),
        "the backend never started its child"
    );
    let grandchild = read_pid(&marker);
    signal(p.pid(), libc::SIGKILL);
    let _ = p.wait_status();
    assert!(
        wait_gone(grandchild, Duration::from_secs(10)),
        "the backend's own child outlived a SIGKILL of ai"
    );
}

#[test]
fn reserved_words_are_refused_as_chat_names_in_any_case() {
    let env = Env::echo();
    for name in ["EXPORT", "List", "Chat"] {
        let out = env.run(&["--chat", name, "hello"]).code(2);
        assert!(
            out.error().contains("cannot be a chat name"),
            "{name}: {out:?}"
        );
    }
    let out = env.run(&["chat", "new", "echo", "--name", "SHOW"]).code(2);
    assert!(out.error().contains("cannot be a chat name"), "{out:?}");
    assert!(env.chat_ids().is_empty(), "{:?}", env.chat_ids());
}

#[test]
fn ctrl_c_while_waiting_for_a_chat_says_the_prompt_was_not_saved() {
    let env = Env::empty();
    env.fake("gemini", SLOW_GEMINI);
    let first = env.spawn(&["--chat", "w", "gemini", "first"]);
    env.wait_started("gemini");
    let waiter = env.spawn(&["--chat", "w", "gemini", "WAITER prompt"]);
    wait_for("the second call to wait for the lock", || {
        waiter.stderr_now().contains("is in use by another ai call")
    });
    signal(waiter.pid(), libc::SIGINT);
    let out = waiter.wait();
    assert_eq!(out.code, Some(130), "{out:?}");
    assert!(
        out.stderr.contains("interrupted while waiting for chat w")
            && out.stderr.contains("the prompt was not saved"),
        "{out:?}"
    );
    env.release();
    first.wait().success();
    let all = serde_json::to_string(&env.records("w")).unwrap();
    assert!(!all.contains("WAITER"), "{all}");
}

#[test]
fn a_short_key_is_hidden_in_dry_run_headers() {
    let s = Server::start(vec![]);
    let mut env = Env::for_provider("openai", &s);
    env.set("OPENAI_API_KEY", "abc");
    let out = env
        .run(&["--dry-run", "--no-chat", "openai:gpt-x", "hi"])
        .success();
    assert!(out.stdout.contains("Bearer ***"), "{}", out.stdout);
    assert!(!out.stdout.contains("Bearer abc"), "{}", out.stdout);
}

#[test]
fn several_models_with_the_chat_word_are_refused() {
    let env = Env::echo();
    env.write_config(r#"{"default_alias":"echo","aliases":{"ab1":["echo","echo"]}}"#);
    let out = env.run(&["echo", "chat", "ab1", "hello"]).code(2);
    assert!(out.error().contains("`chat` takes one model"), "{out:?}");
    assert!(env.chat_ids().is_empty());
}

fn import_doc(env: &Env, id: &str) -> Out {
    let doc =
        json!({"type":"chat","v":1,"id":id,"created":"2026-01-01T10:00:00.000Z","records":[]});
    let file = env.project_file("in.json", doc.to_string());
    env.run(&["chat", "import", file.to_str().unwrap()])
}

#[test]
fn import_says_why_a_chat_gets_another_id_and_only_then() {
    let env = Env::echo();
    let out = import_doc(&env, "Work").success();
    assert_eq!(out.stdout.trim(), "work");
    assert!(!out.stderr.contains("exists already"), "{out:?}");
    let out = import_doc(&env, "list").success();
    assert!(
        out.stderr.contains("'list' cannot be a chat name"),
        "{out:?}"
    );
    let out = import_doc(&env, "work").success();
    assert!(out.stderr.contains("chat work exists already"), "{out:?}");
}

#[test]
fn import_refuses_a_file_larger_than_any_export() {
    let env = Env::echo();
    let file = env.project_file("huge.json", b"{");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_len(257 * 1024 * 1024))
        .unwrap();
    let out = env.run(&["chat", "import", file.to_str().unwrap()]).code(2);
    assert!(out.error().contains("larger than 256 MiB"), "{out:?}");
    assert!(env.chat_ids().is_empty());
}

/// The round of a seeded chat, for `turn`.
fn round(turn: u64, calls: bool) -> Value {
    json!({"type":"round","turn":turn,"round":1,"ts":"2026-01-01T10:00:00.500Z","text":"Looking it up.",
           "calls": if calls { json!([{"id":"c1","name":"search","arguments":"{}"}]) } else { json!([]) },
           "results": if calls { json!([{"id":"c1","name":"search","content":"found"}]) } else { json!([]) }})
}

#[test]
fn chat_show_prints_the_text_of_a_round() {
    let env = Env::echo();
    env.write_chat(
        "S1W",
        &[
            header("S1W", json!({"model":"echo"})),
            message("user", "q", 1),
            round(1, true),
            message("assistant", "a", 1),
        ],
    );
    let out = env.run(&["chat", "show", "S1W"]).success();
    assert!(out.stdout.contains("Looking it up."), "{}", out.stdout);
}

#[test]
fn retry_resends_a_turn_cut_short_after_its_rounds() {
    let env = Env::echo();
    env.write_chat(
        "R2W",
        &[
            header("R2W", json!({"model":"echo"})),
            message("user", "q1", 1),
            message("assistant", "a1", 1),
            message("user", "the question", 2),
            round(2, true),
        ],
    );
    let out = env.run(&["chat", "retry", "R2W"]).success();
    // Sent again as the new prompt, after turn 1 only (the cut turn is replaced).
    assert_eq!(out.stdout, echo_reply("the question", 2));
    let last = env.messages("R2W").pop().unwrap();
    assert_eq!(last["role"], "assistant");
    assert_eq!(last["turn"], 3);
}

#[test]
fn a_new_chat_whose_first_write_fails_is_not_left_behind() {
    let env = Env::echo();
    // 4 blocks of 512 bytes: room for the header, not for a 20,000-character turn.
    let big = "q".repeat(20_000);
    let out = super::storage::run_limited(&env, 4, &[&big]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("was not saved"), "{out:?}");
    assert!(env.chat_ids().is_empty(), "{:?}", env.chat_ids());
}

/// An echo chat whose last assistant message says the conversation is huge, so the overflow
/// policy `fail` refuses every turn; it ends with a pending prompt.
fn overflowing(env: &Env, id: &str) {
    env.write_config(r#"{"default_alias":"echo","chat":{"on_overflow":"fail"}}"#);
    let mut a = message("assistant", "a1", 1);
    a["history_tokens"] = json!(900_000_000u64);
    env.write_chat(
        id,
        &[
            header(id, json!({"model":"echo","system":"old system"})),
            message("user", "q1", 1),
            a,
            json!({"type":"pending","content":"kept prompt","ts":"2026-01-01T10:00:01.000Z",
                   "alias":"echo","provider":"echo","model":"echo","error":"refused"}),
        ],
    );
}

#[test]
fn a_refused_retry_adds_no_copy_and_ends_with_the_footer() {
    let env = Env::echo();
    overflowing(&env, "O1F");
    for _ in 0..2 {
        let out = env.run(&["chat", "retry", "O1F"]).code(2);
        assert!(out.stderr.trim_end().ends_with("[chat: O1F]"), "{out:?}");
    }
    let pending = env
        .records("O1F")
        .iter()
        .filter(|r| r["type"] == "pending")
        .count();
    assert_eq!(pending, 1, "a refused resend keeps the one pending prompt");
}

#[test]
fn a_refused_turn_does_not_change_the_system_prompt() {
    let env = Env::echo();
    overflowing(&env, "O2F");
    env.run(&["--system", "new system", "chat", "O2F", "hello"])
        .code(2);
    assert_eq!(env.header("O2F")["system"], "old system");
}

#[test]
fn a_retried_turn_is_never_sent_again() {
    let env = Env::echo();
    let mut cut = message("assistant", "half an ans", 2);
    cut["interrupted"] = json!(true);
    env.write_chat(
        "T3R",
        &[
            header("T3R", json!({"model":"echo"})),
            message("user", "q1", 1),
            message("assistant", "a1", 1),
            message("user", "q2", 2),
            cut,
        ],
    );
    env.run(&["chat", "retry", "T3R"]).success();
    // q1/a1, then the resent q2 and its reply: turn 2 is gone from what is sent.
    let out = env.run(&["chat", "T3R", "next"]).success();
    assert_eq!(out.stdout, echo_reply("next", 4));
    let all = env.records("T3R");
    let resent = all
        .iter()
        .find(|r| r["role"] == "user" && r["turn"] == 3)
        .unwrap();
    assert_eq!(resent["replaces"], 2);
}

/// A custom backend `f` whose behaviour is set by `$FAKE_STATE/mode`: ok, fail, partial.
fn moody(env: &Env, extra_config: &str) {
    env.write_config(&format!(
        r#"{{"default_alias":"f","backends":{{"fk":{{"program":"moody","prompt":"stdin"}}}},"aliases":{{"f":["fk","m1"]}}{extra_config}}}"#
    ));
    env.fake(
        "moody",
        r#""$CAT" > "$FAKE_STATE/last_in"
m=$("$CAT" "$FAKE_STATE/mode" 2>/dev/null)
case "$m" in
  fail) exit 1 ;;
  partial) printf 'partial text'; exit 1 ;;
  *) printf 'reply ok\n' ;;
esac"#,
    );
}

fn mode(env: &Env, m: &str) {
    std::fs::write(env.state.join("mode"), m).unwrap();
}

#[test]
fn a_retry_that_fails_then_succeeds_still_replaces_the_cut_turn() {
    let env = Env::empty();
    moody(&env, "");
    mode(&env, "ok");
    env.run(&["f", "--chat", "r9", "Q1"]).success();
    mode(&env, "partial");
    env.run(&["chat", "r9", "Q2"]).code(1);
    mode(&env, "fail");
    env.run(&["chat", "retry", "r9"]).code(1);
    mode(&env, "ok");
    env.run(&["chat", "retry", "r9"]).success();
    env.run(&["chat", "r9", "Q3"]).success();
    let sent = std::fs::read_to_string(env.state.join("last_in")).unwrap();
    assert_eq!(sent.matches("Q2").count(), 1, "{sent}");
    assert!(!sent.contains("partial text"), "{sent}");
}

#[test]
fn a_refused_retry_of_a_cut_turn_writes_nothing_and_does_not_count_that_turn() {
    let env = Env::empty();
    moody(
        &env,
        r#","context_tokens":{"f":300},"chat":{"on_overflow":"fail"}"#,
    );
    mode(&env, "ok");
    env.run(&["f", "--chat", "o2", &format!("Q1 {}", "a".repeat(300))])
        .success();
    mode(&env, "partial");
    env.run(&["chat", "o2", &format!("Q2 {}", "b".repeat(330))])
        .code(1);
    let before = env.bytes("o2");
    mode(&env, "ok");
    // Without the turn it replaces the retry fits: it goes out.
    env.run(&["chat", "retry", "o2"]).success();
    let after = env.records("o2");
    assert!(
        !after.iter().any(|r| r["type"] == "pending"),
        "nothing pending was added: {after:?}"
    );
    assert!(env.bytes("o2").len() > before.len());
}

#[test]
fn a_first_prompt_too_big_for_the_model_follows_the_overflow_policy() {
    let env = Env::empty();
    moody(
        &env,
        r#","context_tokens":{"f":300},"chat":{"on_overflow":"fail"}"#,
    );
    let big = "y".repeat(4000);
    let out = env.run(&["f", &big]).code(2);
    assert!(out.error().contains("the prompt alone is about"), "{out:?}");
    assert!(env.chat_ids().is_empty(), "nothing was written");
    let out = env.run(&["--no-chat", "f", &big]).code(2);
    assert!(out.error().contains("the prompt alone"), "{out:?}");
    // With the default policy it goes, with a warning.
    moody(&env, r#","context_tokens":{"f":300}"#);
    let out = env.run(&["f", &big]).success();
    assert!(out.stderr.contains("the prompt alone is about"), "{out:?}");
}
