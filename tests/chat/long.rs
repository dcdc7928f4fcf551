//! Long conversations: context sizes, the 85% warning, `chat.on_overflow`, compaction,
//! `--stats`, export and import.

use serde_json::{Value, json};

use crate::support::{Env, header, message};

/// A fake `claude` that keeps each call's stdin (claude.N.stdin) and answers `REPLY-N`, or
/// `SUMMARY-N` when asked to summarize.
const RECORDING_CLAUDE: &str = r#"n=$(ls "$FAKE_STATE" | grep -c '^claude\.')
/bin/cat > "$FAKE_STATE/claude.$n.stdin"
if /bin/grep -q 'Summarize the conversation below' "$FAKE_STATE/claude.$n.stdin"; then
  echo "SUMMARY-$n"
else
  echo "REPLY-$n"
fi
"#;

fn stdin_of(env: &Env, n: usize) -> String {
    std::fs::read_to_string(env.state.join(format!("claude.{n}.stdin"))).unwrap_or_default()
}

/// A chat of `turns` exchanges with sonnet; the last reply carries `history_tokens`.
fn sonnet_chat(env: &Env, id: &str, turns: u64, history_tokens: u64) {
    let mut recs = vec![header(id, json!({"model": "sonnet"}))];
    for t in 1..=turns {
        let mut u = message("user", &format!("old question {t}"), t);
        let mut a = message("assistant", &format!("old answer {t}"), t);
        for r in [&mut u, &mut a] {
            r["alias"] = json!("sonnet");
            r["provider"] = json!("claude");
            r["model"] = json!("sonnet");
        }
        if t == turns {
            a["history_tokens"] = json!(history_tokens);
        }
        recs.push(u);
        recs.push(a);
    }
    env.write_chat(id, &recs);
}

#[test]
fn the_warning_starts_past_85_percent_of_the_context_with_three_choices() {
    let env = Env::empty();
    env.fake("claude", RECORDING_CLAUDE);
    env.write_config(r#"{"context_tokens": {"sonnet": 1000}}"#);
    // 840 earlier + "hi" (1 + 4 overhead) = 845: 84.5%, no warning.
    sonnet_chat(&env, "K1A", 2, 840);
    let out = env.run(&["chat", "K1A", "hi"]).success();
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    // 846 + 5 = 851: past 85%.
    sonnet_chat(&env, "K2A", 2, 846);
    let out = env.run(&["chat", "K2A", "hi"]).success();
    let err = &out.stderr;
    assert!(
        err.contains(
            "warning: chat K2A is about 851 estimated tokens, 85% of the 1000 that sonnet accepts"
        ),
        "{err}"
    );
    assert!(err.contains("nothing to do"), "{err}");
    assert!(err.contains("ai chat compact K2A"), "{err}");
    assert!(err.contains("ai sonnet chat \"…\""), "{err}");
    // The turn went through and the new count was stored.
    let msgs = env.messages("K2A");
    let last = msgs.last().unwrap();
    assert_eq!(last["content"], "REPLY-1\n");
    assert!(last["history_tokens"].as_u64().unwrap() > 846);
}

#[test]
fn the_window_never_exceeds_what_the_model_accepts() {
    let env = Env::echo();
    env.write_config(
        r#"{"default_alias":"echo","context_tokens":{"echo":100},"chat":{"window_tokens":8000}}"#,
    );
    let id = env.start("first");
    let out = env.run(&["chat", &id, &"x".repeat(200)]).success();
    assert!(
        out.stderr.contains("window of 75 estimated tokens"),
        "{}",
        out.stderr
    );
}

#[test]
fn on_overflow_fail_refuses_the_turn_and_keeps_the_prompt() {
    let env = Env::empty();
    env.fake("claude", RECORDING_CLAUDE);
    env.write_config(r#"{"context_tokens": {"sonnet": 1000}, "chat": {"on_overflow": "fail"}}"#);
    sonnet_chat(&env, "F1X", 6, 900);
    let out = env.run(&["chat", "F1X", "the new question"]).code(2);
    assert!(
        out.stderr.contains("error: chat F1X is about"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("ai chat compact F1X"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
    let recs = env.records("F1X");
    let last = recs.last().unwrap();
    assert_eq!(last["type"], "pending");
    assert_eq!(last["content"], "the new question");
    assert!(stdin_of(&env, 0).is_empty(), "no backend call was made");
    // Compact, then the kept prompt goes out.
    env.run(&["chat", "compact", "F1X", "--keep", "2"])
        .success();
    let out = env.run(&["chat", "retry", "F1X"]).success();
    assert_eq!(out.stdout, "REPLY-1\n");
    assert!(stdin_of(&env, 1).contains("the new question"));
}

#[test]
fn on_overflow_compact_summarizes_before_sending() {
    let env = Env::empty();
    env.fake("claude", RECORDING_CLAUDE);
    env.write_config(r#"{"context_tokens": {"sonnet": 1000}, "chat": {"on_overflow": "compact"}}"#);
    sonnet_chat(&env, "C1X", 6, 900);
    let out = env.run(&["chat", "C1X", "new question"]).success();
    assert!(
        out.stderr.contains("summarizing older turns first"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "REPLY-1\n");
    // Call 0 summarized turns 1–2 (6 turns, 4 kept); call 1 sent the summary, not those turns.
    assert!(stdin_of(&env, 0).contains("old question 1"));
    let sent = stdin_of(&env, 1);
    assert!(sent.contains("SUMMARY-0"), "{sent}");
    assert!(
        !sent.contains("old question 1") && !sent.contains("old question 2"),
        "{sent}"
    );
    assert!(
        sent.contains("old question 3") && sent.contains("new question"),
        "{sent}"
    );
}

#[test]
fn compact_keeps_the_messages_and_sends_the_summary_in_their_place() {
    let env = Env::empty();
    env.fake("claude", RECORDING_CLAUDE);
    sonnet_chat(&env, "S1X", 6, 100);
    let out = env
        .run(&["chat", "compact", "S1X", "--keep", "2"])
        .success();
    assert_eq!(out.stdout, "SUMMARY-0\n");
    assert!(
        out.stderr.contains("turns 1–4 are now one summary"),
        "{}",
        out.stderr
    );
    let asked = stdin_of(&env, 0);
    for t in 1..=4 {
        assert!(asked.contains(&format!("old question {t}")), "{asked}");
    }
    assert!(!asked.contains("old question 5"), "{asked}");
    // Every message is still on disk; the summary is a record and in the header.
    let recs = env.records("S1X");
    assert_eq!(recs.iter().filter(|r| r["type"] == "message").count(), 12);
    let summary = recs.iter().find(|r| r["type"] == "summary").unwrap();
    assert_eq!(summary["through_turn"], 4);
    assert_eq!(summary["content"], "SUMMARY-0");
    assert_eq!(env.header("S1X")["summary"]["content"], "SUMMARY-0");
    // The next turn sends system+summary, turns 5–6, the prompt; not turns 1–4.
    env.run(&["chat", "S1X", "next one"]).success();
    let sent = stdin_of(&env, 1);
    assert!(
        sent.contains("SUMMARY-0") && sent.contains("turns 1–4"),
        "{sent}"
    );
    assert!(
        sent.contains("old question 5") && sent.contains("old answer 6"),
        "{sent}"
    );
    for t in 1..=4 {
        assert!(
            !sent.contains(&format!("old question {t}\n")),
            "turn {t} was sent:\n{sent}"
        );
    }
    // `chat show` shows the summary among the messages.
    let shown = env.run(&["chat", "show", "S1X"]).success();
    assert!(
        shown.stdout.contains("summary of turns 1–4"),
        "{}",
        shown.stdout
    );
}

#[test]
fn compact_with_too_little_to_summarize_changes_nothing() {
    let env = Env::empty();
    env.fake("claude", RECORDING_CLAUDE);
    sonnet_chat(&env, "N1X", 2, 10);
    let before = env.bytes("N1X");
    let out = env.run(&["chat", "compact", "N1X"]).success();
    assert!(
        out.stderr.contains("nothing to summarize"),
        "{}",
        out.stderr
    );
    assert_eq!(env.bytes("N1X"), before);
    assert!(stdin_of(&env, 0).is_empty());
    env.run(&["chat", "compact", "NOPE1"]).code(4);
}

#[test]
fn compact_failure_writes_nothing() {
    let env = Env::empty();
    env.fake("claude", "echo 'Not logged in' >&2\nexit 1\n");
    sonnet_chat(&env, "E1X", 6, 10);
    let before = env.bytes("E1X");
    let out = env.run(&["chat", "compact", "E1X"]).code(1);
    assert!(out.stderr.contains("Not logged in"), "{}", out.stderr);
    assert_eq!(env.bytes("E1X"), before);
}

#[test]
fn stats_count_messages_tokens_usage_and_models() {
    let env = Env::echo();
    let mut a1 = message("assistant", "hello there", 1);
    a1["usage"] = json!({"input": 10, "output": 3});
    let mut a2 = message("assistant", "again", 2);
    a2["alias"] = json!("sonnet");
    a2["usage"] = json!({"input": 20, "output": 4});
    a2["interrupted"] = json!(true);
    env.write_chat(
        "T1X",
        &[
            header("T1X", json!({})),
            message("user", "hi", 1),
            a1,
            message("user", "more", 2),
            a2,
            json!({"type":"pending","content":"lost","ts":"2026-01-01T10:00:00.000Z","error":"boom"}),
        ],
    );
    let out = env
        .run(&["chat", "show", "T1X", "--stats", "--json"])
        .success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["messages"], 4);
    assert_eq!(v["turns"], 2);
    assert_eq!(v["usage_input"], 30);
    assert_eq!(v["usage_output"], 7);
    assert_eq!(v["models"], json!({"echo": 1, "sonnet": 1}));
    assert_eq!(v["pending"], 1);
    assert_eq!(v["interrupted"], 1);
    // hi(1) + hello there(3) + more(1) + again(2), each + 4 overhead
    assert_eq!(v["estimated_tokens"], 23);
    let text = env
        .run(&["chat", "show", "T1X", "--stats"])
        .success()
        .stdout;
    assert!(text.contains("messages: 4 in 2 turns"), "{text}");
    assert!(text.contains("30 in, 7 out"), "{text}");
}

#[test]
fn export_and_import_round_trip_in_both_formats() {
    let env = Env::echo();
    let id = env.start("first question");
    env.run(&[
        "chat",
        &id,
        "a second line\n\nwith blank lines\nand --> arrows\n",
    ])
    .success();
    env.run(&["chat", "rename", &id, "round trip"]).success();
    let json_before = env
        .run(&["chat", "export", &id, "--format", "json"])
        .success()
        .stdout;
    let md = env.run(&["chat", "export", &id]).success().stdout;
    assert!(
        md.contains("# round trip") && md.contains("### You"),
        "{md}"
    );

    for (format, text) in [("md", &md), ("json", &json_before)] {
        let file = env.project.join(format!("export.{format}"));
        std::fs::write(&file, text).unwrap();
        env.run(&["chat", "delete", &id]).success();
        let out = env
            .run(&["chat", "import", file.to_str().unwrap()])
            .success();
        assert_eq!(out.stdout, format!("{id}\n"), "keeps its ID when free");
        let after = env
            .run(&["chat", "export", &id, "--format", "json"])
            .success()
            .stdout;
        assert_eq!(after, json_before, "{format} round trip");
    }
    // Importing beside the original gives a new ID and the same content.
    let file = env.project.join("export.json");
    let out = env
        .run(&["chat", "import", file.to_str().unwrap()])
        .success();
    let other = out.stdout.trim().to_owned();
    assert_ne!(other, id);
    assert!(
        out.stderr.contains(&format!("imported as {other}")),
        "{}",
        out.stderr
    );
    assert_eq!(env.records(&other)[1..], env.records(&id)[1..]);
    // It continues like any chat.
    env.run(&["chat", &other, "continue"]).success();
}

#[test]
fn import_refuses_what_is_not_an_export() {
    let env = Env::echo();
    let file = env.project.join("notes.txt");
    std::fs::write(&file, "just some notes\n").unwrap();
    let out = env.run(&["chat", "import", file.to_str().unwrap()]).code(2);
    assert!(
        out.stderr.contains("is not a chat export"),
        "{}",
        out.stderr
    );
    assert!(env.chat_ids().is_empty());
    env.run(&["chat", "import", "/nonexistent/x.json"]).code(2);
}
