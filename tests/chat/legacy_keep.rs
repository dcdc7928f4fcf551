//! Converting a Python ai-cli chat keeps everything in it: other roles, unknown keys and
//! per-message fields survive, and the original goes only once the new file is checked.

use serde_json::{Value, json};

use crate::support::Env;

fn python_chat() -> Value {
    json!({
        "chat_id": "LEG1", "model_alias": "echo",
        "title": "Old notes", "tags": ["work", "ideas"], "system_prompt": "Be terse.",
        "created_at": "2025-01-01T10:00:00", "updated_at": "2025-01-01T10:01:00",
        "messages": [
            {"role": "system", "content": "You are a pirate.", "timestamp": "2025-01-01T10:00:00"},
            {"role": "user", "content": "Hello", "timestamp": "2025-01-01T10:00:01"},
            {"role": "tool", "content": {"result": 42}, "name": "calc"},
            {"role": "assistant", "content": "Hi there", "timestamp": "2025-01-01T10:00:05",
             "model": "gpt-4o", "tokens": 17}
        ]
    })
}

/// Every string and number in `v`, recursively.
fn leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        _ => {}
    }
}

#[test]
fn conversion_keeps_other_roles_unknown_keys_and_fields() {
    let env = Env::empty();
    std::fs::create_dir_all(env.chats_dir()).unwrap();
    let original = python_chat();
    std::fs::write(env.chats_dir().join("LEG1.json"), original.to_string()).unwrap();

    let out = env.run(&["echo", "chat", "LEG1", "continue"]).success();
    assert!(out.stderr.contains("converted"), "{}", out.stderr);
    assert!(out.stderr.contains("checked"), "{}", out.stderr);
    assert_eq!(
        env.chat_files(),
        ["LEG1.jsonl"],
        "the original goes once checked"
    );

    let header = env.header("LEG1");
    assert_eq!(header["title"], "Old notes");
    assert_eq!(header["system"], "Be terse.");
    let text = std::fs::read_to_string(env.chat_path("LEG1")).unwrap();
    let mut want = Vec::new();
    leaves(&original, &mut want);
    for leaf in want {
        if leaf == "LEG1" || leaf.starts_with("2025-01-01T10:01") {
            continue; // the ID and updated_at are the file's name and time
        }
        let encoded = serde_json::to_string(&leaf).unwrap();
        assert!(
            text.contains(&encoded) || text.contains(&leaf),
            "{leaf} was lost:\n{text}"
        );
    }

    // The kept data does not disturb the chat: it shows, lists and goes on.
    let shown = env.run(&["chat", "show", "LEG1"]).success();
    assert!(shown.stdout.contains("Hi there"), "{}", shown.stdout);
    env.run(&["chat", "LEG1", "and more"]).success();
    let msgs = env.messages("LEG1");
    assert_eq!(msgs.len(), 6, "{msgs:?}");
}

#[test]
fn a_system_message_becomes_the_system_prompt_when_there_is_none() {
    let env = Env::empty();
    std::fs::create_dir_all(env.chats_dir()).unwrap();
    let mut chat = python_chat();
    chat.as_object_mut().unwrap().remove("system_prompt");
    std::fs::write(env.chats_dir().join("LEG1.json"), chat.to_string()).unwrap();
    env.run(&["echo", "chat", "LEG1", "continue"]).success();
    assert_eq!(env.header("LEG1")["system"], "You are a pirate.");
}
