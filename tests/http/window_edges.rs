//! Chat files of odd shapes (an edited file, a record of a newer type, a round that asked for
//! nothing) are still sent as a well-formed conversation: user first, alternating, nothing
//! empty.

use serde_json::{Value, json};

use crate::support::*;

const BOOKMARK: &str = r#"{"type":"bookmark","note":"a newer ai"}"#;

fn seed(env: &Env, id: &str, lines: &[String]) {
    let mut text = format!(
        "{}\n",
        json!({"type":"chat","v":1,"id":id,"created":"2026-11-01T00:00:00.000Z","model":"openai:gpt-test"})
    );
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    let dir = env.path("home/chats");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{id}.jsonl")), text).unwrap();
}

fn msg(role: &str, content: &str, turn: u64) -> String {
    json!({"type":"message","role":role,"content":content,"ts":"2026-11-01T00:00:00.000Z","turn":turn,
           "provider":"openai","model":"gpt-test"})
    .to_string()
}

fn rnd(turn: u64, calls: bool) -> String {
    json!({"type":"round","turn":turn,"round":1,"ts":"2026-11-01T00:00:00.000Z",
           "calls": if calls { json!([{"id":"c1","name":"search","arguments":"{}"}]) } else { json!([]) },
           "results": if calls { json!([{"id":"c1","name":"search","content":"found"}]) } else { json!([]) }})
    .to_string()
}

fn sent(lines: &[String]) -> (Value, Env, Server) {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let env = Env::for_provider("openai", &s);
    seed(&env, "E1G", lines);
    env.run(&["chat", "E1G", "next"]).success();
    let body = s.only().json();
    (body["messages"].clone(), env, s)
}

fn roles(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_prompt_left_without_its_reply_before_a_newer_record_gets_a_stand_in() {
    let (m, _, _) = sent(&[
        msg("user", "q1", 1),
        msg("assistant", "a1", 1),
        msg("user", "q2", 2),
        BOOKMARK.to_owned(),
    ]);
    assert_eq!(
        roles(&m),
        ["user", "assistant", "user", "assistant", "user"]
    );
    assert_eq!(m[3]["content"], "(no reply)");
    assert_eq!(m[4]["content"], "next");
}

#[test]
fn a_round_that_asked_for_nothing_sends_nothing() {
    let (m, _, _) = sent(&[
        msg("user", "q1", 1),
        rnd(1, false),
        msg("assistant", "a1", 1),
    ]);
    assert_eq!(roles(&m), ["user", "assistant", "user"]);
    for each in m.as_array().unwrap() {
        assert_ne!(each["content"], "", "{m}");
    }
}

#[test]
fn records_before_the_first_prompt_are_not_sent() {
    let (m, _, _) = sent(&[
        rnd(1, true),
        msg("assistant", "orphan", 1),
        msg("user", "q2", 2),
        msg("assistant", "a2", 2),
    ]);
    assert_eq!(roles(&m), ["user", "assistant", "user"]);
    assert_eq!(m[0]["content"], "q2");
}

#[test]
fn a_round_of_a_turn_that_does_not_exist_does_not_set_the_count() {
    let (_, env, _) = sent(&[
        msg("user", "q1", 1),
        msg("assistant", "a1", 1),
        rnd(99, true),
    ]);
    let last: Value = env.records("E1G").pop().unwrap();
    assert_eq!(last["turn"], 2, "{last}");
}
