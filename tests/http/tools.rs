//! Tool calling against the scripted server, protocol by protocol: one call, parallel calls, a
//! follow-up turn that sends the rounds again, error results, the round limit, malformed calls,
//! a stream cut inside a call, Gemini's signature sent back; knowledge bases as tools; `--json`
//! and `-q`; the error a CLI backend gets.

use serde_json::{Value, json};

use crate::support::*;

/// The JSON document the data tools read.
const DOC: &str = r#"{"sql": {"abc123": {"elapsed_ms": 1200, "text": "SELECT * FROM backup"},
                             "def456": {"elapsed_ms": 7}},
                     "waits": {"db file sequential read": {"ms": 80}}}"#;

fn doc(env: &Env) -> String {
    env.project_file("perf.json", DOC)
        .to_str()
        .unwrap()
        .to_owned()
}

// ---- stream builders -------------------------------------------------------------------------

/// OpenAI: tool-call fragments, each `(index, id, name, argument piece)`, then the end.
fn oa_calls(frags: &[(u64, &str, &str, &str)]) -> String {
    let mut out = String::new();
    for (i, id, name, args) in frags {
        let mut call = json!({"index": i, "function": {"arguments": args}});
        if !id.is_empty() {
            call["id"] = json!(id);
            call["type"] = json!("function");
            call["function"]["name"] = json!(name);
        }
        out.push_str(&data(
            &json!({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[call]},"finish_reason":null}]})
                .to_string(),
        ));
    }
    out.push_str(&data(
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ));
    out.push_str(&data(
        r#"{"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}"#,
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

/// Anthropic: text, then `tool_use` blocks whose input comes in two pieces.
fn an_calls(text: &str, calls: &[(&str, &str, &str)]) -> String {
    let mut out = event(
        "message_start",
        r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1},"content":[]}}"#,
    );
    let mut index = 0;
    if !text.is_empty() {
        out.push_str(&event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ));
        out.push_str(&an_text(text));
        out.push_str(&event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ));
        index = 1;
    }
    for (id, name, args) in calls {
        out.push_str(&event(
            "content_block_start",
            &json!({"type":"content_block_start","index":index,
            "content_block":{"type":"tool_use","id":id,"name":name,"input":{}}})
            .to_string(),
        ));
        let (a, b) = args.split_at(args.len() / 2);
        for piece in ["", a, b] {
            out.push_str(&event(
                "content_block_delta",
                &json!({"type":"content_block_delta","index":index,
                "delta":{"type":"input_json_delta","partial_json":piece}})
                .to_string(),
            ));
        }
        out.push_str(&event(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":index}).to_string(),
        ));
        index += 1;
    }
    out.push_str(&event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#));
    out.push_str(&event("message_stop", r#"{"type":"message_stop"}"#));
    out
}

/// Gemini: one chunk with `functionCall` parts (each with a signature when given).
fn gm_calls(calls: &[(&str, Value, Option<&str>)]) -> String {
    let parts: Vec<Value> = calls
        .iter()
        .map(|(name, args, sig)| {
            let mut p = json!({"functionCall": {"name": name, "args": args}});
            if let Some(s) = sig {
                p["thoughtSignature"] = json!(s);
            }
            p
        })
        .collect();
    data(&json!({"candidates":[{"content":{"role":"model","parts":parts},"finishReason":"STOP","index":0}],
                 "usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5}}).to_string())
}

/// Ollama: one line with whole `tool_calls`, then the end.
fn ol_calls(calls: &[(&str, Value)]) -> Vec<String> {
    let tc: Vec<Value> = calls
        .iter()
        .map(|(name, args)| json!({"function": {"name": name, "arguments": args}}))
        .collect();
    vec![
        format!(
            "{}\n",
            json!({"model":"m","message":{"role":"assistant","content":"","tool_calls":tc},"done":false})
        ),
        ol_done(10, 5),
    ]
}

fn records_of(env: &Env, kind: &str) -> Vec<Value> {
    env.only_chat()
        .into_iter()
        .filter(|r| r["type"] == kind)
        .collect()
}

// ---- OpenAI ----------------------------------------------------------------------------------

#[test]
fn openai_one_call_then_the_answer_and_a_follow_up_resends_the_round() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[
            (0, "call_1", "json_value", "{\"poin"),
            (0, "", "", "ter\":\"/sql/abc123\"}"),
        ])]),
        Reply::sse(&[&oa_stream("It took 1200 ms.", 20, 6)]),
        Reply::sse(&[&oa_stream("Yes.", 30, 2)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let out = env
        .run(&["openai:gpt-test", "--data", &d, "How slow is abc123?"])
        .success();
    assert_eq!(out.stdout, "It took 1200 ms.\n");
    assert!(
        out.stderr.contains("json: /sql/abc123 … ok"),
        "{}",
        out.stderr
    );
    let reqs = s.requests();
    let first = reqs[0].json();
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["json_keys", "json_value", "json_find"]);
    let m = reqs[1].json()["messages"].clone();
    let n = m.as_array().unwrap().len();
    assert_eq!(
        m[n - 2],
        json!({"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
            "function":{"name":"json_value","arguments":"{\"pointer\":\"/sql/abc123\"}"}}]})
    );
    assert_eq!(m[n - 1]["role"], "tool");
    assert_eq!(m[n - 1]["tool_call_id"], "call_1");
    assert!(m[n - 1]["content"].as_str().unwrap().contains("1200"));
    // The chat: prompt, round, reply; usage summed in --json is checked elsewhere.
    let chat = env.only_chat();
    let kinds: Vec<&str> = chat.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["chat", "message", "round", "message"]);
    assert_eq!(
        chat[2]["calls"][0]["arguments"],
        "{\"pointer\":\"/sql/abc123\"}"
    );
    assert_eq!(chat[2]["turn"], 1);
    assert_eq!(chat[2]["round"], 1);
    // A follow-up turn (without --data) sends the round again in the OpenAI shape.
    let id = out.chat_id();
    env.run(&["chat", &id, "Is that slow?"]).success();
    let m = s.requests()[2].json()["messages"].clone();
    let roles: Vec<&str> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(m[1]["tool_calls"][0]["id"], "call_1");
    assert!(s.requests()[2].json().get("tools").is_none());
}

#[test]
fn openai_parallel_calls_all_run_and_all_results_go_back_in_order() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[
            (0, "call_a", "json_value", ""),
            (1, "call_b", "json_keys", "{\"path\""),
            (0, "", "", "{\"pointer\":\"/sql/def456\"}"),
            (1, "", "", ":\"/sql\"}"),
        ])]),
        Reply::sse(&[&oa_stream("Two statements.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let out = env
        .run(&["openai:gpt-test", "--data", &d, "--json", "what is there?"])
        .success();
    let j = out.json();
    assert_eq!(j["reply"], "Two statements.");
    let calls = j["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["name"], "json_value");
    assert_eq!(calls[0]["status"], "ok");
    assert_eq!(calls[1]["arguments"], "{\"path\":\"/sql\"}");
    // Usage is summed over both requests.
    assert_eq!(j["usage"]["input"], 11);
    assert_eq!(j["usage"]["output"], 6);
    let m = s.requests()[1].json()["messages"].clone();
    let n = m.as_array().unwrap().len();
    assert_eq!(m[n - 3]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(m[n - 2]["tool_call_id"], "call_a");
    assert_eq!(m[n - 1]["tool_call_id"], "call_b");
    assert!(m[n - 1]["content"].as_str().unwrap().contains("abc123"));
}

/// OpenAI: each call whole in a chunk of its own, `index` as given (`None`: left out).
fn oa_whole_calls(calls: &[(Option<u64>, &str, &str, &str)]) -> String {
    let mut out = String::new();
    for (index, id, name, args) in calls {
        let mut call = json!({"id": id, "type": "function",
            "function": {"name": name, "arguments": args}});
        if let Some(i) = index {
            call["index"] = json!(i);
        }
        out.push_str(&data(
            &json!({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[call]},"finish_reason":null}]})
                .to_string(),
        ));
    }
    out.push_str(&data(
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

#[test]
fn parallel_calls_under_a_reused_or_missing_index_all_run() {
    // H2-5: Ollama's /v1 labels every parallel call `index: 0`; other servers leave it out.
    for (first, second) in [(Some(0), Some(0)), (None, None), (Some(u64::MAX), None)] {
        let s = Server::start(vec![
            Reply::sse(&[&oa_whole_calls(&[
                (first, "a1", "json_keys", "{\"path\": \"/\"}"),
                (second, "b2", "json_value", "{\"pointer\": \"/waits\"}"),
            ])]),
            Reply::sse(&[&oa_stream("Both.", 1, 1)]),
        ]);
        let env = Env::for_provider("openai", &s);
        let d = doc(&env);
        let out = env
            .run(&["openai:gpt-test", "--data", &d, "--json", "what is there?"])
            .success();
        let j = out.json();
        let calls = j["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2, "{first:?}: {calls:?}");
        assert_eq!(calls[0]["name"], "json_keys");
        assert_eq!(calls[0]["status"], "ok", "{calls:?}");
        assert_eq!(calls[1]["name"], "json_value");
        assert_eq!(calls[1]["status"], "ok", "{calls:?}");
        let m = s.requests()[1].json()["messages"].clone();
        let n = m.as_array().unwrap().len();
        assert_eq!(m[n - 2]["tool_call_id"], "a1");
        assert_eq!(m[n - 1]["tool_call_id"], "b2");
        assert!(
            m[n - 1]["content"]
                .as_str()
                .unwrap()
                .contains("db file sequential read")
        );
    }
}

#[test]
fn every_key_json_keys_lists_is_reached_by_its_pointer() {
    // H2-10: `/pad ` was trimmed to `/pad`, and `/` never reached the key "".
    let args = |p: &str| json!({"pointer": p}).to_string();
    let (a, b, c) = (args("/pad "), args("/t\t"), args("/"));
    let s = Server::start(vec![
        Reply::sse(&[&oa_whole_calls(&[
            (Some(0), "a", "json_value", a.as_str()),
            (Some(1), "b", "json_value", b.as_str()),
            (Some(2), "c", "json_value", c.as_str()),
        ])]),
        Reply::sse(&[&oa_stream("Found.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = env.project_file(
        "odd.json",
        r#"{"pad ": 1, " lead": 2, "": {"k": 3}, "t\t": 4}"#,
    );
    env.run(&[
        "openai:gpt-test",
        "--data",
        d.to_str().unwrap(),
        "what is there?",
    ])
    .success();
    let m = s.requests()[1].json()["messages"].clone();
    let n = m.as_array().unwrap().len();
    let results: Vec<&str> = (n - 3..n)
        .map(|i| m[i]["content"].as_str().unwrap())
        .collect();
    assert_eq!(results[0], "1", "{results:?}");
    assert_eq!(results[1], "4", "{results:?}");
    assert!(
        results[2].contains("\"k\": 3") && !results[2].contains("pad"),
        "{results:?}"
    );
}

#[test]
fn the_arguments_of_one_reply_are_bounded_in_all() {
    // H2-3: 128 calls of 1 MiB each were taken, held several times over and saved as one line.
    let big = format!("{{\"path\": \"/{}\"}}", "A".repeat(1000 * 1024));
    let calls: Vec<(Option<u64>, String)> = (0..4).map(|i| (Some(i), format!("c{i}"))).collect();
    let frags: Vec<(Option<u64>, &str, &str, &str)> = calls
        .iter()
        .map(|(i, id)| (*i, id.as_str(), "json_keys", big.as_str()))
        .collect();
    let s = Server::start(vec![Reply::sse(&[&oa_whole_calls(&frags)])]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let out = env
        .run(&["openai:gpt-test", "--data", &d, "what is there?"])
        .code(1);
    assert!(
        out.stderr
            .contains("arguments are longer than 2 MiB in all"),
        "{}",
        out.stderr
    );
    assert_eq!(s.requests().len(), 1);
    // Nothing of it is saved; the prompt is kept.
    let chat = std::fs::read_to_string(env.chats_dir().join(&env.chat_files()[0])).unwrap();
    assert!(chat.len() < 64 * 1024, "{}", chat.len());
    assert!(chat.contains("what is there?"));
}

#[test]
fn openai_malformed_calls_get_error_results_and_the_loop_goes_on() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[
            (0, "call_1", "json_value", "{not json"),
            (1, "call_2", "drop_tables", "{}"),
            (2, "call_3", "json_value", "{\"pointer\": 7}"),
            (3, "call_4", "json_value", "{\"pointer\":\"/sql/nope\"}"),
        ])]),
        Reply::sse(&[&oa_stream("Sorry.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let out = env.run(&["openai:gpt-test", "--data", &d, "go"]).success();
    assert_eq!(out.stdout, "Sorry.\n");
    let round = &records_of(&env, "round")[0];
    let results = round["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for r in results {
        assert_eq!(r["error"], true, "{r}");
    }
    let text = |i: usize| results[i]["content"].as_str().unwrap().to_owned();
    assert!(text(0).contains("not valid JSON"), "{}", text(0));
    assert!(
        text(1).contains("unknown tool \"drop_tables\""),
        "{}",
        text(1)
    );
    assert!(text(1).contains("json_value"), "{}", text(1));
    assert!(text(2).contains("pointer: expected string"), "{}", text(2));
    assert_eq!(text(3), "not found: /sql/nope");
    // Each went back as a tool message.
    let m = s.requests()[1].json()["messages"].clone();
    let tools: Vec<&Value> = m
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["role"] == "tool")
        .collect();
    assert_eq!(tools.len(), 4);
    assert!(
        out.stderr.contains("drop_tables … error: unknown tool"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_round_limit_ends_the_turn_and_the_chat_stays_valid() {
    let call = oa_calls(&[(0, "call_1", "json_keys", "{\"path\":\"/\"}")]);
    let s = Server::start(vec![
        Reply::sse(&[&call]),
        Reply::sse(&[&call]),
        Reply::sse(&[&oa_stream("Fine.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let out = env.run(&[
        "openai:gpt-test",
        "--data",
        &d,
        "--max-tool-rounds",
        "1",
        "loop",
    ]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("stopped after 1 tool round (the limit;"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("ran: json_keys ×1"), "{}", out.stderr);
    let id = out.chat_id();
    // Not a reply cut short: what happened, and the retry that helps.
    assert!(!out.stderr.contains("cut short"), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "ai: the tool round is saved in chat {id}; the calls the model asked for after that were not run; \
             run the turn again with a higher limit: ai chat retry {id} --max-tool-rounds 2 (with the same --data and --tools-file)"
        )),
        "{}",
        out.stderr
    );
    // The calls past the limit are kept, each with a result from ai that says it did not run;
    // the reply is empty: no words of ai's stored as the model's.
    let rounds = records_of(&env, "round");
    assert_eq!(rounds.len(), 2);
    let refused = &rounds[1]["results"][0];
    assert_eq!(refused["error"], true);
    assert!(
        refused["content"]
            .as_str()
            .unwrap()
            .starts_with("not run: this turn reached its limit of 1 tool round"),
        "{refused}"
    );
    let reply = env.only_messages()[1].clone();
    assert_eq!(reply["content"], "", "{reply}");
    assert_eq!(reply["interrupted"], true);
    // The follow-up sends a well-formed history: every call has its result.
    env.run(&["chat", &id, "and now?"]).success();
    let m = s.requests()[2].json()["messages"].clone();
    let roles: Vec<&str> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user"
        ]
    );
    assert_eq!(m[1]["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(m[3]["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(m[5]["content"], "(no reply: it was interrupted)");
    assert!(!m.to_string().contains("stopped after"), "{m}");
}

#[test]
fn a_turn_stopped_at_the_round_limit_is_run_again_by_the_retry_it_names() {
    let call = oa_calls(&[(0, "call_1", "json_keys", "{\"path\":\"/\"}")]);
    let s = Server::start(vec![
        Reply::sse(&[&call]),
        Reply::sse(&[&call]),
        Reply::sse(&[&call]),
        Reply::sse(&[&oa_stream("Two keys.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let args = ["openai:gpt-test", "--data", &d, "--max-tool-rounds", "1"];
    let out = env.run(&[&args[..], &["what is there?"]].concat());
    assert_eq!(out.code, Some(1), "{out:?}");
    let id = out.chat_id();
    let out = env
        .run(&["chat", "retry", &id, "--data", &d, "--max-tool-rounds", "2"])
        .success();
    assert_eq!(out.stdout, "Two keys.\n");
    // The retry resent the prompt alone: the stopped turn is replaced, not sent again.
    let m = s.requests()[2].json()["messages"].clone();
    assert_eq!(m.as_array().unwrap().len(), 1, "{m}");
    assert_eq!(m[0]["content"], "what is there?");
}

#[test]
fn a_stream_cut_inside_a_tool_call_leaves_no_call_without_its_result() {
    let partial = data(
        &json!({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"json_value","arguments":"{\"poi"}}]}}]})
            .to_string(),
    );
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[(
            0,
            "call_0",
            "json_keys",
            "{\"path\":\"/sql\"}",
        )])]),
        Reply::sse(&[&oa_text("Looking"), &partial]).cut(),
        Reply::sse(&[&oa_stream("ok", 1, 1)]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"retries":0}}}"#);
    let d = doc(&env);
    let out = env.run(&["openai:gpt-test", "--data", &d, "go"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    let chat = env.only_chat();
    let kinds: Vec<&str> = chat.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["chat", "message", "round", "message"]);
    assert_eq!(chat[3]["interrupted"], true);
    let id = out.chat_id();
    env.run(&["chat", &id, "again"]).success();
    let m = s.requests()[2].json()["messages"].clone();
    let calls = m
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x.get("tool_calls").is_some())
        .count();
    let results = m
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["role"] == "tool")
        .count();
    assert_eq!((calls, results), (1, 1));
    let _ = &mut env;
}

#[test]
fn quiet_hides_the_tool_lines() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[(
            0,
            "call_1",
            "json_find",
            "{\"text\":\"backup\"}",
        )])]),
        Reply::sse(&[&oa_stream("Found it.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let out = env
        .run(&["openai:gpt-test", "-q", "--data", &d, "find backup"])
        .success();
    assert_eq!(out.stdout, "Found it.\n");
    assert!(!out.stderr.contains("json:"), "{}", out.stderr);
    let result = &records_of(&env, "round")[0]["results"][0]["content"];
    assert!(
        result.as_str().unwrap().contains("/sql/abc123/text"),
        "{result}"
    );
}

// ---- Anthropic -------------------------------------------------------------------------------

#[test]
fn anthropic_parallel_tool_use_and_results_first_in_the_user_message() {
    let s = Server::start(vec![
        Reply::sse(&[&an_calls(
            "Let me look.",
            &[
                (
                    "toolu_1",
                    "json_value",
                    "{\"pointer\":\"/sql/abc123/elapsed_ms\"}",
                ),
                ("toolu_2", "json_value", "{\"pointer\":\"/nope\"}"),
            ],
        )]),
        Reply::sse(&[&an_start(1), &an_text("1200 ms."), &an_end(1)]),
        Reply::sse(&[&an_start(1), &an_text("ok"), &an_end(1)]),
    ]);
    let env = Env::for_provider("anthropic", &s);
    let d = doc(&env);
    let out = env
        .run(&["anthropic:claude-test", "--data", &d, "how slow?"])
        .success();
    assert_eq!(out.stdout, "Let me look.\n\n1200 ms.\n");
    let first = s.requests()[0].json();
    assert_eq!(first["tools"][1]["name"], "json_value");
    assert!(first["tools"][1]["input_schema"]["properties"]["pointer"].is_object());
    let m = s.requests()[1].json()["messages"].clone();
    assert_eq!(
        m[1],
        json!({"role":"assistant","content":[
            {"type":"text","text":"Let me look."},
            {"type":"tool_use","id":"toolu_1","name":"json_value","input":{"pointer":"/sql/abc123/elapsed_ms"}},
            {"type":"tool_use","id":"toolu_2","name":"json_value","input":{"pointer":"/nope"}}]})
    );
    assert_eq!(
        m[2],
        json!({"role":"user","content":[
            {"type":"tool_result","tool_use_id":"toolu_1","content":"1200"},
            {"type":"tool_result","tool_use_id":"toolu_2","content":"not found: /nope","is_error":true}]})
    );
    let id = out.chat_id();
    env.run(&["chat", &id, "more"]).success();
    let m = s.requests()[2].json()["messages"].clone();
    assert_eq!(m[2]["content"][0]["type"], "tool_result");
    assert_eq!(m[3], json!({"role":"assistant","content":"1200 ms."}));
}

// ---- Gemini ----------------------------------------------------------------------------------

#[test]
fn gemini_calls_keep_their_signature_and_it_is_sent_back() {
    let s = Server::start(vec![
        Reply::sse(&[&gm_calls(&[
            ("json_keys", json!({"path": "/waits"}), Some("sig-xyz")),
            ("json_value", json!({"pointer": "/sql/def456"}), None),
        ])]),
        Reply::sse(&[&gm_chunk("One wait.", Some((1, 1)))]),
    ]);
    let env = Env::for_provider("gemini-api", &s);
    let d = doc(&env);
    env.run(&["gemini-api:gemini-test", "--data", &d, "waits?"])
        .success();
    let first = s.requests()[0].json();
    assert_eq!(
        first["tools"][0]["functionDeclarations"][0]["name"],
        "json_keys"
    );
    let c = s.requests()[1].json()["contents"].clone();
    assert_eq!(
        c[1],
        json!({"role":"model","parts":[
            {"functionCall":{"name":"json_keys","args":{"path":"/waits"}},"thoughtSignature":"sig-xyz"},
            {"functionCall":{"name":"json_value","args":{"pointer":"/sql/def456"}}}]})
    );
    assert_eq!(c[2]["role"], "user");
    assert_eq!(c[2]["parts"][0]["functionResponse"]["name"], "json_keys");
    assert!(
        c[2]["parts"][0]["functionResponse"]["response"]["result"]
            .as_str()
            .unwrap()
            .contains("db file sequential read")
    );
    assert_eq!(c[2]["parts"].as_array().unwrap().len(), 2);
    let round = &records_of(&env, "round")[0];
    assert_eq!(round["calls"][0]["signature"], "sig-xyz");
    assert_ne!(round["calls"][0]["id"], round["calls"][1]["id"]);
}

// ---- Ollama ----------------------------------------------------------------------------------

#[test]
fn ollama_whole_tool_calls_and_tool_messages_by_name() {
    let lines = ol_calls(&[("json_value", json!({"pointer": "/sql/abc123/elapsed_ms"}))]);
    let s = Server::start(vec![
        Reply::ndjson(&[&lines[0], &lines[1]]),
        Reply::ndjson(&[&ol_text("1200."), &ol_done(1, 1)]),
    ]);
    let env = Env::for_provider("ollama-api", &s);
    let d = doc(&env);
    let out = env
        .run(&["ollama-api:llama-test", "--data", &d, "slow?"])
        .success();
    assert_eq!(out.stdout, "1200.\n");
    let first = s.requests()[0].json();
    assert_eq!(first["tools"][0]["type"], "function");
    let m = s.requests()[1].json()["messages"].clone();
    assert_eq!(
        m[1],
        json!({"role":"assistant","content":"","tool_calls":[
            {"function":{"name":"json_value","arguments":{"pointer":"/sql/abc123/elapsed_ms"}}}]})
    );
    assert_eq!(
        m[2],
        json!({"role":"tool","tool_name":"json_value","content":"1200"})
    );
}

// ---- tools files, both documents -------------------------------------------------------------

#[test]
fn a_tools_file_declares_domain_tools_with_a_join_and_both_documents() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[
            (
                0,
                "c1",
                "get_sql_stats",
                "{\"sql_id\":\"abc123\",\"document\":\"both\"}",
            ),
            (1, "c2", "get_sql_stats", "{\"sql_id\":\"zzz\"}"),
            (
                2,
                "c3",
                "get_wait_event",
                "{\"event_name\":\"db file sequential read\"}",
            ),
        ])]),
        Reply::sse(&[&oa_stream("Done.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let d2 = env
        .project_file(
            "after.json",
            r#"{"sql": {"abc123": {"elapsed_ms": 300}}, "waits": {}}"#,
        )
        .to_str()
        .unwrap()
        .to_owned();
    env.project_file(
        "descriptions.json",
        r#"{"db file sequential read": "a single-block read"}"#,
    );
    let tf = env.project_file(
        "tools.json",
        r#"{"documents": {"desc": "descriptions.json"},
            "tools": [
              {"name": "get_sql_stats", "description": "One SQL statement's statistics",
               "parameters": {"type": "object", "properties": {"sql_id": {"type": "string"}}},
               "pointer": "/sql/{sql_id}"},
              {"name": "get_wait_event", "description": "One wait event",
               "pointer": "/waits/{event_name}",
               "join": {"document": "desc", "pointer": "/{event_name}"}}]}"#,
    );
    env.run(&[
        "openai:gpt-test",
        "--data",
        &d,
        "--data",
        &d2,
        "--tools-file",
        tf.to_str().unwrap(),
        "compare",
    ])
    .success();
    let tools = s.requests()[0].json()["tools"].clone();
    let get = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "get_sql_stats")
        .unwrap();
    assert_eq!(get["function"]["parameters"]["required"], json!(["sql_id"]));
    assert_eq!(
        get["function"]["parameters"]["properties"]["document"]["enum"],
        json!(["primary", "secondary", "both"])
    );
    let results = records_of(&env, "round")[0]["results"].clone();
    let both = results[0]["content"].as_str().unwrap();
    assert!(both.contains("[primary: perf.json]"), "{both}");
    assert!(both.contains("[secondary: after.json]"), "{both}");
    assert!(both.contains("1200") && both.contains("300"), "{both}");
    assert_eq!(results[1]["error"], true);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("not found: sql_id \"zzz\""),
        "{}",
        results[1]["content"]
    );
    let joined = results[2]["content"].as_str().unwrap();
    assert!(
        joined.contains("\"description\": \"a single-block read\""),
        "{joined}"
    );
    assert!(joined.contains("\"ms\": 80"), "{joined}");
}

// ---- knowledge bases as tools ----------------------------------------------------------------

fn notes(env: &Env) {
    let dir = env.path("zettel");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("01_001_Backup_plan_a1b2c3d4e.md"),
        "# Backup plan\n\nThe database backup runs every night at 2 am to the NAS.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("02_001_Coffee_c3d4e5f60.md"),
        "# Coffee\n\nWe brew coffee with a French press.\n",
    )
    .unwrap();
    env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
        .success();
}

#[test]
fn knowledge_bases_as_tools_search_list_and_sources() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[
            (0, "c1", "list_knowledge_bases", "{}"),
            (
                1,
                "c2",
                "search_knowledge_base",
                "{\"query\":\"backup\",\"collection_name\":\"notes\"}",
            ),
            (
                2,
                "c3",
                "search_knowledge_base",
                "{\"query\":\"x\",\"collection_name\":\"work\"}",
            ),
        ])]),
        Reply::sse(&[&oa_stream("At 2 am [1].", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    notes(&env);
    let out = env
        .run(&[
            "openai:gpt-test",
            "--kb",
            "notes",
            "--tools",
            "When is the backup?",
        ])
        .success();
    // Nothing was retrieved before the turn: the prompt goes alone, with the tools.
    let first = s.requests()[0].json();
    let m = first["messages"].as_array().unwrap();
    assert_eq!(m.last().unwrap()["content"], "When is the backup?");
    assert!(
        m[0]["content"]
            .as_str()
            .unwrap()
            .contains("search_knowledge_base")
    );
    let results = records_of(&env, "round")[0]["results"].clone();
    let list: Value = serde_json::from_str(results[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(list[0]["name"], "notes");
    assert_eq!(list[0]["notes"], 2);
    let found = results[1]["content"].as_str().unwrap();
    // (IDs, titles and orderings come from the note reader; its parsing is tested in kb.)
    assert!(
        found.contains("[1] ID: ") && found.contains("a1b2c3d4e"),
        "{found}"
    );
    assert!(found.contains("every night at 2 am"), "{found}");
    assert_eq!(results[2]["error"], true);
    assert!(
        results[2]["content"]
            .as_str()
            .unwrap()
            .contains("no knowledge base named \"work\"; knowledge bases: notes")
    );
    assert!(
        out.stderr
            .contains("searching notes for \"backup\" … 1 result"),
        "{}",
        out.stderr
    );
    let sources = out.stderr.split("Sources:\n").nth(1).unwrap_or("");
    assert!(
        sources.starts_with("  [1] ") && sources.contains("a1b2c3d4e"),
        "{}",
        out.stderr
    );
    assert!(
        !sources.contains("[2]"),
        "only the notes the model got: {}",
        out.stderr
    );
    let reply = env.only_messages()[1].clone();
    assert!(
        reply["sources"][0]["id"]
            .as_str()
            .unwrap()
            .contains("a1b2c3d4e")
    );
    assert_eq!(reply["sources"].as_array().unwrap().len(), 1);
}

#[test]
fn a_chat_remembers_that_its_knowledge_bases_are_tools_until_kb_chooses_again() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("A.", 1, 1)]),
        Reply::sse(&[&oa_stream("B.", 1, 1)]),
        Reply::sse(&[&oa_stream("C.", 1, 1)]),
        Reply::sse(&[&oa_stream("D.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    notes(&env);
    let out = env
        .run(&["openai:gpt-test", "--kb", "notes", "--tools", "backup?"])
        .success();
    let id = out.chat_id();
    let header = env.only_chat()[0].clone();
    assert_eq!(header["kb"], json!(["notes"]));
    assert_eq!(header["kb_tools"], true);
    let tools_of = |i: usize| -> Vec<String> {
        let body = s.requests()[i].json();
        body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|x| x["function"]["name"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let last_user = |i: usize| -> String {
        let body = s.requests()[i].json();
        body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // A follow-up without --tools: still tools, nothing retrieved before it.
    env.run(&["chat", &id, "and the NAS?"]).success();
    assert_eq!(
        tools_of(1),
        ["list_knowledge_bases", "search_knowledge_base"]
    );
    assert_eq!(last_user(1), "and the NAS?");
    // --kb without --tools chooses them again: retrieval, from now on.
    env.run(&["chat", &id, "--kb", "notes", "backup again?"])
        .success();
    assert!(tools_of(2).is_empty());
    assert!(
        last_user(2).contains("every night at 2 am"),
        "{}",
        last_user(2)
    );
    assert!(env.only_chat()[0].get("kb_tools").is_none());
    env.run(&["chat", &id, "and coffee?"]).success();
    assert!(tools_of(3).is_empty());
    assert!(last_user(3).ends_with("and coffee?"));
}

/// 30 notes of about 2 KiB that all hold `commonword`: 20 passages of them pass 32 KiB.
fn long_notes(env: &Env) {
    let dir = env.path("longp");
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed: u64 = 3;
    for i in 0..30u64 {
        let words: Vec<String> = (0..300)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!("w{}", (seed >> 33) % 100_000)
            })
            .collect();
        std::fs::write(
            dir.join(format!("{i:02}_Long_note_{:09x}.md", 0xabc000000u64 + i)),
            format!("# Long {i}\n\ncommonword {}\n", words.join(" ")),
        )
        .unwrap();
    }
    env.run(&["kb", "add", "longp", dir.to_str().unwrap()])
        .success();
}

#[test]
fn a_search_result_over_the_size_limit_keeps_whole_passages_and_only_their_sources() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[(
            0,
            "c1",
            "search_knowledge_base",
            "{\"query\":\"commonword\",\"max_results\":20}",
        )])]),
        Reply::sse(&[&oa_stream("done", 1, 1)]),
        Reply::sse(&[&oa_stream("no", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"chat":{"window_tokens":100000}}"#);
    long_notes(&env);
    let out = env
        .run(&["openai:gpt-test", "--kb", "longp", "--tools", "--json", "q"])
        .success();
    // What the model got: whole passages, each quote closed, under the limit, one note.
    let body = s.requests()[1].json();
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(tool.len() <= 32 * 1024, "{}", tool.len());
    let opened = tool.matches(" source>>").count();
    assert!((10..20).contains(&opened), "{opened}");
    assert_eq!(opened, tool.matches(" end>>").count(), "{tool}");
    let left = 20 - opened;
    assert!(
        tool.ends_with(&format!(
            "({left} more passages matched but were left out to keep this result under 32 KiB; \
             ask for fewer with max_results, or search with more precise words)"
        )),
        "{}",
        &tool[tool.len() - 300..]
    );
    assert!(!tool.contains("(cut"), "one note, and no byte cut");
    assert!(!tool.contains("deeper path"));
    // The sources are the passages it got, in --json, in the chat and on stderr.
    let json = out.json();
    assert_eq!(json["sources"].as_array().unwrap().len(), opened, "{json}");
    let reply = env.only_messages()[1].clone();
    assert_eq!(reply["sources"].as_array().unwrap().len(), opened);
    let round = records_of(&env, "round")[0].clone();
    assert_eq!(round["results"][0]["truncated"], true);
    assert!(
        out.stderr.contains(&format!(
            "… {opened} results ({left} more left out: the result is kept under 32 KiB)"
        )),
        "{}",
        out.stderr
    );
    // A follow-up sends the same result again, with no second note.
    let id = out.chat_id();
    env.run(&["chat", &id, "--tools", "more?"]).success();
    let again = s.requests()[2].json();
    let resent = again["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .clone();
    assert_eq!(resent.as_str().unwrap(), tool);
}

#[test]
fn a_cli_backend_is_told_which_providers_run_tools() {
    let env = Env::new();
    let d = doc(&env);
    let out = env.run(&["echo", "--data", &d, "hi"]).code(2);
    assert!(
        out.stderr.contains("not an HTTP provider"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("anthropic, gemini-api, ollama-api"),
        "{}",
        out.stderr
    );
    // --kb without --tools works there (retrieval), and a bad --data file fails first.
    let out = env
        .run(&["echo", "--data", "/nonexistent.json", "hi"])
        .code(2);
    assert!(
        out.stderr.contains("cannot read /nonexistent.json"),
        "{}",
        out.stderr
    );
}

// ---- every protocol: the round limit, a cut stream, and a valid follow-up ---------------------

/// A reply asking for one `json_keys` call, and a plain answer, in `provider`'s shape.
fn call_and_answer(provider: &str) -> (Reply, Reply) {
    call_and_answer_cut(provider, false)
}

/// The same, the call's reply cut in the middle when `cut`.
fn call_and_answer_cut(provider: &str, cut: bool) -> (Reply, Reply) {
    let half = |s: String| -> String { if cut { s[..s.len() / 2].to_owned() } else { s } };
    let fix = |r: Reply| if cut { r.cut() } else { r };
    match provider {
        "anthropic" => (
            fix(Reply::sse(&[&half(an_calls(
                "",
                &[("toolu_1", "json_keys", "{\"path\":\"/\"}")],
            ))])),
            Reply::sse(&[&an_start(1), &an_text("ok"), &an_end(1)]),
        ),
        "gemini-api" => (
            fix(Reply::sse(&[&half(gm_calls(&[(
                "json_keys",
                json!({"path": "/"}),
                Some("s1"),
            )]))])),
            Reply::sse(&[&gm_chunk("ok", Some((1, 1)))]),
        ),
        "ollama-api" => {
            let l = ol_calls(&[("json_keys", json!({"path": "/"}))]);
            (
                fix(Reply::ndjson(&[&half(format!("{}{}", l[0], l[1]))])),
                Reply::ndjson(&[&ol_text("ok"), &ol_done(1, 1)]),
            )
        }
        _ => (
            fix(Reply::sse(&[&half(oa_calls(&[(
                0,
                "call_1",
                "json_keys",
                "{\"path\":\"/\"}",
            )]))])),
            Reply::sse(&[&oa_stream("ok", 1, 1)]),
        ),
    }
}

fn model_of(provider: &str) -> String {
    format!("{provider}:m-test")
}

/// The calls and results in a request body, counted in the protocol's own shape.
fn calls_and_results(provider: &str, body: &Value) -> (usize, usize) {
    let count = |list: &Value, f: &dyn Fn(&Value) -> usize| -> usize {
        list.as_array().map_or(0, |a| a.iter().map(f).sum())
    };
    match provider {
        "anthropic" => {
            let of = |kind: &'static str| {
                move |m: &Value| {
                    m["content"]
                        .as_array()
                        .map_or(0, |c| c.iter().filter(|b| b["type"] == kind).count())
                }
            };
            (
                count(&body["messages"], &of("tool_use")),
                count(&body["messages"], &of("tool_result")),
            )
        }
        "gemini-api" => {
            let of = |key: &'static str| {
                move |m: &Value| {
                    m["parts"]
                        .as_array()
                        .map_or(0, |c| c.iter().filter(|p| p.get(key).is_some()).count())
                }
            };
            (
                count(&body["contents"], &of("functionCall")),
                count(&body["contents"], &of("functionResponse")),
            )
        }
        _ => (
            count(&body["messages"], &|m: &Value| {
                m["tool_calls"].as_array().map_or(0, Vec::len)
            }),
            count(&body["messages"], &|m: &Value| {
                usize::from(m["role"] == "tool")
            }),
        ),
    }
}

#[test]
fn every_protocol_stops_at_the_round_limit_and_the_follow_up_is_well_formed() {
    for provider in ["openai", "anthropic", "gemini-api", "ollama-api"] {
        let (call, answer) = call_and_answer(provider);
        let s = Server::start(vec![call.clone(), call, answer]);
        let env = Env::for_provider(provider, &s);
        let d = doc(&env);
        let out = env.run(&[
            &model_of(provider),
            "--data",
            &d,
            "--max-tool-rounds",
            "1",
            "go",
        ]);
        assert_eq!(out.code, Some(1), "{provider}: {out:?}");
        assert!(
            out.stderr.contains("stopped after 1 tool round"),
            "{provider}: {}",
            out.stderr
        );
        let id = out.chat_id();
        env.run(&["chat", &id, "next"]).success();
        let body = s.requests()[2].json();
        // The round that ran, and the calls past the limit with their "not run" results.
        assert_eq!(
            calls_and_results(provider, &body),
            (2, 2),
            "{provider}: {body}"
        );
        assert!(
            body.to_string()
                .contains("not run: this turn reached its limit")
        );
        assert!(
            !body.to_string().contains("stopped after"),
            "{provider}: {body}"
        );
    }
}

#[test]
fn every_protocol_keeps_the_chat_valid_when_the_stream_is_cut_after_a_round() {
    for provider in ["openai", "anthropic", "gemini-api", "ollama-api"] {
        let (call, answer) = call_and_answer(provider);
        // The second reply is the first one cut short: a call that never completes.
        let (cut, _) = call_and_answer_cut(provider, true);
        let s = Server::start(vec![call, cut, answer]);
        let mut env = Env::for_provider(provider, &s);
        env.write_config(&format!(
            r#"{{"providers":{{"{provider}":{{"retries":0}}}}}}"#
        ));
        let d = doc(&env);
        let out = env.run(&[&model_of(provider), "--data", &d, "go"]);
        let kinds: Vec<String> = env
            .only_chat()
            .iter()
            .map(|r| r["type"].as_str().unwrap().to_owned())
            .collect();
        assert!(
            kinds.starts_with(&["chat".into(), "message".into(), "round".into()]),
            "{provider}: {kinds:?} {out:?}"
        );
        let id = out.chat_id();
        env.run(&["chat", &id, "next"]).success();
        let body = s.requests()[2].json();
        let (calls, results) = calls_and_results(provider, &body);
        assert_eq!(calls, results, "{provider}: {body}");
        assert!(calls >= 1, "{provider}: {body}");
        let _ = &mut env;
    }
}

#[test]
fn the_timeout_bounds_the_whole_turn() {
    let (call, _) = call_and_answer("openai");
    // The second reply never ends until the test opens the gate (after the run): only the
    // turn's deadline can end it, however slowly the machine runs.
    let gate = Gate::new();
    let slow = Reply::sse(&[&oa_text("late")]).hold(&gate);
    let s = Server::start(vec![call, slow]);
    let mut env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"retries":0}}}"#);
    let d = doc(&env);
    let out = env.run(&["openai:gpt-test", "--data", &d, "--timeout", "4", "go"]);
    gate.open();
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.stdout, "late\n", "{out:?}");
    // Only the deadline can have ended it, and `ai` says so.
    assert!(
        out.stderr
            .contains("error: the reply from openai took longer than "),
        "{out:?}"
    );
    assert_eq!(s.requests().len(), 2, "{out:?}");
    assert_eq!(records_of(&env, "round").len(), 1);
    let _ = &mut env;
}

#[test]
fn rounds_count_toward_the_85_percent_warning() {
    // A big tool result makes the chat large: the next turn warns, though the prompts are tiny.
    let big: String = (0..200).map(|i| format!("\"key{i:03}\": {i}, ")).collect();
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[(0, "call_1", "json_keys", "{\"path\":\"/\"}")])]),
        Reply::sse(&[&oa_stream("ok", 1, 1)]),
        Reply::sse(&[&oa_stream("ok", 1, 1)]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.write_config(r#"{"context_tokens":{"openai":1000}}"#);
    let d = env.project_file("wide.json", format!("{{{} \"z\": 0}}", big));
    let out = env
        .run(&["openai:gpt-test", "--data", d.to_str().unwrap(), "keys?"])
        .success();
    assert!(!out.stderr.contains("estimated tokens"), "{}", out.stderr);
    let id = out.chat_id();
    let out = env.run(&["chat", &id, "and?"]).success();
    assert!(out.stderr.contains("% of the 1000"), "{}", out.stderr);
    let _ = &mut env;
}

#[test]
fn bedrock_converse_tool_use_and_a_tool_result() {
    let frames = vec![
        br_event("messageStart", r#"{"role":"assistant"}"#),
        br_event(
            "contentBlockStart",
            r#"{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"json_value"}}}"#,
        ),
        br_event(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"pointer\":"}}}"#,
        ),
        br_event(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"toolUse":{"input":"\"/sql/abc123/elapsed_ms\"}"}}}"#,
        ),
        br_event("contentBlockStop", r#"{"contentBlockIndex":0}"#),
        br_event(
            "contentBlockStart",
            r#"{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_2","name":"no_such_tool"}}}"#,
        ),
        br_event(
            "contentBlockDelta",
            r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{}"}}}"#,
        ),
        br_event("messageStop", r#"{"stopReason":"tool_use"}"#),
        br_event(
            "metadata",
            r#"{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7}}"#,
        ),
    ];
    let s = Server::start(vec![
        Reply::eventstream(&frames),
        Reply::eventstream(&br_stream("1200 ms.", 5, 2)),
    ]);
    let env = Env::for_provider("bedrock", &s);
    let d = doc(&env);
    let out = env
        .run(&[
            "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0",
            "--data",
            &d,
            "--json",
            "how slow?",
        ])
        .success();
    let j = out.json();
    assert_eq!(j["reply"], "1200 ms.");
    assert_eq!(j["usage"]["input"], 8, "usage summed over the rounds");
    let first = s.requests()[0].json();
    let spec = &first["toolConfig"]["tools"][0]["toolSpec"];
    assert!(
        spec["name"].is_string() && spec["inputSchema"]["json"].is_object(),
        "{first}"
    );
    let m = s.requests()[1].json()["messages"].clone();
    assert_eq!(
        m[1]["content"][0],
        json!({"toolUse": {"toolUseId": "tooluse_1", "name": "json_value",
                           "input": {"pointer": "/sql/abc123/elapsed_ms"}}})
    );
    assert_eq!(
        m[2]["content"][0],
        json!({"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "1200"}]}})
    );
    let unknown = &m[2]["content"][1]["toolResult"];
    assert_eq!(unknown["toolUseId"], "tooluse_2");
    assert_eq!(unknown["status"], "error");
}

#[test]
fn json_stream_reports_each_tool_call_as_a_line() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[(
            0,
            "call_1",
            "json_value",
            "{\"pointer\":\"/sql/abc123/elapsed_ms\"}",
        )])]),
        Reply::sse(&[&oa_stream("1200 ms.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let d = doc(&env);
    let out = env
        .run(&["--json-stream", "openai:gpt-test", "--data", &d, "slow?"])
        .success();
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tool = lines
        .iter()
        .find(|l| l["type"] == "tool")
        .unwrap_or_else(|| panic!("no tool line: {}", out.stdout));
    assert_eq!(tool["name"], "json_value");
    assert_eq!(tool["status"], "ok");
    assert!(tool["line"].as_str().unwrap().contains("/sql/abc123"));
    assert_eq!(lines.last().unwrap()["type"], "done");
    assert_eq!(lines.last().unwrap()["tool_calls"][0]["name"], "json_value");
}
