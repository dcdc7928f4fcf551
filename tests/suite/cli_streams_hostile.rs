//! Regressions from a hostile test of the CLI streams and Bedrock: codex's transient error
//! notices, usage of odd shapes, a failing exit after a JSON stream, usage sums, events after
//! the final one, gemini's whole messages.

use serde_json::json;

use crate::support::Env;

/// The fake `cli` reads its prompt, then prints `stdout` and exits with `code`.
fn prints(env: &Env, cli: &str, stdout: &str, code: i32) {
    let file = env.state.join(format!("{cli}.out"));
    std::fs::write(&file, stdout).unwrap();
    env.fake(
        cli,
        &format!(
            "\"$CAT\" > /dev/null\n\"$CAT\" '{}'\nexit {code}",
            file.display()
        ),
    );
}

fn lines(events: &[serde_json::Value]) -> String {
    events.iter().map(|e| format!("{e}\n")).collect()
}

#[test]
fn a_codex_reconnect_notice_before_a_completed_turn_is_not_a_failure() {
    let env = Env::new();
    prints(
        &env,
        "codex",
        &lines(&[
            json!({"type":"thread.started","thread_id":"t"}),
            json!({"type":"turn.started"}),
            json!({"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}),
            json!({"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"final answer"}}),
            json!({"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}),
        ]),
        0,
    );
    let out = env.run(&["codex", "hi"]).success();
    assert_eq!(out.stdout, "final answer\n");
}

#[test]
fn usage_of_an_odd_shape_is_left_out_not_the_event() {
    let env = Env::new();
    prints(
        &env,
        "claude",
        &lines(&[
            json!({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}},"parent_tool_use_id":null}),
            json!({"type":"result","subtype":"success","is_error":false,"result":"hello",
                   "usage":{"input_tokens":"5","output_tokens":-1},"total_cost_usd":"0.01"}),
        ]),
        0,
    );
    let out = env.run(&["sonnet", "hi"]).success();
    assert_eq!(out.stdout, "hello\n");
    // The CLI's own error survives odd usage too.
    prints(
        &env,
        "claude",
        &lines(
            &[json!({"type":"result","subtype":"success","is_error":true,
                        "result":"Credit balance is too low","usage":{"input_tokens":0.5}})],
        ),
        1,
    );
    let out = env.run(&["sonnet", "again"]).code(1);
    assert!(out.error().contains("Credit balance is too low"), "{out:?}");
}

#[test]
fn a_failing_exit_after_a_json_stream_does_not_claim_it_printed_nothing() {
    let env = Env::new();
    prints(
        &env,
        "claude",
        &lines(&[
            json!({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello world"}},"parent_tool_use_id":null}),
            json!({"type":"result","subtype":"success","is_error":false,"result":"hello world"}),
        ]),
        1,
    );
    let out = env.run(&["sonnet", "hi"]).code(1);
    assert!(!out.stderr.contains("printed nothing"), "{out:?}");
}

#[test]
fn huge_reported_usage_does_not_wrap_the_totals() {
    let env = Env::new();
    let max = u64::MAX;
    prints(
        &env,
        "claude",
        &lines(&[
            json!({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}},"parent_tool_use_id":null}),
            json!({"type":"result","subtype":"success","is_error":false,"result":"ok",
                   "usage":{"input_tokens":max,"cache_read_input_tokens":10,"output_tokens":max},"total_cost_usd":1.7e308}),
        ]),
        0,
    );
    let id = env.run(&["sonnet", "one"]).success().chat_id();
    env.run(&["chat", &id, "two"]).success();
    let stats = env
        .run(&["chat", "show", &id, "--stats", "--json"])
        .success();
    let st: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(st["usage_input"], max, "{st}");
    assert_eq!(st["usage_output"], max, "{st}");
    let last = env.messages(&id).pop().unwrap();
    assert_eq!(last["usage"]["input"], max);
    let text = env.run(&["chat", "show", &id, "--stats"]).success();
    assert!(!text.stdout.contains("inf"), "{}", text.stdout);
}

#[test]
fn nothing_after_the_final_event_joins_the_reply() {
    let env = Env::new();
    prints(
        &env,
        "claude",
        &lines(&[
            json!({"type":"result","subtype":"success","is_error":false,"result":"AB"}),
            json!({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"late"}},"parent_tool_use_id":null}),
        ]),
        0,
    );
    let out = env.run(&["sonnet", "hi"]).success();
    assert_eq!(out.stdout, "AB\n");
}

#[test]
fn gemini_whole_messages_do_not_repeat_its_deltas() {
    let env = Env::new();
    prints(
        &env,
        "gemini",
        &lines(&[
            json!({"type":"message","role":"assistant","content":"A","delta":true}),
            json!({"type":"message","role":"assistant","content":"full text AB"}),
            json!({"type":"message","role":"assistant","content":"B","delta":true}),
            json!({"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":1}}),
        ]),
        0,
    );
    let out = env.run(&["flash", "hi"]).success();
    assert_eq!(out.stdout, "AB\n");
}
