//! `ai chat list | show | delete | rename | retry | gc` and `ai __complete chats`.

use std::time::Duration;

use serde_json::Value;

use crate::support::{Env, FLAKY_GEMINI, age, echo_reply, transcript};

/// The data rows of `ai chat list` (the header line checked and dropped).
fn rows(stdout: &str) -> Vec<Vec<String>> {
    let mut lines = stdout.lines();
    let head = lines.next().expect("a header line");
    let cols: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(cols, ["ID", "MODEL", "TURNS", "LAST", "USED", "TITLE"]);
    lines
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[test]
fn list_shows_recent_chats_first() {
    let env = Env::echo();
    let a = env.start("alpha question");
    let b = env.start("beta question");
    let c = env.start("gamma question");
    age(&env.chat_path(&a), Duration::from_secs(300));
    age(&env.chat_path(&b), Duration::from_secs(200));
    age(&env.chat_path(&c), Duration::from_secs(100));
    env.run(&["chat", &a, "again"]).success();

    let out = env.run(&["chat", "list"]).success();
    let r = rows(&out.stdout);
    let ids: Vec<&str> = r.iter().map(|row| row[0].as_str()).collect();
    assert_eq!(ids, [a.as_str(), c.as_str(), b.as_str()], "{}", out.stdout);
    assert_eq!(r[0][1..3], ["echo", "2"]);
    assert_eq!(r[1][1..3], ["echo", "1"]);
    assert!(
        out.stdout
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("alpha question")
    );
    assert!(
        out.stdout
            .lines()
            .nth(3)
            .unwrap()
            .ends_with("beta question")
    );

    let out = env.run(&["chat", "list", "--json"]).success();
    let v: Value = serde_json::from_str(&out.stdout).expect("list --json is JSON");
    let arr = v.as_array().expect("an array");
    assert_eq!(arr.len(), 3);
    let want = [
        (&a, 2, "alpha question"),
        (&c, 1, "gamma question"),
        (&b, 1, "beta question"),
    ];
    for (item, (id, turns, title)) in arr.iter().zip(want) {
        assert_eq!(item["id"], id.as_str());
        assert_eq!(item["model"], "echo");
        assert_eq!(item["turns"], turns);
        assert_eq!(item["title"], title);
    }

    let out = env.run(&["chat", "list", "--limit", "2"]).success();
    let ids: Vec<String> = rows(&out.stdout)
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(ids, [a.clone(), c.clone()]);
    assert!(out.stderr.contains("2 of 3"), "{}", out.stderr);
    let out = env
        .run(&["chat", "list", "--json", "--limit", "1"])
        .success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["id"], a.as_str());
}

#[test]
fn show_prints_a_chat_as_text_or_json() {
    let env = Env::echo();
    let id = env.start("alpha question");
    env.run(&["chat", &id, "follow up"]).success();

    for word in [id.clone(), id.to_ascii_lowercase()] {
        let out = env.run(&["chat", "show", &word]).success();
        assert!(
            out.stdout
                .starts_with(&format!("chat {id} · alpha question\n")),
            "{}",
            out.stdout
        );
        for text in [
            "alpha question",
            "follow up",
            "2 earlier messages (1 from you)",
        ] {
            assert!(out.stdout.contains(text), "{text} missing:\n{}", out.stdout);
        }
        assert_eq!(out.stdout.matches("── you · ").count(), 2, "{}", out.stdout);
        assert_eq!(
            out.stdout.matches("── echo · ").count(),
            2,
            "{}",
            out.stdout
        );
    }

    let out = env.run(&["chat", "show", &id, "--json"]).success();
    let v: Value = serde_json::from_str(&out.stdout).expect("show --json is JSON");
    assert_eq!(v["id"], id.as_str());
    assert_eq!(v["title"], "alpha question");
    let recs = v["records"].as_array().expect("records");
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[0]["role"], "user");
    assert_eq!(recs[0]["content"], "alpha question");
    assert_eq!(recs[3]["content"], echo_reply("follow up", 2));

    env.run(&["chat", "show", "Q9Q"]).code(4);
}

#[test]
fn delete_removes_chats() {
    let env = Env::echo();
    let a = env.start("one");
    let b = env.start("two");
    let c = env.start("three");
    let out = env
        .run(&["chat", "delete", &a, &c.to_ascii_lowercase()])
        .success();
    assert!(
        out.stderr.contains(&format!("deleted chat {a}")),
        "{}",
        out.stderr
    );
    assert!(!env.chat_path(&a).exists() && !env.chat_path(&c).exists());
    assert_eq!(env.chat_ids(), vec![b.clone()]);

    let out = env.run(&["chat", "delete", "Q9Q"]).code(4);
    assert!(out.stderr.contains("Q9Q"), "{}", out.stderr);
    env.run(&["chat", "delete", &a]).code(4);
    assert_eq!(env.chat_ids(), vec![b.clone()]);
    let listed = env.run(&["chat", "list", "--json"]).success();
    let v: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["id"], b.as_str());
}

#[test]
fn rename_sets_the_title_and_the_chat_goes_on() {
    let env = Env::echo();
    let id = env.start("first prompt");
    env.run(&["chat", "rename", &id, "Project", "plan", "notes"])
        .success();
    assert_eq!(env.header(&id)["title"], "Project plan notes");

    let out = env.run(&["chat", "list"]).success();
    assert!(
        out.stdout
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("Project plan notes"),
        "{}",
        out.stdout
    );
    let out = env.run(&["chat", "list", "--json"]).success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[0]["title"], "Project plan notes");
    let out = env.run(&["chat", "show", &id]).success();
    assert!(
        out.stdout
            .starts_with(&format!("chat {id} · Project plan notes\n"))
    );

    let out = env.run(&["chat", &id, "continue"]).success();
    assert_eq!(out.stdout, echo_reply("continue", 2));
    let recs = env.records(&id);
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[0]["title"], "Project plan notes");
    assert_eq!(recs[1]["content"], "first prompt");
    assert_eq!(recs[4]["turn"], 2);
}

#[test]
fn a_failed_turn_is_kept_and_retried() {
    let env = Env::echo();
    env.fake("gemini", FLAKY_GEMINI);
    let id = env.start("first");

    let out = env.run(&["chat", &id, "gemini", "please answer"]).code(1);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("quota exceeded"), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("ai chat retry {id}")),
        "{}",
        out.stderr
    );
    let recs = env.records(&id);
    assert_eq!(recs.len(), 4, "{recs:?}");
    let pending = &recs[3];
    assert_eq!(pending["type"], "pending");
    assert_eq!(pending["content"], "please answer");
    assert_eq!(pending["alias"], "gemini");
    assert!(
        pending["error"]
            .as_str()
            .unwrap()
            .contains("quota exceeded"),
        "{pending}"
    );

    let out = env.run(&["chat", "retry", &id]).success();
    assert_eq!(out.stdout, "recovered answer\n");
    assert_eq!(out.chat_id(), id);
    // The retried prompt went with the chat's history.
    let sent = std::fs::read_to_string(env.state.join("gemini.stdin")).unwrap();
    let t = transcript(&sent);
    assert_eq!(t.len(), 3, "{sent}");
    assert_eq!(t[0].1, "first");
    assert_eq!(t[2], ("user".to_owned(), "please answer".to_owned()));

    let recs = env.records(&id);
    assert_eq!(recs.len(), 6, "{recs:?}");
    assert_eq!(recs[3]["type"], "pending");
    let (user, reply) = (&recs[4], &recs[5]);
    assert_eq!(
        (&user["role"], &user["content"]),
        (&"user".into(), &"please answer".into())
    );
    assert_eq!(
        (&reply["role"], &reply["content"]),
        (&"assistant".into(), &"recovered answer\n".into())
    );
    assert_eq!((&user["turn"], &reply["turn"]), (&2.into(), &2.into()));
    assert_eq!(reply["alias"], "gemini");

    // The last turn succeeded: nothing to retry.
    let out = env.run(&["chat", "retry", &id]).code(2);
    assert!(out.stderr.contains("error:"), "{}", out.stderr);
    assert_eq!(env.records(&id).len(), 6);
    env.run(&["chat", "retry", "Q9Q"]).code(4);
}

#[test]
fn gc_deletes_chats_not_used_for_a_while() {
    let env = Env::echo();
    let old = env.start("old one");
    let new = env.start("new one");
    age(&env.chat_path(&old), Duration::from_secs(40 * 86_400));

    let out = env
        .run(&["chat", "gc", "--older-than", "30d", "--dry-run"])
        .success();
    assert_eq!(out.stdout, format!("{old}\n"));
    assert!(env.chat_path(&old).exists() && env.chat_path(&new).exists());

    let out = env.run(&["chat", "gc", "--older-than", "30d"]).success();
    assert_eq!(out.stdout, format!("{old}\n"));
    assert_eq!(env.chat_ids(), vec![new.clone()]);

    let out = env.run(&["chat", "gc", "--older-than", "30d"]).success();
    assert_eq!(out.stdout, "");
    assert_eq!(env.chat_ids(), vec![new]);
}

#[test]
fn complete_lists_ids_with_titles() {
    let env = Env::echo();
    let a = env.start("first title");
    let b = env.start("second\ttitle");
    age(&env.chat_path(&a), Duration::from_secs(100));
    let out = env.run(&["__complete", "chats"]).success();
    assert_eq!(
        out.stdout,
        format!("{b}\tsecond title\n{a}\tfirst title\n"),
        "most recent first, one ID<TAB>title per line"
    );
}

#[test]
fn a_failed_first_turn_is_kept_in_a_new_chat() {
    let env = Env::empty();
    env.fake("gemini", FLAKY_GEMINI);
    let out = env.run(&["gemini", "hello there"]).code(1);
    let ids = env.chat_ids();
    assert_eq!(ids.len(), 1, "the prompt is kept");
    let id = &ids[0];
    assert!(
        out.stderr.contains(&format!("ai chat retry {id}")),
        "{}",
        out.stderr
    );
    let recs = env.records(id);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1]["type"], "pending");
    assert_eq!(recs[1]["content"], "hello there");
    let out = env.run(&["chat", "show", id]).success();
    assert!(out.stdout.contains("hello there") && out.stdout.contains("retry"));

    let out = env.run(&["chat", "retry", id]).success();
    assert_eq!(out.stdout, "recovered answer\n");
    assert_eq!(
        std::fs::read_to_string(env.state.join("gemini.stdin")).unwrap(),
        "hello there",
        "no history: the prompt alone"
    );
    let msgs = env.messages(id);
    assert_eq!(msgs.len(), 2);
    assert_eq!((&msgs[0]["turn"], &msgs[1]["turn"]), (&1.into(), &1.into()));
}

#[test]
fn list_shows_a_chat_with_a_damaged_header_instead_of_hiding_it() {
    let env = Env::echo();
    let good = env.start("a fine chat");
    std::fs::create_dir_all(env.chats_dir()).unwrap();
    std::fs::write(env.chats_dir().join("B4D.jsonl"), b"{not a header\n").unwrap();
    let out = env.run(&["chat", "list"]).success();
    assert!(out.stdout.contains(&good), "{}", out.stdout);
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("B4D"))
        .unwrap_or_else(|| panic!("B4D not listed:\n{}", out.stdout));
    assert!(row.contains("damaged"), "{row}");
    let shown = env.run(&["chat", "show", "B4D"]);
    assert_eq!(shown.code, Some(3), "{}", shown.stderr);
    assert!(shown.stderr.contains("line 1"), "{}", shown.stderr);
}
