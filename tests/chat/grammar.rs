//! Every way to start, continue and refuse a chat on the command line.

use crate::support::{
    Env, RECORDING_CLAUDE, RECORDING_CODEX, echo_reply, generated_id, transcript,
};

#[test]
fn a_plain_prompt_is_saved_as_a_new_chat() {
    let env = Env::echo();
    let out = env.run(&["echo", "hi"]).success();
    assert_eq!(
        out.stdout,
        echo_reply("hi", 0),
        "stdout holds only the reply"
    );
    let id = out.chat_id();
    assert!(generated_id(&id) && id.len() == 3, "generated ID: {id}");
    assert_eq!(out.stderr, format!("[chat: {id}]\n"));
    assert_eq!(env.chat_files(), vec![format!("{id}.jsonl")]);

    let recs = env.records(&id);
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert_eq!(recs[0]["type"], "chat");
    assert_eq!(recs[0]["v"], 1);
    assert_eq!(recs[0]["id"], id.as_str());
    assert_eq!(recs[0]["model"], "echo");
    assert_eq!(recs[0]["title"], "hi");
    assert_eq!(
        (&recs[1]["role"], &recs[1]["content"], &recs[1]["turn"]),
        (&"user".into(), &"hi".into(), &1.into())
    );
    assert_eq!(recs[2]["role"], "assistant");
    assert_eq!(recs[2]["content"], out.stdout.as_str());
    assert_eq!(recs[2]["turn"], 1);

    // -q: nothing but the reply, and the chat is still saved.
    let q = env.run(&["-q", "echo", "quiet please"]).success();
    assert_eq!(q.stdout, echo_reply("quiet please", 0));
    assert_eq!(q.stderr, "");
    assert_eq!(env.chat_ids().len(), 2);
}

#[test]
fn every_form_continues_the_same_chat() {
    let env = Env::echo();
    let id = env.run(&["echo", "first"]).success().chat_id();
    let lower = id.to_ascii_lowercase();
    let flag = format!("--chat={id}");
    let forms: Vec<Vec<&str>> = vec![
        vec!["chat", &id],
        vec!["echo", "chat", &id],
        vec!["echo", "--chat", &id],
        vec!["echo", &flag],
        vec!["reply"],
        vec!["echo", "reply"],
        vec!["chat", &lower],
        vec!["echo", "chat", &lower],
        vec!["echo", "--chat", &lower],
    ];
    for (k, form) in forms.iter().enumerate() {
        let prompt = format!("form {k}");
        let mut args = form.clone();
        args.push(&prompt);
        let out = env.run(&args).success();
        // History is sent: every earlier exchange of this chat, and nothing else.
        assert_eq!(out.stdout, echo_reply(&prompt, 2 * (k + 1)), "ai {args:?}");
        assert_eq!(out.chat_id(), id, "ai {args:?}");
    }
    assert_eq!(env.chat_ids(), vec![id.clone()], "no other chat was made");
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 2 * (forms.len() + 1));
    for (i, m) in msgs.iter().enumerate() {
        let turn = (i / 2 + 1) as u64;
        assert_eq!(m["turn"], turn, "message {i}: {m}");
        assert_eq!(m["role"], if i % 2 == 0 { "user" } else { "assistant" });
        if i >= 2 && i % 2 == 0 {
            assert_eq!(m["content"], format!("form {}", i / 2 - 1));
        }
    }
}

#[test]
fn reply_continues_the_most_recently_used_chat() {
    let env = Env::echo();
    let e = env.run(&["reply", "anyone?"]).code(4);
    assert!(
        e.stderr.contains("error:") && e.stderr.contains("hint:"),
        "{}",
        e.stderr
    );
    assert!(env.chat_files().iter().all(|f| !f.ends_with(".jsonl")));

    let a = env.start("chat a");
    let b = env.start("chat b");
    assert_ne!(a, b);
    assert_eq!(env.run(&["reply", "r1"]).success().chat_id(), b);
    env.run(&["chat", &a, "a2"]).success();
    let out = env.run(&["reply", "r2"]).success();
    assert_eq!(out.chat_id(), a);
    assert_eq!(out.stdout, echo_reply("r2", 4));
    assert_eq!(env.messages(&b).len(), 4);
    assert_eq!(env.messages(&a).len(), 6);
}

#[test]
fn a_model_named_for_one_turn_gets_the_history_and_then_stays() {
    let env = Env::echo();
    env.fake("claude", RECORDING_CLAUDE);
    let id = env.start("what is rust");
    env.run(&["chat", &id, "and cargo?"]).success();

    let out = env.run(&["chat", &id, "claude", "summarize"]).success();
    assert_eq!(out.stdout, "claude reply\n");
    assert_eq!(out.chat_id(), id);
    let calls = std::fs::read_to_string(env.state.join("claude.calls")).unwrap();
    assert_eq!(
        calls,
        "--print --model sonnet --output-format stream-json --verbose --include-partial-messages\n"
    );
    // claude got the whole conversation as one transcript, the new prompt last.
    let sent = std::fs::read_to_string(env.state.join("claude.stdin.1")).unwrap();
    let t = transcript(&sent);
    let expect = [
        ("user", "what is rust".to_owned()),
        ("assistant", echo_reply("what is rust", 0)),
        ("user", "and cargo?".to_owned()),
        ("assistant", echo_reply("and cargo?", 2)),
        ("user", "summarize".to_owned()),
    ];
    assert_eq!(t.len(), expect.len(), "{sent}");
    for ((role, content), (want_role, want)) in t.iter().zip(expect.iter()) {
        assert_eq!(
            (role.as_str(), content.as_str()),
            (*want_role, want.trim_end())
        );
    }

    // Each message records who answered it.
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 6);
    for m in &msgs[..4] {
        assert_eq!(
            (&m["alias"], &m["provider"], &m["model"]),
            (&"echo".into(), &"echo".into(), &"echo".into()),
            "{m}"
        );
    }
    for m in &msgs[4..] {
        assert_eq!(
            (&m["alias"], &m["provider"], &m["model"]),
            (&"claude".into(), &"claude".into(), &"sonnet".into()),
            "{m}"
        );
        assert_eq!(m["turn"], 3);
    }
    assert_eq!(msgs[5]["content"], "claude reply\n");

    // The next turn without a model uses the chat's last model.
    let out = env.run(&["chat", &id, "and now?"]).success();
    assert_eq!(out.stdout, "claude reply\n");
    let calls = std::fs::read_to_string(env.state.join("claude.calls")).unwrap();
    assert_eq!(calls.lines().count(), 2);
    let t = transcript(&std::fs::read_to_string(env.state.join("claude.stdin.2")).unwrap());
    assert_eq!(t.len(), 7);
    assert_eq!(t[6], ("user".to_owned(), "and now?".to_owned()));
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 8);
    assert_eq!(msgs[7]["alias"], "claude");
    assert_eq!(msgs[7]["turn"], 4);
}

#[test]
fn chat_new_with_a_system_prompt() {
    let env = Env::empty();
    let out = env
        .run(&["chat", "new", "echo", "--system", "Be terse."])
        .success();
    let id = out.stdout.trim().to_owned();
    assert_eq!(out.stdout, format!("{id}\n"), "stdout holds only the ID");
    assert!(generated_id(&id), "{id}");
    let recs = env.records(&id);
    assert_eq!(recs.len(), 1, "only the header: {recs:?}");
    assert_eq!(recs[0]["system"], "Be terse.");
    assert_eq!(recs[0]["model"], "echo");

    // Later turns carry the system prompt, with the chat's model (there is no default).
    for (k, prompt) in ["one", "two"].iter().enumerate() {
        let out = env.run(&["chat", &id, prompt]).success();
        let mut want = echo_reply(prompt, 2 * k);
        let head_end = want.find('\n').unwrap();
        want.insert_str(head_end, ", system prompt of 9 characters");
        assert_eq!(out.stdout, want);
    }
    assert_eq!(env.messages(&id).len(), 4);
    assert_eq!(env.header(&id)["system"], "Be terse.");
}

#[test]
fn chat_with_words_starts_a_new_chat() {
    let env = Env::echo();
    let mut ids = Vec::new();
    for args in [
        vec!["chat", "fix this bug"],
        vec!["chat", "fix", "this", "bug"],
    ] {
        let out = env.run(&args).success();
        assert_eq!(out.stdout, echo_reply("fix this bug", 0), "ai {args:?}");
        let id = out.chat_id();
        let msgs = env.messages(&id);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0]["content"], "fix this bug");
        assert_eq!(env.header(&id)["title"], "fix this bug");
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);
    assert_eq!(env.chat_ids().len(), 2);
}

#[test]
fn an_id_shaped_unknown_word_is_an_error_unless_after_dashdash() {
    let env = Env::echo();
    let out = env.run(&["chat", "Z9Z", "hello"]).code(4);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("Z9Z"), "{}", out.stderr);
    assert!(out.stderr.contains("hint:"), "{}", out.stderr);
    assert!(env.chat_ids().is_empty(), "no chat was made");

    let out = env.run(&["chat", "--", "Z9Z", "hello"]).success();
    assert_eq!(out.stdout, echo_reply("Z9Z hello", 0));
    let id = out.chat_id();
    assert_ne!(id, "Z9Z");
    assert_eq!(env.messages(&id)[0]["content"], "Z9Z hello");
}

#[test]
fn a_three_letter_alias_is_a_model_not_a_chat() {
    let env = Env::echo();
    env.fake("codex", RECORDING_CODEX);
    let out = env.run(&["chat", "gpt", "hello"]).success();
    assert_eq!(out.stdout, "codex reply\n");
    let args = std::fs::read_to_string(env.state.join("codex.calls")).unwrap();
    assert!(args.contains("-m gpt-5.2"), "{args}");
    assert_eq!(
        std::fs::read_to_string(env.state.join("codex.stdin")).unwrap(),
        "hello"
    );
    let id = out.chat_id();
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["content"], "hello");
    assert_eq!(
        (&msgs[1]["alias"], &msgs[1]["provider"], &msgs[1]["model"]),
        (&"gpt".into(), &"codex".into(), &"gpt-5.2".into())
    );
}

#[test]
fn no_chat_and_save_false_save_nothing() {
    let env = Env::echo();
    for args in [vec!["echo", "--no-chat", "hi"], vec!["--no-chat", "hi"]] {
        let out = env.run(&args).success();
        assert_eq!(out.stdout, echo_reply("hi", 0));
        assert!(!out.stderr.contains("[chat:"), "{}", out.stderr);
    }
    assert!(env.chat_files().is_empty(), "{:?}", env.chat_files());
    assert!(!env.home.join("last_chat").exists());

    env.write_config(r#"{"default_alias":"echo","chat":{"save":false}}"#);
    for args in [vec!["echo", "hi"], vec!["hi there"]] {
        let out = env.run(&args).success();
        assert!(out.stdout.starts_with("echo: model echo"), "{}", out.stdout);
        assert!(!out.stderr.contains("[chat:"), "{}", out.stderr);
    }
    assert!(env.chat_files().is_empty(), "{:?}", env.chat_files());
    // Asking for a chat by name still makes one.
    let id = env.run(&["chat", "keep this"]).success().chat_id();
    assert_eq!(env.chat_ids(), vec![id]);
}

#[test]
fn paths_are_never_chat_ids() {
    let env = Env::echo();
    let id = env.start("something to find");
    for args in [
        vec!["chat", "show", "../../etc/passwd"],
        vec!["echo", "--chat", "../x", "hi"],
        vec!["echo", "--chat=../x", "hi"],
        vec!["chat", "delete", "../x"],
        vec!["chat", "rename", "../x", "title"],
        vec!["chat", "retry", "../x"],
        vec!["chat", "show", "x/../../../etc/passwd"],
    ] {
        let out = env.run(&args).code(2);
        assert_eq!(out.stdout, "", "ai {args:?}");
        assert!(out.stderr.contains("error:"), "{}", out.stderr);
    }
    assert_eq!(env.chat_ids(), vec![id]);
    assert!(!env.home.join("x.jsonl").exists());
}

#[test]
fn a_new_system_prompt_for_an_existing_chat_is_kept_with_its_turn() {
    let env = Env::echo();
    let id = env.start("first");
    let out = env
        .run(&["chat", &id, "--system", "Be terse.", "second"])
        .success();
    let mut want = echo_reply("second", 2);
    want.insert_str(want.find('\n').unwrap(), ", system prompt of 9 characters");
    assert_eq!(out.stdout, want);
    assert!(
        out.stderr.contains("system prompt changed"),
        "{}",
        out.stderr
    );
    assert_eq!(env.header(&id)["system"], "Be terse.");
    assert_eq!(env.header(&id)["title"], "first");
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 4, "the turn is saved: {msgs:?}");
    assert_eq!(msgs[2]["content"], "second");
    assert_eq!(msgs[3]["content"], want.as_str());

    let out = env
        .run(&["echo", "--chat", &id, "--system", "Be kind.", "third"])
        .success();
    assert!(
        out.stdout.contains("system prompt of 8 characters"),
        "{}",
        out.stdout
    );
    let out = env.run(&["chat", &id, "fourth"]).success();
    assert!(
        out.stdout
            .contains("6 earlier messages (3 from you), system prompt of 8 characters")
    );
    assert_eq!(env.header(&id)["system"], "Be kind.");
    assert_eq!(env.messages(&id).len(), 8);
    assert_eq!(
        env.chat_files(),
        vec![format!("{id}.jsonl")],
        "no temp files left"
    );
}

#[test]
fn a_named_chat_is_started_and_continued() {
    let env = Env::echo();
    let out = env
        .run(&["echo", "--chat", "work-notes", "hello"])
        .success();
    assert_eq!(out.chat_id(), "work-notes");
    assert_eq!(out.stdout, echo_reply("hello", 0));
    let out = env.run(&["chat", "work-notes", "more"]).success();
    assert_eq!(out.stdout, echo_reply("more", 2));
    let out = env.run(&["chat", "WORK-NOTES", "again"]).success();
    assert_eq!(out.chat_id(), "work-notes");
    assert_eq!(env.messages("work-notes").len(), 6);
    // A chat command is no name.
    env.run(&["echo", "--chat", "list", "hi"]).code(2);
    let out = env
        .run(&["chat", "new", "echo", "--name", "scratch"])
        .success();
    assert_eq!(out.stdout, "scratch\n");
    env.run(&["chat", "new", "echo", "--name", "scratch"])
        .code(2);
    assert_eq!(
        env.chat_ids(),
        vec!["scratch".to_owned(), "work-notes".to_owned()]
    );
}

#[test]
fn json_output_names_the_chat() {
    let env = Env::echo();
    let out = env.run(&["echo", "--json", "hi"]).success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON object");
    let id = out.chat_id();
    assert_eq!(v["chat"], id.as_str());
    // (Whether echo remarks on JSON mode is not this test's business.)
    let reply = v["reply"].as_str().expect("the reply");
    assert!(
        reply.starts_with("echo: model echo, 2 characters, 1 line") && reply.ends_with("\nhi\n"),
        "{reply}"
    );
    assert_eq!(env.messages(&id)[1]["content"], v["reply"]);
    let out = env.run(&["chat", &id, "--json", "more"]).success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON object");
    assert_eq!(v["chat"], id.as_str());
    assert_eq!(env.messages(&id).len(), 4);
}

#[test]
fn stdin_is_part_of_the_saved_prompt() {
    use std::io::Write;
    let env = Env::echo();
    let mut child = env
        .command(&["echo", "review this"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"fn main() {}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let id = stderr
        .trim()
        .strip_prefix("[chat: ")
        .unwrap()
        .strip_suffix(']')
        .unwrap();
    let msgs = env.messages(id);
    assert_eq!(msgs[0]["content"], "fn main() {}\n\nreview this");
    assert_eq!(env.header(id)["title"], "review this");
}

#[test]
fn chat_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::echo();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let id = env.start("secret plans");
    assert_eq!(mode(&env.chats_dir()), 0o700);
    assert_eq!(mode(&env.chat_path(&id)), 0o600);
    env.run(&["chat", "rename", &id, "still secret"]).success();
    assert_eq!(mode(&env.chat_path(&id)), 0o600);
    let named = env.run(&["chat", "new", "echo"]).success().stdout;
    assert_eq!(mode(&env.chat_path(named.trim())), 0o600);
}
