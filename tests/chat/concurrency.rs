//! Many calls at once: turns on one chat are serialized whole, new chats get distinct IDs, and a
//! busy chat either fails at once (`--no-wait`) or is waited for.

use std::collections::BTreeSet;

use crate::support::{Env, SLOW_GEMINI, echo_reply, wait_for};

#[test]
fn twenty_turns_at_once_on_one_chat() {
    let env = Env::empty();
    let id = env.new_chat("echo");
    let prompts: Vec<String> = (1..=20).map(|k| format!("prompt number {k}")).collect();
    let procs: Vec<_> = prompts
        .iter()
        .map(|p| env.spawn(&["chat", &id, p]))
        .collect();
    for (p, prompt) in procs.into_iter().zip(&prompts) {
        let out = p.wait().success();
        assert!(
            out.stdout.ends_with(&format!("\n{prompt}\n")),
            "{}",
            out.stdout
        );
        assert_eq!(out.chat_id(), id);
    }

    let recs = env.records(&id);
    assert_eq!(recs.len(), 41, "header + 40 messages");
    let mut seen = BTreeSet::new();
    for (k, pair) in recs[1..].chunks(2).enumerate() {
        let turn = k as u64 + 1;
        let (user, reply) = (&pair[0], &pair[1]);
        assert_eq!(user["type"], "message");
        assert_eq!(user["role"], "user", "{user}");
        assert_eq!(reply["role"], "assistant", "{reply}");
        assert_eq!(user["turn"], turn, "turns are numbered 1..20 in order");
        assert_eq!(reply["turn"], turn);
        let prompt = user["content"].as_str().unwrap();
        // Its own reply, which saw every turn before it.
        assert_eq!(reply["content"], echo_reply(prompt, 2 * k));
        assert!(seen.insert(prompt.to_owned()), "{prompt} twice");
    }
    let all: BTreeSet<String> = prompts.into_iter().collect();
    assert_eq!(seen, all);
}

#[test]
fn twenty_new_chats_at_once_get_distinct_ids() {
    let env = Env::echo();
    let procs: Vec<_> = (0..20)
        .map(|k| env.spawn(&["echo", &format!("new chat {k}")]))
        .collect();
    let mut ids = BTreeSet::new();
    for (k, p) in procs.into_iter().enumerate() {
        let out = p.wait().success();
        let id = out.chat_id();
        assert_eq!(env.messages(&id)[0]["content"], format!("new chat {k}"));
        assert!(ids.insert(id));
    }
    assert_eq!(ids.len(), 20);
    assert_eq!(env.chat_ids(), ids.into_iter().collect::<Vec<_>>());
    let files = env.chat_files();
    assert!(
        files.iter().filter(|f| f.ends_with(".jsonl")).count() == 20,
        "{files:?}"
    );
}

#[test]
fn a_busy_chat_fails_at_once_with_no_wait() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let id = env.start("first");
    let slow = env.spawn(&["chat", &id, "gemini", "slow question"]);
    env.wait_started("gemini");

    let out = env
        .run(&["chat", &id, "echo", "--no-wait", "quick"])
        .code(75);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("in use"), "{}", out.stderr);
    let out = env
        .run(&["--no-wait", "echo", "--chat", &id, "quick"])
        .code(75);
    assert!(out.stderr.contains("in use"), "{}", out.stderr);

    env.release();
    let out = slow.wait().success();
    assert_eq!(out.stdout, "partial answer and the rest\n");
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[2]["content"], "slow question");
    assert!(msgs.iter().all(|m| m["content"] != "quick"));
}

#[test]
fn a_busy_chat_is_waited_for() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let id = env.start("first");
    let slow = env.spawn(&["chat", &id, "gemini", "slow question"]);
    env.wait_started("gemini");

    let mut waiter = env.spawn(&["chat", &id, "echo", "after the slow one"]);
    wait_for("the notice that the chat is in use", || {
        waiter.stderr_now().contains("in use")
    });
    assert!(
        waiter.running(),
        "it waits while the slow turn holds the chat"
    );
    assert_eq!(env.messages(&id).len(), 2);

    env.release();
    let out = slow.wait().success();
    assert_eq!(out.stdout, "partial answer and the rest\n");
    let out = waiter.wait().success();
    assert_eq!(out.stdout, echo_reply("after the slow one", 4));
    assert!(
        out.stderr.contains(&format!("chat {id} is in use")),
        "{}",
        out.stderr
    );
    assert_eq!(out.chat_id(), id);
    let msgs = env.messages(&id);
    assert_eq!(msgs.len(), 6);
    assert_eq!(msgs[2]["content"], "slow question");
    assert_eq!(msgs[3]["content"], "partial answer and the rest\n");
    assert_eq!(msgs[4]["content"], "after the slow one");
    assert_eq!((&msgs[4]["turn"], &msgs[5]["turn"]), (&3.into(), &3.into()));
}

#[test]
fn renames_and_new_system_prompts_racing_turns_lose_nothing() {
    // A rename or a new system prompt replaces the file: turns waiting for it must follow.
    let env = Env::empty();
    let id = env.new_chat("echo");
    let mut procs = Vec::new();
    let mut turns = Vec::new();
    for k in 0..12 {
        let prompt = format!("racing turn {k}");
        procs.push(match k % 4 {
            0 => env.spawn(&["chat", &id, "--system", &format!("system {k}"), &prompt]),
            _ => env.spawn(&["chat", &id, &prompt]),
        });
        turns.push(prompt);
        if k % 3 == 0 {
            procs.push(env.spawn(&["chat", "rename", &id, "title", &k.to_string()]));
        }
    }
    for p in procs {
        p.wait().success();
    }
    let recs = env.records(&id);
    let head = &recs[0];
    assert!(
        head["title"].as_str().unwrap().starts_with("title "),
        "{head}"
    );
    assert!(
        head["system"].as_str().unwrap().starts_with("system "),
        "{head}"
    );
    assert_eq!(recs.len(), 1 + 2 * turns.len(), "{recs:#?}");
    let mut seen = BTreeSet::new();
    for (k, pair) in recs[1..].chunks(2).enumerate() {
        assert_eq!(
            (&pair[0]["role"], &pair[1]["role"]),
            (&"user".into(), &"assistant".into())
        );
        assert_eq!(
            (&pair[0]["turn"], &pair[1]["turn"]),
            (&(k + 1).into(), &(k + 1).into())
        );
        let prompt = pair[0]["content"].as_str().unwrap();
        let reply = pair[1]["content"].as_str().unwrap();
        assert!(
            reply.starts_with(&format!(
                "echo: model echo, {} characters, 1 line",
                prompt.len()
            )) && reply.ends_with(&format!("\n{prompt}\n")),
            "{reply}"
        );
        if k > 0 {
            assert!(
                reply.contains(&format!(", {} earlier messages", 2 * k)),
                "{reply}"
            );
        }
        assert!(seen.insert(prompt.to_owned()));
    }
    assert_eq!(seen, turns.into_iter().collect::<BTreeSet<_>>());
    assert_eq!(
        env.chat_files(),
        vec![format!("{id}.jsonl")],
        "no temp files left"
    );
}
