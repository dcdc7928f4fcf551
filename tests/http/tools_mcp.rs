//! MCP servers (`--mcp NAME`) against a fake server written here (a Python script in the test's
//! temp dir that speaks stdio JSON-RPC) and the scripted HTTP server: the handshake and the
//! paged tool list, a call and its result, a tool error, a hanging tool, a crashing server, a
//! server that never answers, one that prints garbage, one that exits at once; the server is
//! gone after every call, and the chat stays valid.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// The fake server. `argv[1]` is its behaviour, `argv[2]` a folder for its pid and its log of
/// every message it received (one JSON a line).
const FAKE_MCP: &str = r#"
import json, os, sys, time
mode, state = sys.argv[1], sys.argv[2]
with open(os.path.join(state, "pid"), "w") as f:
    f.write(str(os.getpid()) + "\n")
with open(os.path.join(state, "env.json"), "w") as f:
    json.dump(dict(os.environ), f)
log = open(os.path.join(state, "log"), "a")

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

def result(id, r):
    send({"jsonrpc": "2.0", "id": id, "result": r})

if mode == "exit":
    sys.stderr.write("error: bad token for the fake service\n")
    sys.exit(2)
sys.stderr.write("fake mcp starting up\n")
sys.stderr.flush()
if mode == "banner":
    # As tools4zettelkasten's `mcp` command does: words on stdout before the protocol.
    sys.stdout.write(" __ __ ____ __\nInitializing of the fake server ...\n")
    sys.stdout.flush()
page1 = [{"name": "echo", "description": "Echo a text",
          "annotations": {"readOnlyHint": True},
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                          "required": ["text"]}},
         {"name": "fail", "description": "Always fails"}]
page2 = [{"name": "hang", "description": "Never answers",
          "inputSchema": {"type": "object", "properties": {}}},
         {"name": "crash", "description": "Ends the server",
          "inputSchema": {"type": "object", "properties": {}}}]
for line in sys.stdin:
    msg = json.loads(line)
    log.write(json.dumps(msg) + "\n")
    log.flush()
    method, id = msg.get("method"), msg.get("id")
    if mode == "silent":
        continue
    if mode == "garbage":
        sys.stdout.write("Starting the fake server, please wait...\n")
        sys.stdout.flush()
        continue
    if method == "initialize":
        time.sleep(float(os.environ.get("FAKE_SLOW_START", "0")))
        # A notification and a request of the server's own come first: both are handled.
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}})
        send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
        caps = {"resources": {}} if mode in ("notools", "nolist") else {"tools": {}}
        if mode == "nolist":
            caps["tools"] = {}
        result(id, {"protocolVersion": "2025-06-18", "capabilities": caps,
                    "serverInfo": {"name": "fake", "version": "1"}})
    elif method == "tools/list" and mode in ("notools", "nolist"):
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
    elif method == "tools/list" and mode == "clash":
        # Two names that are one once made safe for providers, and a nameless tool.
        result(id, {"tools": [{"name": "a.b"}, {"name": "a_b"}, {"name": ""}]})
    elif method == "tools/list":
        if (msg.get("params") or {}).get("cursor") == "page2":
            result(id, {"tools": page2})
        else:
            result(id, {"tools": page1, "nextCursor": "page2"})
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if mode == "banner":
            sys.stdout.write("a log line on stdout\n")
        if name == "echo":
            result(id, {"content": [{"type": "text", "text": "echo: " + args.get("text", "")},
                                    {"type": "text", "text": "second part"}]})
        elif name == "fail":
            result(id, {"content": [{"type": "text", "text": "it failed on purpose"}],
                        "isError": True})
        elif name == "hang":
            # Answers late (FAKE_HANG seconds), or never.
            time.sleep(float(os.environ.get("FAKE_HANG", "300")))
            result(id, {"content": [{"type": "text", "text": "late"}]})
        elif name == "crash":
            if mode == "orphan":
                # Leaves a child behind that ignores SIGTERM and holds none of its pipes.
                if os.fork() == 0:
                    import signal
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
                    for fd in (0, 1, 2):
                        os.close(fd)
                    # Written whole, then renamed: the parent exits once the file exists, and
                    # `ai` may kill this child before an unfinished write would end.
                    with open(os.path.join(state, "orphan.tmp"), "w") as f:
                        f.write(str(os.getpid()) + "\n")
                    os.rename(os.path.join(state, "orphan.tmp"), os.path.join(state, "orphan"))
                    time.sleep(300)
                    os._exit(0)
                while not os.path.exists(os.path.join(state, "orphan")):
                    time.sleep(0.01)
            sys.stderr.write("fatal: the fake server crashed\n")
            sys.stderr.flush()
            os._exit(3)
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}})
"#;

/// The Python interpreter, by its real path (the child's PATH is the test world's).
fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is installed");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A world pointed at `server` (as `provider`) with the fake MCP server `fake` configured in
/// `mode`; its pid file and log are in the returned folder.
fn world(provider: &str, server: &Server, mode: &str, timeout: Option<f64>) -> (Env, PathBuf) {
    world_with(provider, server, mode, timeout, json!({}))
}

/// The same, with variables for the fake server.
fn world_with(
    provider: &str,
    server: &Server,
    mode: &str,
    timeout: Option<f64>,
    vars: Value,
) -> (Env, PathBuf) {
    let env = Env::for_provider(provider, server);
    let script = env.path("fake_mcp.py");
    std::fs::write(&script, FAKE_MCP).unwrap();
    let state = env.path("mcp_state");
    std::fs::create_dir_all(&state).unwrap();
    // The tools that act are allowed here; asking for them is tested on its own.
    let mut spec = json!({"command": python(),
        "args": [script.to_str().unwrap(), mode, state.to_str().unwrap()],
        "env": vars, "allow": ["fail", "hang", "crash"]});
    if let Some(t) = timeout {
        spec["timeout"] = json!(t);
    }
    let mut config = config_of(&env);
    config["mcp"] = json!({"servers": {"fake": spec}});
    env.write_config(&config.to_string());
    (env, state)
}

/// What the fake server received.
fn received(state: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(state.join("log"))
        .unwrap_or_default()
        .lines()
        // A line being written is not read yet.
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The server of this call has been stopped.
fn assert_gone(state: &std::path::Path) {
    let pid = read_pid(&state.join("pid"));
    assert!(
        wait_gone(pid, Duration::from_secs(2)),
        "the MCP server {pid} is still running"
    );
}

/// OpenAI: one call of `name` with `args` (a JSON text).
fn oa_call(id: &str, name: &str, args: &str) -> String {
    let call = json!({"index": 0, "id": id, "type": "function",
        "function": {"name": name, "arguments": args}});
    let mut out = data(
        &json!({"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[call]},"finish_reason":null}]})
            .to_string(),
    );
    out.push_str(&data(
        r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

fn round_results(env: &Env) -> Vec<Value> {
    env.only_chat()
        .into_iter()
        .filter(|r| r["type"] == "round")
        .flat_map(|r| r["results"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    t["function"]["name"]
                        .as_str()
                        .or(t["name"].as_str())
                        .unwrap()
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn openai_calls_an_mcp_tool_and_the_server_is_stopped_after_the_call() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__echo", r#"{"text":"hi"}"#)]),
        Reply::sse(&[&oa_stream("The server said hi.", 20, 6)]),
        Reply::sse(&[&oa_stream("Yes.", 30, 2)]),
    ]);
    let (env, state) = world("openai", &s, "good", None);
    let out = env
        .run(&[
            "openai:gpt-test",
            "--mcp",
            "fake",
            "say hi through the server",
        ])
        .success();
    assert_eq!(out.stdout, "The server said hi.\n");
    assert!(out.stderr.contains("mcp fake: echo … ok"), "{}", out.stderr);
    // Both pages of tools are offered, named after the server.
    let reqs = s.requests();
    let first = reqs[0].json();
    assert_eq!(
        tool_names(&first),
        ["fake__echo", "fake__fail", "fake__hang", "fake__crash"]
    );
    let echo = &first["tools"][0]["function"];
    assert_eq!(echo["description"], "Echo a text");
    assert_eq!(echo["parameters"]["required"], json!(["text"]));
    // A tool without a schema gets an empty object schema.
    assert_eq!(
        first["tools"][1]["function"]["parameters"]["type"],
        "object"
    );
    // The result (text items joined) went back.
    let m = reqs[1].json()["messages"].clone();
    let last = m.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], "call_1");
    assert_eq!(last["content"], "echo: hi\nsecond part");
    // The handshake, as the protocol has it.
    let got = received(&state);
    let methods: Vec<&str> = got
        .iter()
        .map(|m| m["method"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "",
            "notifications/initialized",
            "tools/list",
            "tools/list",
            "tools/call"
        ],
        "{got:?}"
    );
    let init = &got[0];
    assert_eq!(init["jsonrpc"], "2.0");
    assert_eq!(init["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["params"]["capabilities"], json!({}));
    assert_eq!(init["params"]["clientInfo"]["name"], "ai");
    // The server's ping was answered.
    assert_eq!(got[1], json!({"jsonrpc": "2.0", "id": "s1", "result": {}}));
    assert!(got[2].get("id").is_none(), "a notification has no id");
    assert_eq!(got[4]["params"]["cursor"], "page2");
    assert_eq!(
        got[5]["params"],
        json!({"name": "echo", "arguments": {"text": "hi"}})
    );
    assert_gone(&state);
    // A follow-up turn, without --mcp, sends the round again and is answered.
    let id = out.chat_id();
    env.run(&["chat", &id, "really?"]).success();
    let m = s.requests()[2].json()["messages"].clone();
    let roles: Vec<&str> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
}

#[test]
fn anthropic_calls_an_mcp_tool() {
    let call = {
        let mut out = event(
            "message_start",
            r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1},"content":[]}}"#,
        );
        out.push_str(&event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"tu_1","name":"fake__echo","input":{}}}"#,
        ));
        out.push_str(&event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"text\":\"yo\"}"}}"#,
        ));
        out.push_str(&event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ));
        out.push_str(&event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#));
        out.push_str(&event("message_stop", r#"{"type":"message_stop"}"#));
        out
    };
    let answer = format!("{}{}{}", an_start(5), an_text("Done."), an_end(2));
    let s = Server::start(vec![Reply::sse(&[&call]), Reply::sse(&[&answer])]);
    let (env, state) = world("anthropic", &s, "good", None);
    let out = env
        .run(&["anthropic:claude-test", "--mcp", "fake", "go"])
        .success();
    assert_eq!(out.stdout, "Done.\n");
    let first = s.requests()[0].json();
    assert!(tool_names(&first).contains(&"fake__echo".to_owned()));
    assert_eq!(
        first["tools"][0]["input_schema"]["required"],
        json!(["text"])
    );
    let m = s.requests()[1].json()["messages"].clone();
    let last = m.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "tu_1");
    assert!(
        last["content"][0]["content"]
            .to_string()
            .contains("echo: yo"),
        "{last}"
    );
    assert_gone(&state);
}

#[test]
fn a_tool_error_and_a_hanging_tool_are_error_results_and_the_turn_goes_on() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__fail", "{}")]),
        Reply::sse(&[&oa_call("call_2", "fake__hang", "{}")]),
        Reply::sse(&[&oa_call("call_3", "fake__echo", r#"{"text":"still here"}"#)]),
        Reply::sse(&[&oa_stream("Two failed, one worked.", 1, 1)]),
    ]);
    // The hanging tool answers after 6 s: too late for its 5 s call, and in time to be skipped
    // while the next call waits for its own answer (the server answers in order, so the late
    // answer always comes first). 5 s, not 1.5 s: the limit covers a slow Python's start, and
    // the next call's answer must come within it on a loaded machine.
    let (env, state) = world_with("openai", &s, "good", Some(5.0), json!({"FAKE_HANG": "6"}));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "fake", "--json", "try them"])
        .success();
    assert_eq!(out.json()["reply"], "Two failed, one worked.");
    let results = round_results(&env);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0]["error"], true);
    assert_eq!(results[0]["content"], "it failed on purpose");
    assert_eq!(results[1]["error"], true);
    let hung = results[1]["content"].as_str().unwrap();
    assert!(
        hung.contains("the MCP server fake did not answer within 5"),
        "{hung}"
    );
    assert!(hung.contains("fake mcp starting up"), "{hung}");
    // A late answer never stands for a later call: the server still works.
    assert_ne!(results[2]["error"], true);
    assert_eq!(results[2]["content"], "echo: still here\nsecond part");
    let calls = out.json()["tool_calls"].clone();
    assert_eq!(calls[0]["status"], "error");
    assert_eq!(calls[2]["status"], "ok");
    assert_gone(&state);
}

#[test]
fn a_server_whose_tool_never_answers_is_stopped_after_the_call() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__hang", "{}")]),
        Reply::sse(&[&oa_stream("It hangs.", 1, 1)]),
    ]);
    // The limit covers the server's start too: 5 s, so a Python that starts slowly on a loaded
    // machine still answers `initialize` in time (with 1 s it sometimes did not).
    let (env, state) = world("openai", &s, "good", Some(5.0));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "fake", "try it"])
        .success();
    assert_eq!(out.stdout, "It hangs.\n");
    let results = round_results(&env);
    assert_eq!(results[0]["error"], true, "{results:?}");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("the MCP server fake did not answer within 5"),
        "{results:?}"
    );
    assert_gone(&state);
}

#[test]
fn a_server_that_crashes_in_a_call_is_an_error_result_and_the_chat_stays_valid() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__crash", "{}")]),
        Reply::sse(&[&oa_call("call_2", "fake__echo", r#"{"text":"again"}"#)]),
        Reply::sse(&[&oa_stream("The server is gone.", 1, 1)]),
        Reply::sse(&[&oa_stream("Follow-up.", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "good", Some(5.0));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "fake", "crash it"])
        .success();
    assert_eq!(out.stdout, "The server is gone.\n");
    let results = round_results(&env);
    let crashed = results[0]["content"].as_str().unwrap();
    assert_eq!(results[0]["error"], true);
    assert!(
        crashed.contains("the MCP server fake has stopped (exit code 3)"),
        "{crashed}"
    );
    assert!(
        crashed.contains("fatal: the fake server crashed"),
        "{crashed}"
    );
    // The next call to it says so at once.
    assert_eq!(results[1]["error"], true);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("has stopped"),
        "{results:?}"
    );
    assert!(
        out.stderr
            .contains("fake__crash … error: the MCP server fake has stopped"),
        "{}",
        out.stderr
    );
    assert_gone(&state);
    let id = out.chat_id();
    let again = env.run(&["chat", &id, "and now?"]).success();
    assert_eq!(again.stdout, "Follow-up.\n");
}

#[test]
fn a_server_that_fails_at_the_start_fails_the_call_before_the_model_is_asked() {
    // What the server printed is in the error only if it printed it before the limit: 5 s,
    // so a Python that starts slowly on a loaded machine has (with 1 s it sometimes had not).
    for (mode, timeout, want, also) in [
        (
            "silent",
            Some(5.0),
            "the MCP server fake did not answer `initialize` within 5",
            Some("fake mcp starting up"),
        ),
        (
            "garbage",
            Some(5.0),
            "the MCP server fake did not answer `initialize` within 5",
            Some(
                "it printed 1 line that is not JSON-RPC on its output (skipped), the last: Starting the fake server, please wait...",
            ),
        ),
        (
            "exit",
            None,
            "the MCP server fake has stopped (exit code 2)",
            Some("error: bad token for the fake service"),
        ),
    ] {
        let s = Server::start(vec![]);
        let (env, state) = world("openai", &s, mode, timeout);
        let out = env
            .run(&["openai:gpt-test", "--mcp", "fake", "hello"])
            .code(1);
        assert!(
            out.stderr.contains(&format!("error: {want}")),
            "{mode}: {}",
            out.stderr
        );
        if let Some(also) = also {
            assert!(out.stderr.contains(also), "{mode}: {}", out.stderr);
        }
        assert!(
            out.stderr.contains("hint: check that `"),
            "{mode}: {}",
            out.stderr
        );
        assert!(s.requests().is_empty(), "{mode}: the model was asked");
        assert!(env.chat_ids().is_empty(), "{mode}: a chat was written");
        assert_gone(&state);
    }
}

#[test]
fn a_missing_program_or_an_unknown_server_is_a_clear_error() {
    let s = Server::start(vec![]);
    let (env, _) = world("openai", &s, "good", None);
    let out = env
        .run(&["openai:gpt-test", "--mcp", "nope", "hello"])
        .code(2);
    assert!(
        out.stderr
            .contains("error: --mcp nope: there is no MCP server of that name"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: the MCP servers in config.json are: fake"),
        "{}",
        out.stderr
    );
    let mut config = env.config();
    config["mcp"]["servers"]["gone"] = json!({"command": "/nonexistent/mcp-server"});
    env.write_config(&config.to_string());
    let out = env
        .run(&["openai:gpt-test", "--mcp", "gone", "hello"])
        .code(1);
    assert!(
        out.stderr.contains(
            "error: cannot start the MCP server gone: `/nonexistent/mcp-server` was not found"
        ),
        "{}",
        out.stderr
    );
    assert!(s.requests().is_empty());
    // A bad entry is a config error naming its key.
    config["mcp"]["servers"]["gone"] = json!({"command": "x", "timeout": -1});
    env.write_config(&config.to_string());
    let out = env.run(&["openai:gpt-test", "hello"]).code(3);
    assert!(
        out.stderr.contains("mcp.servers.gone.timeout"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_cli_backend_cannot_be_given_mcp_tools() {
    let s = Server::start(vec![]);
    let (env, state) = world("openai", &s, "good", None);
    let out = env.run(&["echo", "--mcp", "fake", "hi"]).code(2);
    assert!(
        out.stderr.contains("not an HTTP provider"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--mcp"), "{}", out.stderr);
    assert!(
        out.stderr.contains("anthropic, gemini-api, ollama-api"),
        "{}",
        out.stderr
    );
    if state.join("pid").exists() {
        assert_gone(&state);
    }
}

/// The world's config.json, or an empty object when there is none yet.
fn config_of(env: &Env) -> Value {
    if env.config_path().exists() {
        env.config()
    } else {
        json!({})
    }
}

#[test]
fn ctrl_c_during_an_mcp_call_ends_the_turn_and_stops_the_server() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__hang", "{}")]),
        Reply::sse(&[&oa_stream("never", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "good", Some(60.0));
    let mut ai = env.spawn(&["openai:gpt-test", "--mcp", "fake", "hang"]);
    wait_for("the call to reach the server", || {
        received(&state).iter().any(|m| m["method"] == "tools/call")
    });
    signal(ai.pid(), libc::SIGINT);
    let status = ai.wait_status_within(Duration::from_secs(5));
    assert_eq!(status.code(), Some(130));
    assert_gone(&state);
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn a_server_that_crashes_leaves_nothing_of_its_own_running() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__crash", "{}")]),
        Reply::sse(&[&oa_stream("The server is gone.", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "orphan", Some(5.0));
    env.run(&["openai:gpt-test", "--mcp", "fake", "crash it"])
        .success();
    let orphan = read_pid(&state.join("orphan"));
    assert!(
        wait_gone(orphan, std::time::Duration::from_secs(3)),
        "the server's child {orphan} still runs"
    );
}

#[test]
fn tools_that_cannot_be_offered_as_they_are_named_are_said() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let (env, _state) = world("openai", &s, "clash", Some(5.0));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "fake", "hi"])
        .success();
    assert_eq!(tool_names(&s.requests()[0].json()), ["fake__a_b"]);
    assert!(
        out.stderr
            .contains("MCP server fake: not offered: a_b (its name is taken), a tool with no name"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_server_gets_only_the_basic_environment_and_its_own_variables() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let (mut env, state) = world_with("openai", &s, "good", Some(5.0), json!({"FAKE_OWN": "mine"}));
    env.set("ANTHROPIC_API_KEY", "sk-ant-SECRET-interop")
        .set("SOME_SERVICE_TOKEN", "tok-SECRET")
        .set("LANG", "C.UTF-8");
    env.run(&["openai:gpt-test", "--mcp", "fake", "hi"])
        .success();
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("env.json")).unwrap()).unwrap();
    let names: Vec<&str> = seen
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for secret in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SOME_SERVICE_TOKEN",
        "OPENAI_BASE_URL",
        "AI_CLI_HOME",
    ] {
        assert!(
            !names.contains(&secret),
            "{secret} reached the server: {names:?}"
        );
    }
    assert_eq!(seen["FAKE_OWN"], "mine");
    assert_eq!(seen["LANG"], "C.UTF-8");
    assert!(
        seen["PATH"].is_string() && seen["HOME"].is_string(),
        "{names:?}"
    );
}

#[test]
fn a_server_that_offers_no_tools_does_not_fail_the_call() {
    for mode in ["notools", "nolist"] {
        let s = Server::start(vec![Reply::sse(&[&oa_stream("Answered anyway.", 1, 1)])]);
        let (env, state) = world("openai", &s, mode, Some(5.0));
        let out = env
            .run(&["openai:gpt-test", "--mcp", "fake", "hi"])
            .success();
        assert_eq!(out.stdout, "Answered anyway.\n", "{mode}");
        assert!(
            out.stderr.contains("MCP server fake offers no tools"),
            "{mode}: {}",
            out.stderr
        );
        assert!(tool_names(&s.requests()[0].json()).is_empty(), "{mode}");
        let asked_list = received(&state).iter().any(|m| m["method"] == "tools/list");
        // Without the capability the list is not asked for; with it, a refusal means none.
        assert_eq!(asked_list, mode == "nolist", "{mode}");
        assert_gone(&state);
    }
}

#[test]
fn lines_that_are_not_json_on_a_servers_output_are_skipped() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__echo", r#"{"text":"through"}"#)]),
        Reply::sse(&[&oa_stream("Done.", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "banner", Some(5.0));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "fake", "go"])
        .success();
    assert_eq!(out.stdout, "Done.\n");
    let results = round_results(&env);
    assert_ne!(results[0]["error"], true, "{results:?}");
    assert_eq!(results[0]["content"], "echo: through\nsecond part");
    assert_gone(&state);
}

#[test]
fn the_call_timeout_bounds_a_server_that_never_answers_initialize() {
    let s = Server::start(vec![]);
    // The server's own timeout is the default (30 s); --timeout 1 is shorter and wins.
    let (env, state) = world("openai", &s, "silent", None);
    let out = env
        .run(&[
            "openai:gpt-test",
            "--mcp",
            "fake",
            "--timeout",
            "1",
            "hello",
        ])
        .code(1);
    assert!(
        out.stderr
            .contains("error: the MCP server fake did not answer `initialize` within 1"),
        "{}",
        out.stderr
    );
    assert!(s.requests().is_empty());
    assert_gone(&state);
}

#[test]
fn elapsed_ms_includes_the_start_of_the_servers() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let (env, _state) = world_with(
        "openai",
        &s,
        "good",
        Some(10.0),
        json!({"FAKE_SLOW_START": "1.5"}),
    );
    let out = env
        .run(&["openai:gpt-test", "--mcp", "fake", "--json", "hi"])
        .success();
    let ms = out.json()["elapsed_ms"].as_u64().unwrap();
    assert!(ms >= 1500, "elapsed_ms {ms} leaves out the server's start");
}

#[test]
fn mcp_tools_not_marked_read_only_are_asked_for_as_command_tools_are() {
    let calls_of = |state: &std::path::Path| {
        received(state)
            .iter()
            .filter(|m| m["method"] == "tools/call")
            .count()
    };
    // No terminal to ask on, no --yolo, not allowed in config: not run.
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__fail", "{}")]),
        Reply::sse(&[&oa_stream("Not run.", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "good", Some(5.0));
    let mut config = env.config();
    config["mcp"]["servers"]["fake"]["allow"] = json!([]);
    env.write_config(&config.to_string());
    let out = env
        .run(&["openai:gpt-test", "--mcp", "fake", "fail it"])
        .success();
    let results = round_results(&env);
    assert_eq!(results[0]["error"], true);
    let said = results[0]["content"].as_str().unwrap();
    assert!(
        said.starts_with("not confirmed: ai asks before it runs the MCP tool fake__fail"),
        "{said}"
    );
    assert!(
        out.stderr.contains("fake__fail … error: not confirmed"),
        "{}",
        out.stderr
    );
    assert_eq!(calls_of(&state), 0, "the tool ran without a yes");
    // --yolo runs it.
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__fail", "{}")]),
        Reply::sse(&[&oa_stream("Ran.", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "good", Some(5.0));
    let mut config = env.config();
    config["mcp"]["servers"]["fake"]["allow"] = json!([]);
    env.write_config(&config.to_string());
    env.run(&["openai:gpt-test", "--mcp", "fake", "--yolo", "fail it"])
        .success();
    assert_eq!(calls_of(&state), 1);
    assert_eq!(round_results(&env)[0]["content"], "it failed on purpose");
    // So does naming it in mcp.servers.fake.allow (the world's config does).
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__fail", "{}")]),
        Reply::sse(&[&oa_stream("Ran.", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "good", Some(5.0));
    env.run(&["openai:gpt-test", "--mcp", "fake", "fail it"])
        .success();
    assert_eq!(calls_of(&state), 1);
}

// ---- real servers: the official npm servers and a FastMCP server of the Python SDK ----------
// They skip with a how-to when missing, and fail instead under AI_REQUIRE_MCP=1 (`.ci/run`).

/// `mcp.servers.NAME` for an npm server's program, run by Node by their real paths.
fn node_server(bin: &str, package: &str, args: &[&str]) -> Option<Value> {
    let program = crate::mcp_serve::node_program(bin, package)?;
    let node = std::process::Command::new("sh")
        .args(["-c", "command -v node"])
        .output()
        .unwrap();
    let node = String::from_utf8(node.stdout).unwrap().trim().to_owned();
    let script = program.canonicalize().unwrap();
    let mut all = vec![script.to_str().unwrap().to_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    Some(json!({"command": node, "args": all, "timeout": 60}))
}

fn with_server(env: &Env, name: &str, spec: Value) {
    let mut config = config_of(env);
    config["mcp"] = json!({"servers": {name: spec}});
    env.write_config(&config.to_string());
}

#[test]
fn server_everything_get_env_hands_out_no_key() {
    let Some(spec) = node_server(
        "mcp-server-everything",
        "@modelcontextprotocol/server-everything",
        &[],
    ) else {
        return;
    };
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "everything__get-env", "{}")]),
        Reply::sse(&[&oa_stream("Seen.", 1, 1)]),
    ]);
    let mut env = Env::for_provider("openai", &s);
    env.set("ANTHROPIC_API_KEY", "sk-ant-interop3-SECRET");
    with_server(&env, "everything", spec);
    let out = env
        .run(&[
            "openai:gpt-test",
            "--mcp",
            "everything",
            "--json",
            "show the env",
        ])
        .success();
    let results = round_results(&env);
    assert_ne!(results[0]["error"], true, "{results:?}");
    let content = results[0]["content"].as_str().unwrap();
    assert!(content.contains("PATH"), "{content}");
    assert!(
        !content.contains(KEY) && !content.contains("SECRET"),
        "{content}"
    );
    assert!(!out.stdout.contains(KEY) && !out.stdout.contains("SECRET"));
    env.assert_no_key_in_files();
}

#[test]
fn server_filesystem_writes_only_after_a_yes() {
    let Some(mut spec) = node_server(
        "mcp-server-filesystem",
        "@modelcontextprotocol/server-filesystem",
        &[],
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    spec["args"]
        .as_array_mut()
        .unwrap()
        .push(json!(dir.to_str().unwrap()));
    let file = dir.join("new.md");
    let write = json!({"path": file.to_str().unwrap(), "content": "# Neu\n"}).to_string();
    let read = json!({"path": file.to_str().unwrap()}).to_string();
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fs__write_file", &write)]),
        Reply::sse(&[&oa_stream("Not written.", 1, 1)]),
        Reply::sse(&[&oa_call("call_2", "fs__write_file", &write)]),
        Reply::sse(&[&oa_stream("Written.", 1, 1)]),
        Reply::sse(&[&oa_call("call_3", "fs__read_text_file", &read)]),
        Reply::sse(&[&oa_stream("Read.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    with_server(&env, "fs", spec.clone());
    env.run(&["openai:gpt-test", "--mcp", "fs", "write it"])
        .success();
    assert!(!file.exists(), "written without a yes");
    let said = round_results(&env)[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(said.starts_with("not confirmed"), "{said}");
    spec["allow"] = json!(["write_file"]);
    with_server(&env, "fs", spec);
    env.run(&["openai:gpt-test", "--mcp", "fs", "write it"])
        .success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "# Neu\n");
    // A read-only tool runs without asking.
    env.run(&["openai:gpt-test", "--mcp", "fs", "read it"])
        .success();
    let results = round_results_of(&env);
    assert!(
        results.iter().any(|r| r["content"] == "# Neu\n"),
        "{results:?}"
    );
}

/// The round results of every chat.
fn round_results_of(env: &Env) -> Vec<Value> {
    env.chat_ids()
        .iter()
        .flat_map(|id| env.records(id))
        .filter(|r| r["type"] == "round")
        .flat_map(|r| r["results"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn server_memory_reads_without_asking_and_asks_before_it_creates() {
    let Some(mut spec) = node_server(
        "mcp-server-memory",
        "@modelcontextprotocol/server-memory",
        &[],
    ) else {
        return;
    };
    let s = Server::start(vec![
        Reply::sse(&[&oa_call(
            "call_1",
            "memory__create_entities",
            r#"{"entities":[{"name":"NAS","entityType":"device","observations":["in the cellar"]}]}"#,
        )]),
        Reply::sse(&[&oa_call("call_2", "memory__read_graph", "{}")]),
        Reply::sse(&[&oa_stream("Done.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let store = env.path("memory.jsonl");
    spec["env"] = json!({"MEMORY_FILE_PATH": store.to_str().unwrap()});
    with_server(&env, "memory", spec);
    env.run(&["openai:gpt-test", "--mcp", "memory", "remember"])
        .success();
    let results = round_results(&env);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("not confirmed"),
        "{results:?}"
    );
    assert_ne!(results[1]["error"], true, "{results:?}");
    assert!(
        results[1]["content"].as_str().unwrap().contains("entities"),
        "{results:?}"
    );
    assert!(!results[1]["content"].as_str().unwrap().contains("NAS"));
}

const FASTMCP: &str = r#"
import sys
try:
    from mcp.server.fastmcp import FastMCP as Server
except ImportError:
    from mcp.server.mcpserver import MCPServer as Server
app = Server("py")
if sys.argv[1] == "tools":
    @app.tool()
    def shout(text: str) -> str:
        """Say it louder."""
        return text.upper() + "!"
else:
    @app.resource("note://hello")
    def hello() -> str:
        return "hello"
app.run()
"#;

#[test]
fn a_fastmcp_server_of_the_python_sdk_works_and_one_without_tools_does_not_fail() {
    let python = python();
    let has_sdk = std::process::Command::new(&python)
        .args(["-c", "import mcp.server"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_sdk {
        assert!(
            std::env::var("AI_REQUIRE_MCP").as_deref() != Ok("1"),
            "AI_REQUIRE_MCP=1 and the MCP Python SDK is missing: pip install mcp"
        );
        eprintln!("skipped: the MCP Python SDK is missing (pip install mcp)");
        return;
    }
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "py__shout", r#"{"text":"hey"}"#)]),
        Reply::sse(&[&oa_stream("It shouted.", 1, 1)]),
        Reply::sse(&[&oa_stream("No tools, still here.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let script = env.path("fast.py");
    std::fs::write(&script, FASTMCP).unwrap();
    let spec = |mode: &str| {
        json!({"command": python, "args": [script.to_str().unwrap(), mode], "timeout": 60,
               "allow": ["shout"]})
    };
    with_server(&env, "py", spec("tools"));
    let out = env
        .run(&["openai:gpt-test", "--mcp", "py", "--json", "shout"])
        .success();
    assert_eq!(out.json()["reply"], "It shouted.");
    let results = round_results(&env);
    assert_eq!(results[0]["content"], "HEY!", "{results:?}");
    with_server(&env, "py", spec("resources"));
    let out = env
        .run(&["openai:gpt-test", "--no-chat", "--mcp", "py", "hi"])
        .success();
    assert_eq!(out.stdout, "No tools, still here.\n");
    assert!(
        out.stderr.contains("MCP server py offers no tools"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_session_keeps_its_mcp_servers_for_all_its_turns() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call("call_1", "fake__echo", r#"{"text":"one"}"#)]),
        Reply::sse(&[&oa_stream("First answer.", 1, 1)]),
        Reply::sse(&[&oa_call("call_2", "fake__echo", r#"{"text":"two"}"#)]),
        Reply::sse(&[&oa_stream("Second answer.", 1, 1)]),
    ]);
    let (env, state) = world("openai", &s, "good", Some(10.0));
    let mut term = Terminal::start(&env, "-i openai:gpt-test --mcp fake");
    term.expect("> ");
    let pid = read_pid(&state.join("pid"));
    term.send("first line\r");
    term.expect("First answer.");
    term.expect("> ");
    term.send("second line\r");
    term.expect("Second answer.");
    term.expect("> ");
    // One server for both turns: started (and initialized) once.
    assert_eq!(read_pid(&state.join("pid")), pid);
    let got = received(&state);
    let count = |m: &str| got.iter().filter(|x| x["method"] == m).count();
    assert_eq!(
        (count("initialize"), count("tools/call")),
        (1, 2),
        "{got:?}"
    );
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_gone(&state);
    let results = round_results(&env);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[1]["content"], "echo: two\nsecond part");
}
