//! Regressions found in review: each test is one way a turn or a chat could have been lost,
//! duplicated, or left unreadable.

use serde_json::json;

use crate::support::{Env, header, message};

/// A whole last record that only lacks its newline is kept with its prompt.
#[test]
fn a_last_record_without_its_newline_is_kept() {
    let env = Env::echo();
    let id = env.start("first question");
    let path = env.chat_path(&id);
    let mut bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    std::fs::write(&path, &bytes).unwrap();
    let out = env.run(&["chat", &id, "second"]).success();
    assert!(out.stdout.contains("2 earlier messages"), "{}", out.stdout);
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[0]["content"], "first question");
    assert!(std::fs::read(&path).unwrap().ends_with(b"\n"));
}

/// A failing backend during automatic compaction keeps the turn's prompt for `chat retry`.
#[test]
fn a_failed_automatic_compaction_keeps_the_prompt() {
    let env = Env::empty();
    env.fake("claude", "echo 'Not logged in' >&2\nexit 1\n");
    env.write_config(r#"{"context_tokens": {"sonnet": 1000}, "chat": {"on_overflow": "compact"}}"#);
    let mut recs = vec![header("P1X", json!({"model": "sonnet"}))];
    for t in 1..=6 {
        let mut u = message("user", &format!("q{t}"), t);
        let mut a = message("assistant", &format!("a{t}"), t);
        for r in [&mut u, &mut a] {
            r["alias"] = json!("sonnet");
            r["provider"] = json!("claude");
            r["model"] = json!("sonnet");
        }
        a["history_tokens"] = json!(900);
        recs.push(u);
        recs.push(a);
    }
    env.write_chat("P1X", &recs);
    env.run(&["chat", "P1X", "PRECIOUS PROMPT"]).code(1);
    let last = env.records("P1X").pop().unwrap();
    assert_eq!(last["type"], "pending");
    assert_eq!(last["content"], "PRECIOUS PROMPT");
}

/// `cmd` tells the model to answer with a command; that instruction is not the chat's system
/// prompt, so later turns of the chat are plain.
#[test]
fn a_mode_instruction_is_not_stored_as_the_system_prompt() {
    let env = Env::echo();
    let out = env.run(&["cmd", "echo", "list files"]).success();
    let id = out.chat_id();
    assert!(
        env.header(&id).get("system").is_none(),
        "{}",
        env.header(&id)
    );
}

/// Parallel first uses of one chat name all land, in one chat.
#[test]
fn parallel_first_uses_of_a_name_all_land() {
    let env = Env::echo();
    let procs: Vec<_> = (0..8)
        .map(|i| env.spawn(&["-q", "--chat", "notes", &format!("msg{i}")]))
        .collect();
    for p in procs {
        p.wait().success();
    }
    let users = env
        .messages("notes")
        .into_iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 8);
}

/// A failed retry adds no copy of the pending prompt; once it is answered, it is no longer
/// offered for retry.
#[test]
fn retry_keeps_one_pending_record_and_answered_ones_are_not_offered() {
    let env = Env::empty();
    env.fake("gemini", "/bin/cat >/dev/null\nif [ -e \"$FAKE_STATE/ok\" ]; then echo fine; else echo down >&2; exit 1; fi\n");
    let out = env.run(&["flash", "important prompt"]).code(1);
    let id = out
        .stderr
        .split("ai chat retry ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    env.run(&["chat", "retry", &id]).code(1);
    let pendings = env
        .records(&id)
        .iter()
        .filter(|r| r["type"] == "pending")
        .count();
    assert_eq!(pendings, 1);
    std::fs::write(env.state.join("ok"), "").unwrap();
    env.run(&["chat", "retry", &id]).success();
    let stats = env
        .run(&["chat", "show", &id, "--stats", "--json"])
        .success();
    let v: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(v["pending"], 0);
    let shown = env.run(&["chat", "show", &id]).success();
    assert!(!shown.stdout.contains("resend with"), "{}", shown.stdout);
}

/// A header longer than the part `chat list` reads first is still read whole.
#[test]
fn list_reads_a_long_header_whole() {
    let env = Env::echo();
    let long = "s".repeat(20_000);
    let id = env
        .run(&["chat", "new", "echo", "--system", &long])
        .success()
        .stdout
        .trim()
        .to_owned();
    env.run(&["chat", &id, &"x".repeat(70_000)]).success();
    let out = env.run(&["chat", "list"]).success();
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with(&id))
        .unwrap()
        .to_owned();
    assert!(!row.contains("damaged"), "{row}");
}

/// An export that would make a broken chat is refused, and nothing is written.
#[test]
fn import_refuses_what_would_break_a_chat() {
    let env = Env::echo();
    let file = env.project.join("bad.json");
    for doc in [
        json!({"v": 2, "id": "N1W", "created": "t", "records": []}),
        json!({"v": 1, "id": "H2H", "created": "t", "records": [{"type": "chat", "v": 1, "id": "X", "created": "t"}]}),
    ] {
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = env.run(&["chat", "import", file.to_str().unwrap()]).code(2);
        assert!(out.stderr.contains("cannot be imported"), "{}", out.stderr);
    }
    assert!(env.chat_ids().is_empty());
    // A trailing prompt without its reply is kept as a pending prompt.
    let doc = json!({"v": 1, "id": "T3T", "created": "t", "records": [
        {"type": "message", "role": "user", "content": "q", "ts": "t", "turn": 1},
        {"type": "message", "role": "assistant", "content": "a", "ts": "t", "turn": 1},
        {"type": "message", "role": "user", "content": "left hanging", "ts": "t", "turn": 2}
    ]});
    std::fs::write(&file, doc.to_string()).unwrap();
    env.run(&["chat", "import", file.to_str().unwrap()])
        .success();
    let last = env.records("T3T").pop().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["content"].as_str()),
        (Some("pending"), Some("left hanging"))
    );
    env.run(&["chat", "T3T", "go on"]).success();
    assert_eq!(env.messages("T3T").len(), 4);
}

/// A reply interrupted before its first word is stored empty, but never sent empty.
#[test]
fn an_empty_stored_reply_is_not_sent_empty() {
    let env = Env::empty();
    env.fake(
        "claude",
        "/bin/cat > \"$FAKE_STATE/claude.stdin\"\necho ok\n",
    );
    let mut a = message("assistant", "", 1);
    a["interrupted"] = json!(true);
    env.write_chat(
        "E2E",
        &[
            header("E2E", json!({"model": "sonnet"})),
            message("user", "q", 1),
            a,
        ],
    );
    env.run(&["chat", "E2E", "sonnet", "next"]).success();
    let sent = std::fs::read_to_string(env.state.join("claude.stdin")).unwrap();
    assert!(sent.contains("(no reply: it was interrupted)"), "{sent}");
}

/// `ai chat new` makes the new chat the one `ai reply` continues.
#[test]
fn reply_continues_a_chat_just_made_with_chat_new() {
    let env = Env::echo();
    env.start("an older chat");
    let id = env.new_chat("echo");
    let out = env.run(&["reply", "hello"]).success();
    assert_eq!(out.chat_id(), id);
}

/// A chat name is one chat whatever case it is typed in.
#[test]
fn a_named_chat_is_found_in_any_case() {
    let env = Env::echo();
    let id = env
        .run(&["--chat", "Work-Notes", "one"])
        .success()
        .chat_id();
    assert_eq!(id, "work-notes");
    env.run(&["--chat", "WORK-NOTES", "two"]).success();
    let out = env.run(&["chat", "work-Notes", "three"]).success();
    assert!(out.stdout.contains("4 earlier messages"), "{}", out.stdout);
    assert_eq!(env.chat_ids(), vec!["work-notes".to_owned()]);
}
