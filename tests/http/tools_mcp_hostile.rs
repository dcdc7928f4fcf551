//! The MCP client (`--mcp NAME`) against a hostile fake server written here: requests of the
//! server's own (sampling, roots, elicitation) refused politely, answers under IDs never sent,
//! notification and stderr floods, results that are huge, too long to read or malformed, tool
//! names that clash after shortening or with a command tool, and a schema nested past what a
//! JSON parser takes. Each ends as an error result the model reads, or as a clear error before
//! the model is asked: never a hang, a crash, or memory without bound.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::*;

/// The hostile server: `argv[1]` a folder for its log of every message it received.
const HOSTILE_MCP: &str = r#"
import json, os, sys
state = sys.argv[1]
log = open(os.path.join(state, "log"), "a")
out = sys.stdout

def send(obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()

def result(id, r):
    send({"jsonrpc": "2.0", "id": id, "result": r})

def text(id, t):
    result(id, {"content": [{"type": "text", "text": t}]})

def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    msg = json.loads(line)
    log.write(json.dumps(msg) + "\n")
    log.flush()
    return msg

names = ["asks", "ids", "flood", "huge", "malformed", "badtext", "stderr", "toolong",
         "a" * 70 + "1", "a" * 70 + "2"]
tools = [{"name": n, "annotations": {"readOnlyHint": True},
          "inputSchema": {"type": "object", "properties": {}}} for n in names]
if os.environ.get("FAKE_BIG"):
    tools.append({"name": "big", "description": "b" * (100 << 10)})
for i in range(int(os.environ.get("FAKE_MANY", "0"))):
    tools.append({"name": "t%d" % i, "description": "one of many"})
depth = int(os.environ.get("FAKE_DEPTH", "0"))
if depth:
    deep = {"type": "object"}
    for _ in range(depth):
        deep = {"type": "object", "properties": {"x": deep}}
    tools.append({"name": "deep", "inputSchema": deep})
while True:
    msg = read()
    method, id = msg.get("method"), msg.get("id")
    if method == "initialize":
        result(id, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"}})
    elif method == "tools/list":
        result(id, {"tools": tools})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "asks":
            # Requests of the server's own, each waiting for its answer.
            for i, m in enumerate(["sampling/createMessage", "roots/list", "elicitation/create"]):
                send({"jsonrpc": "2.0", "id": "srv%d" % i, "method": m, "params": {}})
            answers = [read() for _ in range(3)]
            text(id, "answers: " + json.dumps([[a.get("id"), a.get("error", {}).get("code")]
                                               for a in answers]))
        elif name == "ids":
            for bad in [999, "abc", 1.5, [id], {"x": 1}, str(id + 1000)]:
                send({"jsonrpc": "2.0", "id": bad,
                      "result": {"content": [{"type": "text", "text": "WRONG"}]}})
            send({"jsonrpc": "2.0", "result": {"content": [{"type": "text", "text": "WRONG"}]}})
            text(id, "the right answer")
        elif name == "flood":
            note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                               "params": {"level": "info", "data": "x" * 200}}) + "\n"
            for _ in range(100):
                out.write(note * 1000)
            out.flush()
            text(id, "after the flood")
        elif name == "huge":
            text(id, "h" * (10 << 20))
        elif name == "malformed":
            result(id, {"content": "not a list"})
        elif name == "badtext":
            result(id, {"content": [{"type": "text", "text": 123}]})
        elif name == "stderr":
            for _ in range(200):
                sys.stderr.write(("noise " * 10000) + "\n")
            sys.stderr.write("the last word\n")
            sys.stderr.flush()
            result(id, {"content": [{"type": "text", "text": "it failed"}], "isError": True})
        elif name == "toolong":
            out.write('{"jsonrpc": "2.0", "method": "x", "params": "' + "y" * (17 << 20) + '"}\n')
            out.flush()
            text(id, "never read")
        else:
            text(id, "called " + name)
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})
"#;

fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is installed");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A world pointed at `server` with the hostile MCP server `h` (and `env` for it).
fn world(server: &Server, vars: Value) -> (Env, PathBuf) {
    let env = Env::for_provider("openai", server);
    let script = env.path("hostile_mcp.py");
    std::fs::write(&script, HOSTILE_MCP).unwrap();
    let state = env.path("mcp_state");
    std::fs::create_dir_all(&state).unwrap();
    let spec = json!({"command": python(),
        "args": [script.to_str().unwrap(), state.to_str().unwrap()],
        "env": vars, "timeout": 20});
    env.write_config(&json!({"mcp": {"servers": {"h": spec}}}).to_string());
    (env, state)
}

/// OpenAI: one reply that calls each of `names` (no arguments), in that order.
fn oa_calls(names: &[&str]) -> String {
    let calls: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({"index": i, "id": format!("call_{i}"), "type": "function",
                   "function": {"name": n, "arguments": "{}"}})
        })
        .collect();
    let mut out = data(
        &json!({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":calls},"finish_reason":null}]})
            .to_string(),
    );
    out.push_str(&data(
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

fn results(env: &Env) -> Vec<Value> {
    env.only_chat()
        .into_iter()
        .filter(|r| r["type"] == "round")
        .flat_map(|r| r["results"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn a_hostile_server_gets_error_results_never_a_hang_or_a_crash() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_calls(&[
            "h__asks",
            "h__ids",
            "h__flood",
            "h__huge",
            "h__malformed",
            "h__badtext",
            "h__stderr",
            "h__toolong",
            "h__ids",
        ])]),
        Reply::sse(&[&oa_stream("Survived.", 1, 1)]),
    ]);
    let (env, state) = world(&s, json!({}));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "h", "--timeout", "60", "go"])
        .success();
    assert_eq!(out.stdout, "Survived.\n");
    // Two names that are one once cut to 64 characters: the second is said, not offered.
    let offered: Vec<String> = s.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered.len(), 9, "{offered:?}");
    assert!(
        out.stderr.contains(&format!(
            "MCP server h: not offered: {}… (its name is taken)",
            "a".repeat(64)
        )),
        "{}",
        out.stderr
    );
    let r = results(&env);
    assert_eq!(r.len(), 9, "{r:?}");
    // Sampling, roots and elicitation: each refused with "method not found", and the call
    // goes on.
    assert_eq!(
        r[0]["content"],
        r#"answers: [["srv0", -32601], ["srv1", -32601], ["srv2", -32601]]"#
    );
    // Answers under IDs never sent are skipped.
    assert_eq!(r[1]["content"], "the right answer");
    // 100,000 notifications during a call: dropped as they come.
    assert_eq!(r[2]["content"], "after the flood");
    // 10 MiB of text: cut to the result bound, with a note.
    let huge = r[3]["content"].as_str().unwrap();
    assert!(huge.len() < 40 * 1024, "{}", huge.len());
    assert!(
        huge.contains("(cut: the result was 10240 KiB"),
        "{}",
        &huge[huge.len() - 200..]
    );
    assert_eq!(r[3]["truncated"], true);
    // Results of the wrong shape: error results that say so.
    for bad in [&r[4], &r[5]] {
        assert_eq!(bad["error"], true, "{bad}");
        assert!(
            bad["content"]
                .as_str()
                .unwrap()
                .contains("answered `tools/call` with an unexpected shape"),
            "{bad}"
        );
    }
    // A tool's error after 12 MB of stderr: the error, and only the end of its stderr.
    assert_eq!(r[6]["error"], true);
    assert_eq!(r[6]["content"], "it failed");
    // A line too long to read: the server is broken from then on, and said to be.
    for broken in [&r[7], &r[8]] {
        assert_eq!(broken["error"], true, "{broken}");
        assert!(
            broken["content"]
                .as_str()
                .unwrap()
                .contains("a line longer than 16 MiB"),
            "{broken}"
        );
    }
    // The chat stays small: no result is kept whole.
    let size = std::fs::metadata(env.chat_path(&out.chat_id()))
        .unwrap()
        .len();
    assert!(size < 200_000, "chat of {size} bytes");
    // Every request the client sent was answered or was its own.
    let log = std::fs::read_to_string(state.join("log")).unwrap();
    assert!(log.contains("\"tools/call\""), "{log}");
}

#[test]
fn a_schema_nested_past_the_parser_is_a_clear_error_at_once() {
    let s = Server::start(vec![]);
    let (env, _state) = world(&s, json!({"FAKE_DEPTH": "200"}));
    // The server's timeout is 20 s, the call's 60 s: the error does not wait for either.
    let out = env
        .run(&["openai:gpt-test", "--mcp", "h", "--timeout", "60", "hi"])
        .code(1);
    assert!(out.stderr.contains("nested too deeply"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("did not answer"),
        "it waited for the timeout: {}",
        out.stderr
    );
    assert!(s.requests().is_empty());
}

#[test]
fn a_server_of_thousands_of_tools_or_a_huge_one_is_offered_within_bounds() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("Fine.", 1, 1)])]);
    let (env, _state) = world(&s, json!({"FAKE_MANY": "100000", "FAKE_BIG": "1"}));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "h", "--timeout", "60", "hi"])
        .success();
    assert_eq!(out.stdout, "Fine.\n");
    let first = s.requests()[0].json();
    let offered = first["tools"].as_array().unwrap();
    // 512 taken: the ten of the fake (one name clashes), the huge one (left out) and 501 of
    // the many.
    assert_eq!(offered.len(), 510, "{}", offered.len());
    assert!(
        s.requests()[0].body.len() < 1 << 20,
        "{}",
        s.requests()[0].body.len()
    );
    let warning = out
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: MCP server h: not offered:"))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(
        warning.contains("big (its description and schema are 100.0 KiB, over 64.0 KiB)"),
        "{warning}"
    );
    assert!(
        warning.contains("every tool past the first 512 (it offers more)"),
        "{warning}"
    );
    assert!(warning.len() < 2000, "{warning}");
}
