//! Structured output (`--schema`): each protocol is asked for JSON in its own way (the request
//! bodies, seen by the local test server), the reply is checked, asked for once more when it
//! does not fit, and a call whose reply never fits exits 1 with nothing on stdout.

use serde_json::{Value, json};

use crate::support::*;

const SPEC: &str = "name str, age int, tags [str]";

/// The schema the compact form stands for.
fn compact_schema() -> Value {
    json!({"type":"object",
        "properties":{"name":{"type":"string"},"age":{"type":"integer"},
                      "tags":{"type":"array","items":{"type":"string"}}},
        "required":["name","age","tags"],"additionalProperties":false})
}

/// Anthropic: the forced tool called with `args` as its input.
fn an_tool_reply(args: &str) -> String {
    let mut out = an_start(10);
    out.push_str(&event(
        "content_block_start",
        &json!({"type":"content_block_start","index":0,
            "content_block":{"type":"tool_use","id":"toolu_1","name":"json_reply","input":{}}})
        .to_string(),
    ));
    let (a, b) = args.split_at(args.len() / 2);
    for piece in ["", a, b] {
        out.push_str(&event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":0,
                "delta":{"type":"input_json_delta","partial_json":piece}})
            .to_string(),
        ));
    }
    out.push_str(&event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    ));
    out.push_str(&event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#));
    out.push_str(&event("message_stop", r#"{"type":"message_stop"}"#));
    out
}

#[test]
fn openai_strict_json_schema_and_a_reply_that_fits() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream(
        "{ \"name\": \"Ann\",\n  \"age\": 3, \"tags\": [\"a\"] }",
        5,
        5,
    )])]);
    let env = Env::for_provider("openai", &s);
    let out = env
        .run(&["openai:gpt-test", "--schema", SPEC, "who?"])
        .success();
    // Exactly the JSON, in one line.
    assert_eq!(
        out.stdout,
        "{\"name\":\"Ann\",\"age\":3,\"tags\":[\"a\"]}\n"
    );
    let b = s.only().json();
    assert_eq!(
        b["response_format"],
        json!({"type":"json_schema","json_schema":{"name":"reply","strict":true,
            "schema": compact_schema()}})
    );
    // The JSON is what the chat keeps as the reply.
    let msgs = env.messages(&out.chat_id());
    assert_eq!(
        msgs[1]["content"],
        "{\"name\":\"Ann\",\"age\":3,\"tags\":[\"a\"]}"
    );
}

#[test]
fn openai_strict_mode_rules_for_a_json_schema() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream(
        "{\"a\":\"x\",\"b\":null}",
        1,
        1,
    )])]);
    let env = Env::for_provider("openai", &s);
    let schema = r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}"#;
    let file = env.project_file("s.json", schema);
    let out = env
        .run(&["openai:gpt-test", "--schema", file.to_str().unwrap(), "q"])
        .success();
    // An optional property may come back null.
    assert_eq!(out.stdout, "{\"a\":\"x\",\"b\":null}\n");
    let sent = &s.only().json()["response_format"]["json_schema"]["schema"];
    assert_eq!(sent["required"], json!(["a", "b"]));
    assert_eq!(sent["additionalProperties"], false);
    assert_eq!(sent["properties"]["b"]["type"], json!(["integer", "null"]));
}

#[test]
fn gemini_ollama_anthropic_and_bedrock_requests() {
    let fits = "{\"name\":\"Ann\",\"age\":3,\"tags\":[]}";
    let s = Server::start(vec![
        Reply::sse(&[&gm_chunk(fits, Some((1, 1)))]),
        Reply::ndjson(&[&format!("{}{}", ol_text(fits), ol_done(1, 1))]),
        Reply::sse(&[&an_tool_reply(fits)]),
        Reply::eventstream(&[
            br_event("messageStart", r#"{"role":"assistant"}"#),
            br_event(
                "contentBlockStart",
                r#"{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"json_reply"}}}"#,
            ),
            br_event(
                "contentBlockDelta",
                &json!({"contentBlockIndex":0,"delta":{"toolUse":{"input":fits}}}).to_string(),
            ),
            br_event("contentBlockStop", r#"{"contentBlockIndex":0}"#),
            br_event("messageStop", r#"{"stopReason":"tool_use"}"#),
            br_event(
                "metadata",
                r#"{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7}}"#,
            ),
        ]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.set("GEMINI_API_KEY", KEY)
        .set("GEMINI_BASE_URL", &format!("{}/v1beta", s.url()))
        .set("OLLAMA_HOST", &s.url())
        .set("ANTHROPIC_API_KEY", KEY)
        .set("ANTHROPIC_BASE_URL", &s.url())
        .set("AWS_BEARER_TOKEN_BEDROCK", KEY)
        .set("BEDROCK_BASE_URL", &s.url())
        .set("AWS_REGION", "us-east-1");
    for model in [
        "gemini-api:gm-test",
        "ollama-api:llama-test",
        "anthropic:claude-test",
        "bedrock:anthropic.claude-test",
    ] {
        let out = env.run(&[model, "--schema", SPEC, "who?"]).success();
        assert_eq!(out.stdout, format!("{fits}\n"), "{model}");
    }
    let reqs = s.requests();
    assert_eq!(reqs.len(), 4);
    let gm = reqs[0].json();
    assert_eq!(
        gm["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert_eq!(
        gm["generationConfig"]["responseSchema"],
        json!({"type":"OBJECT","properties":{"name":{"type":"STRING"},"age":{"type":"INTEGER"},
            "tags":{"type":"ARRAY","items":{"type":"STRING"}}},"required":["name","age","tags"]})
    );
    assert_eq!(reqs[1].json()["format"], compact_schema());
    let an = reqs[2].json();
    assert_eq!(
        an["tool_choice"],
        json!({"type":"tool","name":"json_reply"})
    );
    let tool = an["tools"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(tool["name"], "json_reply");
    assert_eq!(tool["input_schema"], compact_schema());
    let br = reqs[3].json();
    assert_eq!(
        br["toolConfig"]["toolChoice"],
        json!({"tool":{"name":"json_reply"}})
    );
    assert_eq!(
        br["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"],
        compact_schema()
    );
}

#[test]
fn a_reply_that_does_not_fit_is_fixed_by_the_retry() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("{\"name\":\"Ann\",\"tags\":[]}", 1, 1)]),
        Reply::sse(&[&oa_stream("{\"name\":\"Ann\",\"age\":3,\"tags\":[]}", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env
        .run(&["openai:gpt-test", "--schema", SPEC, "who?"])
        .success();
    assert_eq!(out.stdout, "{\"name\":\"Ann\",\"age\":3,\"tags\":[]}\n");
    assert!(
        out.stderr.contains("did not fit the schema"),
        "{}",
        out.stderr
    );
    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    let m = reqs[1].json()["messages"].clone();
    assert_eq!(m[0], json!({"role":"user","content":"who?"}));
    assert_eq!(
        m[1],
        json!({"role":"assistant","content":"{\"name\":\"Ann\",\"tags\":[]}"})
    );
    let again = m[2]["content"].as_str().unwrap();
    assert!(again.contains("`age` is required"), "{again}");
    // The chat keeps the prompt and the reply that fits, not the exchange in between.
    let msgs = env.messages(&out.chat_id());
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[0]["content"], "who?");
    assert_eq!(
        msgs[1]["content"],
        "{\"name\":\"Ann\",\"age\":3,\"tags\":[]}"
    );
}

#[test]
fn a_reply_that_never_fits_exits_1_with_nothing_on_stdout() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("Sure! Ann is 3.", 1, 1)]),
        Reply::sse(&[&oa_stream(
            "{\"name\":\"Ann\",\"age\":\"three\",\"tags\":[]}",
            1,
            1,
        )]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env
        .run(&["openai:gpt-test", "--schema", SPEC, "who?"])
        .code(1);
    assert_eq!(out.stdout, "");
    assert!(
        out.error().contains("does not fit the schema")
            && out.error().contains("age: expected integer"),
        "{}",
        out.stderr
    );
    assert_eq!(s.requests().len(), 2);
    // Nothing is lost: the prompt and the last reply are in the chat, the reply marked
    // interrupted (so `ai chat retry` asks again).
    let msgs = env.messages(&out.chat_id());
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[0]["content"], "who?");
    assert_eq!(msgs[1]["interrupted"], true, "{msgs:?}");
    // With --json too: no JSON object of a success.
    let s2 = Server::start(vec![
        Reply::sse(&[&oa_stream("no", 1, 1)]),
        Reply::sse(&[&oa_stream("still no", 1, 1)]),
    ]);
    let env2 = Env::for_provider("openai", &s2);
    let out = env2
        .run(&["openai:gpt-test", "--schema", SPEC, "--json", "who?"])
        .code(1);
    assert_eq!(out.stdout, "");
}

#[test]
fn a_cli_backend_is_told_the_schema_in_its_system_prompt() {
    let env = Env::new();
    env.reply("ollama", "{\"name\":\"Ann\",\"age\":3,\"tags\":[\"x\"]}");
    let out = env.run(&["ollama", "--schema", SPEC, "who?"]).success();
    assert_eq!(
        out.stdout,
        "{\"name\":\"Ann\",\"age\":3,\"tags\":[\"x\"]}\n"
    );
    let sent = env.stdin_text("ollama");
    assert!(sent.contains("fits this JSON schema"), "{sent}");
    assert!(sent.contains("\"additionalProperties\":false"), "{sent}");
}

#[test]
fn bad_schemas_are_refused_before_anything_is_sent() {
    let env = Env::new();
    for spec in [
        "name strng",
        "{not json",
        r#"{"type":"array","items":{}}"#,
        "a int b",
    ] {
        let out = env.run(&["codex", "--schema", spec, "who?"]).code(2);
        assert!(out.error().contains("--schema"), "{spec}: {}", out.stderr);
    }
    let out = env
        .run(&["codex", "cmd", "--schema", "a int", "list files"])
        .code(2);
    assert!(out.error().contains("--schema"), "{}", out.stderr);
    assert!(env.calls().is_empty());
    assert!(env.chat_ids().is_empty());
}

/// Claude Code's `--json-schema`: the schema is its argument (not in the prompt), and the
/// reply is the result event's `structured_output`.
#[test]
fn claude_takes_the_schema_by_its_json_schema_flag() {
    let env = Env::new();
    env.reply(
        "claude",
        &[
            json!({"type":"system","subtype":"init"}),
            json!({"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}),
            json!({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Here it is."}}}),
        ]
        .iter()
        .map(|v| format!("{v}\n"))
        .chain([r#"{"type":"result","subtype":"success","is_error":false,"result":"Here it is.","structured_output":{"name":"Ann","age":3,"tags":["x"]},"usage":{"input_tokens":5,"output_tokens":2}}
"#.to_owned()])
        .collect::<String>(),
    );
    let out = env.run(&["sonnet", "--schema", SPEC, "who?"]).success();
    assert_eq!(
        out.stdout,
        "{\"name\":\"Ann\",\"age\":3,\"tags\":[\"x\"]}\n"
    );
    let argv = env.argv("claude");
    let i = argv
        .iter()
        .position(|a| a == "--json-schema")
        .unwrap_or_else(|| panic!("no --json-schema in {argv:?}"));
    let given: Value = serde_json::from_str(&argv[i + 1]).expect("the schema as JSON");
    assert_eq!(given, compact_schema());
    // The schema travels once, by the flag: the prompt does not carry it.
    let sent = env.stdin_text("claude");
    assert!(!sent.contains("fits this JSON schema"), "{sent}");
    assert_eq!(
        env.messages(&out.chat_id())[1]["content"],
        "{\"name\":\"Ann\",\"age\":3,\"tags\":[\"x\"]}"
    );
}

/// A structured result that does not fit is checked by `ai` and asked for once more.
#[test]
fn claude_structured_output_that_does_not_fit_is_fixed_by_the_retry() {
    let env = Env::new();
    env.fake(
        "claude",
        r#"echo x >> "$FAKE_STATE/n"; cat > "$FAKE_STATE/stdin.$(wc -l < "$FAKE_STATE/n" | tr -d ' ')"
if [ "$(wc -l < "$FAKE_STATE/n")" -eq 1 ]; then
  printf '%s\n' '{"type":"result","is_error":false,"result":"","structured_output":{"name":"Ann","tags":[]}}'
else
  printf '%s\n' '{"type":"result","is_error":false,"result":"","structured_output":{"name":"Ann","age":4,"tags":[]}}'
fi"#,
    );
    let out = env.run(&["sonnet", "--schema", SPEC, "who?"]).success();
    assert_eq!(out.stdout, "{\"name\":\"Ann\",\"age\":4,\"tags\":[]}\n");
    assert!(
        out.stderr.contains("did not fit the schema"),
        "{}",
        out.stderr
    );
    let again = std::fs::read_to_string(env.state.join("stdin.2")).expect("a second call");
    assert!(again.contains("`age` is required"), "{again}");
}

/// Codex's `--output-schema FILE`: the schema in strict mode's shape, in a file of the
/// user's own that is gone once the call is over; the reply is its last message.
#[test]
fn codex_takes_the_schema_by_its_output_schema_file() {
    let env = Env::new();
    env.fake(
        "codex",
        r#"cat > /dev/null
prev=''
for a in "$@"; do
  if [ "$prev" = '--output-schema' ]; then
    printf '%s' "$a" > "$FAKE_STATE/path"
    cat "$a" > "$FAKE_STATE/schema"
    stat -c '%a' "$a" > "$FAKE_STATE/mode"
  fi
  prev="$a"
done
printf '%s\n' '{"type":"turn.started"}'
printf '%s\n' '{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"Let me think."}}'
printf '%s\n' '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"{\"name\":\"Bo\",\"age\":7,\"tags\":[]}"}}'
printf '%s\n' '{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":4}}'"#,
    );
    let out = env.run(&["codex", "--schema", SPEC, "who?"]).success();
    assert_eq!(out.stdout, "{\"name\":\"Bo\",\"age\":7,\"tags\":[]}\n");
    let argv = env.argv("codex");
    assert!(argv.iter().any(|a| a == "--output-schema"), "{argv:?}");
    assert_eq!(argv.last().map(String::as_str), Some("-"), "{argv:?}");
    let path = std::fs::read_to_string(env.state.join("path")).expect("a schema file given");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(env.state.join("schema")).expect("the file was readable"),
    )
    .expect("the file holds JSON");
    assert_eq!(schema, compact_schema());
    assert_eq!(
        std::fs::read_to_string(env.state.join("mode"))
            .unwrap()
            .trim(),
        "600"
    );
    assert!(
        !std::path::Path::new(&path).exists(),
        "{path} is removed after the call"
    );
    assert!(!env.stdin_text("codex").contains("fits this JSON schema"));
}

/// Gemini CLI and Qwen Code have no schema flag: they are told in the system prompt.
#[test]
fn gemini_and_qwen_are_told_the_schema_in_the_prompt() {
    let env = Env::new();
    for (alias, cli) in [("gemini", "gemini"), ("qwen", "qwen")] {
        env.reply(
            cli,
            "```json\n{\"name\":\"Ann\",\"age\":3,\"tags\":[]}\n```\n",
        );
        env.run(&[alias, "--schema", SPEC, "who?"]).success();
        let argv = env.argv(cli).join(" ");
        assert!(!argv.contains("schema"), "{argv}");
        assert!(env.stdin_text(cli).contains("fits this JSON schema"));
    }
}

/// A reply that never fits came back whole: the notice says it is saved as not fitting, not
/// that it was cut short.
#[test]
fn a_reply_that_never_fits_is_not_called_cut_short() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("no", 1, 1)]),
        Reply::sse(&[&oa_stream("still no", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env
        .run(&["openai:gpt-test", "--schema", SPEC, "who?"])
        .code(1);
    assert!(!out.stderr.contains("cut short"), "{}", out.stderr);
    let id = out.chat_id();
    assert!(
        out.stderr.contains(&format!(
            "the reply that does not fit is saved in chat {id}, marked interrupted; ask again with: ai chat retry {id}"
        )),
        "{}",
        out.stderr
    );
}

/// An empty field in the compact form and a `$ref` are refused, each named.
#[test]
fn an_empty_field_and_a_ref_are_refused_by_name() {
    let env = Env::new();
    let out = env
        .run(&["codex", "--schema", "name str,, age int", "who?"])
        .code(2);
    assert!(out.error().contains("an empty field"), "{}", out.stderr);
    let out = env
        .run(&[
            "codex",
            "--schema",
            r##"{"type":"object","$defs":{"n":{"type":"string"}},"properties":{"name":{"$ref":"#/$defs/n"}}}"##,
            "who?",
        ])
        .code(2);
    assert!(
        out.error()
            .contains("\"$ref\" (at properties.name) is not supported"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint: "), "{}", out.stderr);
    assert!(env.calls().is_empty());
}
