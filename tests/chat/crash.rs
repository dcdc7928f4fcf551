//! Crashes, torn writes, damaged files, Ctrl+C, and a delete racing a turn.

use crate::support::{Env, SLOW_GEMINI, echo_reply, message, signal, wait_for};

const TORN: &[u8] = br#"{"type":"message","ro"#;

#[test]
fn a_killed_turn_leaves_a_chat_that_loads() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let id = env.start("one");
    env.run(&["chat", &id, "two"]).success();
    let before = env.bytes(&id);

    let mut p = env.spawn(&["chat", &id, "gemini", "doomed question"]);
    let fake = env.wait_started("gemini");
    p.kill();
    assert_eq!(p.wait().code, None, "killed by SIGKILL");
    assert_eq!(env.bytes(&id), before, "every completed turn, nothing else");

    // The orphaned backend still runs, yet the chat is free at once (the lock died with ai).
    let out = env.run(&["chat", &id, "--no-wait", "three"]).success();
    assert_eq!(out.stdout, echo_reply("three", 4));
    let out = env.run(&["chat", "show", &id]).success();
    for text in ["one", "two", "three"] {
        assert!(out.stdout.contains(text), "{}", out.stdout);
    }
    assert_eq!(env.messages(&id).len(), 6);

    // Killed while starting a new chat: the chat holds its header, and loads.
    let known = env.chat_ids();
    let mut p = env.spawn(&["gemini", "another doomed question"]);
    let fake2 = env.wait_started("gemini");
    p.kill();
    assert_eq!(p.wait().code, None);
    let fresh: Vec<String> = env
        .chat_ids()
        .into_iter()
        .filter(|i| !known.contains(i))
        .collect();
    assert_eq!(fresh.len(), 1, "{fresh:?}");
    let new = &fresh[0];
    assert_eq!(env.records(new).len(), 1);
    env.run(&["chat", "show", new]).success();
    env.run(&["chat", "list"]).success();
    let out = env.run(&["chat", new, "echo", "hello again"]).success();
    assert_eq!(out.stdout, echo_reply("hello again", 0));
    assert_eq!(env.messages(new).len(), 2);

    for pid in [fake, fake2] {
        signal(-pid, libc::SIGKILL);
    }
}

#[test]
fn a_torn_last_line_is_ignored_then_cut_off() {
    let env = Env::echo();
    let id = env.start("one");
    env.run(&["chat", &id, "two"]).success();
    env.append_raw(&id, TORN);
    let torn = env.bytes(&id);

    // Reading ignores it and changes nothing.
    let out = env.run(&["chat", "show", &id]).success();
    assert!(out.stdout.contains("two") && !out.stdout.contains("\"ro"));
    assert_eq!(env.bytes(&id), torn);

    let out = env.run(&["chat", &id, "three"]).success();
    assert_eq!(out.stdout, echo_reply("three", 4));
    assert!(
        out.stderr.contains(&format!("chat {id}")) && out.stderr.contains("cut short"),
        "a notice: {}",
        out.stderr
    );
    let text = String::from_utf8(env.bytes(&id)).unwrap();
    assert_eq!(text.lines().count(), 7, "{text}");
    let recs = env.records(&id); // every line parses; the file ends with a newline
    assert_eq!(recs.len(), 7);
    assert!(recs[1..].iter().all(|r| r["type"] == "message"), "{text}");
    assert_eq!(recs[5]["content"], "three");

    let out = env.run(&["chat", &id, "four"]).success();
    assert_eq!(
        out.stderr,
        format!("[chat: {id}]\n"),
        "no notice once repaired"
    );
    assert_eq!(env.records(&id).len(), 9);
}

#[test]
fn half_a_turn_at_the_end_is_ignored_then_cut_off() {
    // A user record without its reply can only be what is left of an interrupted write.
    let env = Env::echo();
    let id = env.start("one");
    let mut line = serde_json::to_string(&message("user", "lost half", 2)).unwrap();
    line.push('\n');
    env.append_raw(&id, line.as_bytes());

    let out = env.run(&["chat", &id, "two"]).success();
    assert_eq!(out.stdout, echo_reply("two", 2));
    assert!(out.stderr.contains("cut short"), "{}", out.stderr);
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 4);
    assert!(msgs.iter().all(|m| m["content"] != "lost half"));
    assert_eq!((&msgs[2]["turn"], &msgs[3]["turn"]), (&2.into(), &2.into()));
}

#[test]
fn a_damaged_middle_line_is_an_error_and_nothing_is_rewritten() {
    let env = Env::echo();
    let id = env.start("one");
    env.run(&["chat", &id, "two"]).success();
    let path = env.chat_path(&id);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "{oops");
    let damaged = format!("{}\n", lines.join("\n"));
    std::fs::write(&path, &damaged).unwrap();

    for args in [
        vec!["chat", id.as_str(), "three"],
        vec!["echo", "--chat", id.as_str(), "three"],
        vec!["chat", "show", id.as_str()],
        vec!["chat", "rename", id.as_str(), "new", "title"],
        vec!["chat", id.as_str(), "--system", "new system", "three"],
    ] {
        let out = env.run(&args).code(3);
        assert_eq!(out.stdout, "", "ai {args:?}");
        assert!(
            out.stderr.contains(&path.display().to_string()) && out.stderr.contains("line 3"),
            "ai {args:?} names the file and line: {}",
            out.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            damaged,
            "ai {args:?}"
        );
    }
}

#[test]
fn ctrl_c_saves_the_prompt_and_the_partial_reply() {
    interrupted_turn(libc::SIGINT);
}

#[test]
fn sigterm_saves_the_prompt_and_the_partial_reply() {
    interrupted_turn(libc::SIGTERM);
}

fn interrupted_turn(sig: i32) {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let id = env.start("one");
    let p = env.spawn(&["chat", &id, "gemini", "tell me everything"]);
    env.wait_started("gemini");
    signal(p.pid(), sig);
    // 130 for Ctrl+C, 143 for SIGTERM.
    let out = p.wait().code(128 + sig);
    assert_eq!(out.stdout, "partial answer\n");
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
    assert_eq!(out.chat_id(), id);

    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 4);
    let (user, reply) = (&msgs[2], &msgs[3]);
    assert_eq!(
        (&user["role"], &user["content"]),
        (&"user".into(), &"tell me everything".into())
    );
    assert_eq!(
        (&reply["role"], &reply["content"]),
        (&"assistant".into(), &"partial answer".into())
    );
    assert_eq!(reply["interrupted"], true);
    assert_eq!(reply["alias"], "gemini");
    assert!(user.get("interrupted").is_none_or(|v| v == false));
    assert_eq!((&user["turn"], &reply["turn"]), (&2.into(), &2.into()));

    // The chat goes on, with the interrupted exchange in its history.
    let out = env.run(&["chat", &id, "echo", "go on"]).success();
    assert_eq!(out.stdout, echo_reply("go on", 4));
    let show = env.run(&["chat", "show", &id]).success();
    assert!(show.stdout.contains("(interrupted)"), "{}", show.stdout);
}

#[test]
fn a_delete_waits_for_the_turn_in_progress() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let id = env.start("one");
    let turn = env.spawn(&["chat", &id, "gemini", "slow question"]);
    env.wait_started("gemini");

    let out = env.run(&["chat", "delete", "--no-wait", &id]).code(75);
    assert!(out.stderr.contains("in use"), "{}", out.stderr);
    assert!(env.chat_path(&id).exists());

    let mut delete = env.spawn(&["chat", "delete", &id]);
    wait_for("delete to say it waits", || {
        delete.stderr_now().contains("in use")
    });
    assert!(delete.running());
    assert!(env.chat_path(&id).exists());

    env.release();
    let out = turn.wait().success();
    assert_eq!(out.stdout, "partial answer and the rest\n");
    let out = delete.wait().success();
    assert!(
        out.stderr.contains(&format!("deleted chat {id}")),
        "{}",
        out.stderr
    );
    assert!(!env.chat_path(&id).exists());
    assert!(env.chat_ids().is_empty(), "{:?}", env.chat_files());
}

#[test]
fn a_closed_stdout_keeps_the_turn() {
    // `ai chat ID "…" | head -0`: the reader is gone before the reply is written.
    // The read end is closed before `ai` starts: closed after the spawn, a quick `ai` could
    // write the whole reply into the pipe's buffer first (seen under load).
    let env = Env::echo();
    let id = env.start("one");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = env
        .command(&["chat", &id, "two"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[2]["content"], "two");
    assert_eq!(msgs[3]["role"], "assistant");
    assert_eq!(msgs[3]["interrupted"], true);
    let out = env.run(&["chat", &id, "three"]).success();
    assert_eq!(out.stdout, echo_reply("three", 4));
}

#[test]
fn gc_skips_a_chat_in_use() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let id = env.start("one");
    let turn = env.spawn(&["chat", &id, "gemini", "slow question"]);
    env.wait_started("gemini");
    crate::support::age(
        &env.chat_path(&id),
        std::time::Duration::from_secs(90 * 86_400),
    );

    let out = env.run(&["chat", "gc", "--older-than", "30d"]).success();
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains(&format!("skipped chat {id}")),
        "{}",
        out.stderr
    );
    assert!(env.chat_path(&id).exists());

    env.release();
    turn.wait().success();
    assert_eq!(env.messages(&id).len(), 4);
}
