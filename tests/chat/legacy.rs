//! Chats of the Python ai-cli (`chats/<ID>.json`): listed, shown, continued and converted.

use serde_json::Value;

use crate::support::{Env, echo_reply};

const PYTHON_CHAT: &str = r#"{"chat_id":"ABC","model_alias":"echo","messages":[{"role":"user","content":"Hello","timestamp":"2025-01-01T10:00:00"},{"role":"assistant","content":"Hi there","timestamp":"2025-01-01T10:00:05"}],"created_at":"2025-01-01T10:00:00","updated_at":"2025-01-01T10:00:05"}"#;

#[test]
fn a_python_chat_is_listed_shown_and_continued() {
    // No default model: the chat's own model carries the turn.
    let env = Env::empty();
    std::fs::create_dir_all(env.chats_dir()).unwrap();
    let legacy = env.chats_dir().join("ABC.json");
    std::fs::write(&legacy, PYTHON_CHAT).unwrap();

    let out = env.run(&["chat", "list", "--json"]).success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0]["id"], "ABC");
    assert_eq!(v[0]["model"], "echo");
    assert_eq!(v[0]["turns"], 1);
    assert_eq!(v[0]["title"], "Hello");
    let out = env.run(&["chat", "list"]).success();
    let row = out.stdout.lines().nth(1).expect("a row");
    assert!(
        row.starts_with("ABC ") && row.ends_with("Hello"),
        "{}",
        out.stdout
    );

    let out = env.run(&["chat", "show", "ABC"]).success();
    assert!(out.stdout.contains("Hello") && out.stdout.contains("Hi there"));
    let out = env.run(&["chat", "show", "abc", "--json"]).success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1]["content"], "Hi there");
    assert_eq!(
        std::fs::read_to_string(&legacy).unwrap(),
        PYTHON_CHAT,
        "reading does not convert"
    );

    let out = env.run(&["chat", "ABC", "next"]).success();
    assert_eq!(out.stdout, echo_reply("next", 2));
    assert_eq!(out.chat_id(), "ABC");
    assert!(!legacy.exists(), "the .json is gone once converted");
    assert_eq!(env.chat_files(), vec!["ABC.jsonl".to_owned()]);

    let recs = env.records("ABC");
    assert_eq!(recs.len(), 5, "header + 4 messages: {recs:?}");
    assert_eq!(recs[0]["type"], "chat");
    assert_eq!(recs[0]["id"], "ABC");
    assert_eq!(recs[0]["model"], "echo");
    let want = [
        ("user", "Hello".to_owned(), 1),
        ("assistant", "Hi there".to_owned(), 1),
        ("user", "next".to_owned(), 2),
        ("assistant", echo_reply("next", 2), 2),
    ];
    for (rec, (role, content, turn)) in recs[1..].iter().zip(want) {
        assert_eq!(rec["type"], "message");
        assert_eq!(rec["role"], role);
        assert_eq!(rec["content"], content.as_str());
        assert_eq!(rec["turn"], turn);
    }

    // And it goes on as a normal chat.
    let out = env.run(&["chat", "abc", "more"]).success();
    assert_eq!(out.stdout, echo_reply("more", 4));
    let out = env.run(&["chat", "list", "--json"]).success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["turns"], 3);
}

#[test]
fn a_python_chat_is_converted_by_a_rename_or_a_new_system_prompt() {
    let env = Env::empty();
    std::fs::create_dir_all(env.chats_dir()).unwrap();
    let legacy = env.chats_dir().join("ABC.json");
    std::fs::write(&legacy, PYTHON_CHAT).unwrap();
    let out = env
        .run(&["chat", "ABC", "--system", "Be terse.", "next"])
        .success();
    assert!(
        out.stdout
            .starts_with("echo: model echo, 4 characters, 1 line, 2 earlier messages (1 from you), system prompt of 9 characters\n"),
        "{}",
        out.stdout
    );
    assert!(!legacy.exists());
    let recs = env.records("ABC");
    assert_eq!(recs.len(), 5, "header + 4 messages: {recs:?}");
    assert_eq!(recs[0]["system"], "Be terse.");
    assert_eq!(recs[3]["content"], "next");

    let legacy = env.chats_dir().join("D4E.json");
    std::fs::write(&legacy, PYTHON_CHAT.replace("ABC", "D4E")).unwrap();
    env.run(&["chat", "rename", "D4E", "old", "notes"])
        .success();
    assert!(!legacy.exists());
    let recs = env.records("D4E");
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert_eq!(recs[0]["title"], "old notes");
    let out = env.run(&["chat", "D4E", "more"]).success();
    assert_eq!(out.stdout, echo_reply("more", 2));
    assert_eq!(env.messages("D4E").len(), 4);
    assert_eq!(
        env.chat_files(),
        vec!["ABC.jsonl".to_owned(), "D4E.jsonl".to_owned()]
    );
}

#[test]
fn turns_racing_on_a_python_chat_convert_it_once() {
    let env = Env::empty();
    std::fs::create_dir_all(env.chats_dir()).unwrap();
    std::fs::write(env.chats_dir().join("ABC.json"), PYTHON_CHAT).unwrap();
    let procs: Vec<_> = (0..10)
        .map(|k| env.spawn(&["chat", "ABC", &format!("racer {k}")]))
        .collect();
    for p in procs {
        assert_eq!(p.wait().success().chat_id(), "ABC");
    }
    assert_eq!(env.chat_files(), vec!["ABC.jsonl".to_owned()]);
    let recs = env.records("ABC");
    assert_eq!(recs.len(), 1 + 2 + 20, "{recs:#?}");
    assert_eq!(recs[1]["content"], "Hello");
    for (k, pair) in recs[3..].chunks(2).enumerate() {
        let prompt = pair[0]["content"].as_str().unwrap();
        assert!(prompt.starts_with("racer "), "{prompt}");
        assert_eq!(pair[1]["content"], echo_reply(prompt, 2 * (k + 1)));
        assert_eq!(pair[1]["turn"], k + 2);
    }
}
