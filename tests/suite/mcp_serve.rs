//! `ai mcp`, the MCP server on stdin/stdout: raw JSON-RPC written here (versions, ping, errors,
//! what is exposed), and real MCP clients no one here wrote: the official Python SDK's
//! `ClientSession` over stdio (PyPI `mcp`) and the MCP Inspector's CLI mode (npm
//! `@modelcontextprotocol/inspector`). Those skip with a how-to when missing, and fail instead
//! when `AI_REQUIRE_MCP=1` (CI installs them: see `.ci/run`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::*;

const SDK_CLIENT: &str = include_str!("../fixtures/mcp/sdk_client.py");

fn required() -> bool {
    std::env::var("AI_REQUIRE_MCP").as_deref() == Ok("1")
}

/// Skip (say why and how) or, under `AI_REQUIRE_MCP=1`, fail.
fn missing(what: &str, how: &str) {
    assert!(!required(), "AI_REQUIRE_MCP=1 and {what} is missing: {how}");
    eprintln!("skipped: {what} is missing ({how})");
}

/// A Python with the official MCP SDK, by its real path.
fn sdk_python() -> Option<String> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys, mcp.client.stdio; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    match out {
        Some(o) => Some(String::from_utf8_lossy(&o.stdout).trim().to_owned()),
        None => {
            missing("the MCP Python SDK", "pip install mcp");
            None
        }
    }
}

/// The folder the npm MCP packages are installed in: `AI_MCP_NODE` or `target/mcp-node`.
pub fn node_dir() -> PathBuf {
    std::env::var_os("AI_MCP_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-node"))
}

/// An npm package's program, installed with `npm install --prefix target/mcp-node PACKAGE`.
pub fn node_program(bin: &str, package: &str) -> Option<PathBuf> {
    let path = node_dir().join("node_modules/.bin").join(bin);
    let node = std::process::Command::new("node").arg("--version").output();
    if path.exists() && node.is_ok_and(|o| o.status.success()) {
        return Some(path);
    }
    missing(
        package,
        &format!(
            "install Node.js, then: npm install --prefix {} {package}",
            node_dir().display()
        ),
    );
    None
}

/// A world whose default model is `echo`, with a knowledge base `notes` (one note about the
/// backup) and a second one, `private`, and a slow fake `gemini`.
fn world() -> Env {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let notes = env.project_file(
        "notes/backup.md",
        "# Backup\nThe backup runs nightly at 2am, to the NAS in the cellar.\n",
    );
    env.project_file("secret/diary.md", "# Diary\nThe backup of my secrets.\n");
    let dir = notes.parent().unwrap().to_str().unwrap().to_owned();
    env.run(&["kb", "add", "notes", &dir]).success();
    let secret = env.path("project/secret");
    env.run(&["kb", "add", "private", secret.to_str().unwrap()])
        .success();
    env
}

/// Raw messages to `ai mcp ARGS`; its answers, each line of stdout checked to be JSON-RPC.
fn raw(env: &Env, args: &[&str], messages: &[Value]) -> Vec<Value> {
    let mut input = String::new();
    for m in messages {
        input.push_str(&m.to_string());
        input.push('\n');
    }
    let mut all = vec!["mcp"];
    all.extend_from_slice(args);
    let out = env.command(&all).write_stdin(input).run().success();
    out.stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(v["jsonrpc"], "2.0", "{l}");
            v
        })
        .collect()
}

fn init(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
}

fn tool_names(answer: &Value) -> Vec<String> {
    answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn versions_ping_and_protocol_errors() {
    let env = world();
    for (asked, got) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("1999-01-01", "2025-06-18"),
    ] {
        let answers = raw(&env, &[], &[init(asked)]);
        assert_eq!(answers[0]["id"], 1);
        assert_eq!(answers[0]["result"]["protocolVersion"], got, "{asked}");
        assert_eq!(answers[0]["result"]["serverInfo"]["name"], "ai");
        assert!(answers[0]["result"]["capabilities"]["tools"].is_object());
    }
    let answers = raw(
        &env,
        &[],
        &[
            init("2025-06-18"),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}),
            json!([{"jsonrpc": "2.0", "id": 5, "method": "ping"}]),
        ],
    );
    // The notification got no answer; the rest one each, in order.
    assert_eq!(
        answers[1],
        json!({"jsonrpc": "2.0", "id": "p", "result": {}})
    );
    assert_eq!(answers[2]["error"]["code"], -32601);
    assert_eq!(answers[3]["error"]["code"], -32602);
    assert!(
        answers[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool \"nope\"")
    );
    assert_eq!(answers[4]["error"]["code"], -32600);
    assert_eq!(answers.len(), 5);
    // A line that is not JSON is answered with a parse error, and the server goes on.
    let out = env
        .command(&["mcp"])
        .write_stdin(format!(
            "this is not json\n{}\n",
            json!({"jsonrpc": "2.0", "id": 9, "method": "ping"})
        ))
        .run()
        .success();
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["error"]["code"], -32700);
    assert_eq!(lines[1]["id"], 9);
}

#[test]
fn only_what_the_user_exposes_is_offered_or_reachable() {
    let env = world();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let all = raw(&env, &[], &[init("2025-06-18"), list.clone()]);
    assert_eq!(
        tool_names(&all[1]),
        [
            "list_knowledge_bases",
            "search_notes",
            "read_note",
            "ask",
            "list_chats",
            "read_chat"
        ]
    );
    let some = raw(
        &env,
        &["--kb", "notes", "--models", "echo", "--no-chats"],
        &[init("2025-06-18"), list.clone()],
    );
    assert_eq!(
        tool_names(&some[1]),
        ["list_knowledge_bases", "search_notes", "read_note", "ask"]
    );
    let tools = some[1]["result"]["tools"].as_array().unwrap();
    let search = tools.iter().find(|t| t["name"] == "search_notes").unwrap();
    assert_eq!(
        search["inputSchema"]["properties"]["base"]["enum"],
        json!(["notes"])
    );
    assert_eq!(search["annotations"]["readOnlyHint"], true);
    let ask = tools.iter().find(|t| t["name"] == "ask").unwrap();
    assert_eq!(
        ask["inputSchema"]["properties"]["model"]["enum"],
        json!(["echo"])
    );
    // Tools not offered cannot be called.
    let none = raw(
        &env,
        &["--no-kb", "--no-ask", "--no-chats"],
        &[
            init("2025-06-18"),
            list,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_chat", "arguments": {"id": "X"}}}),
        ],
    );
    assert!(tool_names(&none[1]).is_empty());
    assert_eq!(none[2]["error"]["code"], -32602);
    // The same from config.
    let mut config = env.config();
    config["mcp"] = json!({"serve": {"kb": ["notes"], "ask": false, "chats": false}});
    env.write_config(&config.to_string());
    let conf = raw(
        &env,
        &[],
        &[
            init("2025-06-18"),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ],
    );
    assert_eq!(
        tool_names(&conf[1]),
        ["list_knowledge_bases", "search_notes", "read_note"]
    );
    // A base or a model that does not exist is an error at start.
    let out = env.command(&["mcp", "--kb", "nothere"]).run().code(2);
    assert!(
        out.stderr
            .contains("error: --kb nothere: there is no knowledge base"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty());
    let out = env.command(&["mcp", "--models", "nosuch"]).run();
    assert_ne!(out.status.code(), Some(0));
    assert!(out.stderr.contains("nosuch"), "{}", out.stderr);
}

/// Run the SDK client with `calls` (`[[tool, args], …]`) against `ai mcp ARGS`.
fn sdk(env: &Env, python: &str, args: &[&str], calls: &Value, extra: &[(&str, &str)]) -> Value {
    let script = env.path("sdk_client.py");
    std::fs::write(&script, SDK_CLIENT).unwrap();
    let mut cmd = env
        .program(python)
        .arg(&script)
        .arg(ai_bin())
        .arg("mcp")
        .args(args)
        .env("MCP_CALLS", calls.to_string());
    for (k, v) in extra {
        cmd = cmd.env(k, v);
    }
    let out = cmd.run().success();
    let last = out.stdout.lines().last().unwrap_or_default().to_owned();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr))
}

#[test]
fn the_python_sdk_client_calls_every_tool() {
    let Some(python) = sdk_python() else { return };
    let env = world();
    let calls = json!([
        ["list_knowledge_bases", {}],
        ["search_notes", {"query": "backup", "base": "notes", "k": 500}],
        ["read_note", {"base": "notes", "id": "backup.md"}],
        ["ask", {"model": "echo", "prompt": "what about the backup?", "kb": "notes"}],
        ["list_chats", {"limit": 5}],
    ]);
    let seen = sdk(&env, &python, &["--kb", "notes"], &calls, &[]);
    assert_eq!(seen["server"], "ai");
    assert_eq!(seen["protocol"], "2025-06-18");
    let c = seen["calls"].as_array().unwrap();
    for call in c {
        assert_eq!(call["error"], false, "{call}");
    }
    // Only the exposed base is listed or searched.
    let bases: Value = serde_json::from_str(c[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(bases.as_array().unwrap().len(), 1);
    assert_eq!(bases[0]["name"], "notes");
    assert_eq!(bases[0]["notes"], 1);
    let hits: Value = serde_json::from_str(c[1]["text"].as_str().unwrap()).unwrap();
    let hit = &hits[0];
    assert_eq!(
        (&hit["base"], &hit["id"], &hit["title"], &hit["path"]),
        (
            &json!("notes"),
            &json!("backup.md"),
            &json!("Backup"),
            &json!("backup.md")
        )
    );
    assert!(hit["score"].as_f64().unwrap() > 0.0);
    assert!(hit["passage"].as_str().unwrap().contains("nightly at 2am"));
    assert!(
        c[2]["text"]
            .as_str()
            .unwrap()
            .contains("to the NAS in the cellar")
    );
    // The ask is an ordinary turn: a chat the shell can continue, grounded in the base.
    let reply = c[3]["text"].as_str().unwrap();
    assert!(reply.contains("what about the backup?"), "{reply}");
    assert!(
        c[3]["progress"].as_u64().unwrap() >= 1,
        "no progress notification: {c:?}"
    );
    let id = env.chat_ids().pop().unwrap();
    assert!(
        reply.contains(&format!("[chat: {id} · model: echo")),
        "{reply}"
    );
    let msgs = env.messages(&id);
    assert_eq!(msgs[0]["content"], "what about the backup?");
    env.run(&["chat", &id, "and then?"]).success();
    assert_eq!(env.messages(&id).len(), 4);
    let chats: Value = serde_json::from_str(c[4]["text"].as_str().unwrap()).unwrap();
    assert_eq!(chats[0]["id"], id.as_str());
    // Continue it through the server, and read it.
    let more = json!([
        ["ask", {"model": "echo", "prompt": "one more", "chat": id}],
        ["read_chat", {"id": id}],
    ]);
    let seen = sdk(&env, &python, &[], &more, &[]);
    let c = seen["calls"].as_array().unwrap();
    assert_eq!(c[0]["error"], false, "{c:?}");
    assert_eq!(env.chat_ids().len(), 1);
    assert!(c[1]["text"].as_str().unwrap().contains("one more"));
}

#[test]
fn the_python_sdk_client_gets_errors_it_can_read() {
    let Some(python) = sdk_python() else { return };
    let env = world();
    let calls = json!([
        ["search_notes", {}],
        ["search_notes", {"query": "secrets", "base": "private"}],
        ["read_note", {"base": "notes", "id": "missing.md"}],
        ["read_chat", {"id": "--help"}],
        ["read_chat", {"id": "NOPE"}],
        ["ask", {"model": "gpt", "prompt": "hi"}],
        ["ask", {"prompt": "hi", "chat": "ZZZ"}],
        ["nope", {}],
    ]);
    let seen = sdk(
        &env,
        &python,
        &["--kb", "notes", "--models", "echo", "--no-chats"],
        &calls,
        &[],
    );
    let c = seen["calls"].as_array().unwrap();
    let text = |i: usize| c[i]["text"].as_str().unwrap_or("").to_owned();
    for i in [0, 1, 2, 5, 6] {
        assert_eq!(c[i]["error"], true, "{i}: {:?}", c[i]);
    }
    assert!(text(0).contains("query"), "{}", text(0));
    assert!(
        text(1).contains("there is no knowledge base \"private\" here"),
        "{}",
        text(1)
    );
    assert!(!text(1).contains("Diary"));
    assert!(!text(2).is_empty());
    // read_chat is not offered (--no-chats): a protocol error, whatever the ID.
    for i in [3, 4] {
        let e = c[i]["exception"].as_str().unwrap_or_default();
        assert!(e.contains("unknown tool \"read_chat\""), "{i}: {:?}", c[i]);
    }
    assert!(
        text(5).contains("the model \"gpt\" is not offered here; the models are: echo"),
        "{}",
        text(5)
    );
    assert!(
        text(6).contains("not one this connection started"),
        "{}",
        text(6)
    );
    assert!(
        c[7]["exception"].as_str().unwrap().contains("unknown tool"),
        "{:?}",
        c[7]
    );
    assert!(env.chat_ids().is_empty(), "an error made a chat");
}

#[test]
fn a_cancelled_ask_is_saved_interrupted_and_the_chat_stays_valid() {
    let Some(python) = sdk_python() else { return };
    let env = world();
    let pid_file = env.path("state/gemini.pid");
    let seen = sdk(
        &env,
        &python,
        &[],
        &json!([]),
        &[
            (
                "MCP_CANCEL",
                &json!({"model": "gemini", "prompt": "tell me everything"}).to_string(),
            ),
            ("MCP_CANCEL_WHEN", pid_file.to_str().unwrap()),
        ],
    );
    assert_eq!(seen["cancel"], "cancelled");
    assert_eq!(seen["after_cancel"], "ping ok");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_gone(pid as u32, std::time::Duration::from_secs(20)),
        "the backend still runs"
    );
    let msgs = env.only_messages();
    assert_eq!(msgs[0]["content"], "tell me everything");
    assert_eq!(msgs[1]["interrupted"], true, "{msgs:?}");
    // The chat goes on from the shell.
    let id = env.chat_ids().pop().unwrap();
    env.run(&["chat", &id, "echo", "go on"]).success();
}

#[test]
fn the_inspector_cli_lists_and_calls_the_tools() {
    let Some(inspector) = node_program("mcp-inspector", "@modelcontextprotocol/inspector") else {
        return;
    };
    let env = world();
    let home = format!("AI_CLI_HOME={}", env.path("home").display());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--cli",
            "-e",
            &home,
            ai_bin().to_str().unwrap(),
            "mcp",
            "--kb",
            "notes",
            "--method",
        ];
        args.extend_from_slice(extra);
        let out = env
            .program(&inspector)
            .args(&args)
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", env.path("bin").display()),
            )
            .run();
        (out.status.code(), out.stdout, out.stderr)
    };
    let (code, out, err) = run(&["tools/list"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "list_knowledge_bases",
            "search_notes",
            "read_note",
            "ask",
            "list_chats",
            "read_chat"
        ]
    );
    let (code, out, err) = run(&[
        "tools/call",
        "--tool-name",
        "search_notes",
        "--tool-arg",
        "query=backup",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["isError"], false);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("backup.md")
    );
    let (code, out, err) = run(&[
        "tools/call",
        "--tool-name",
        "ask",
        "--tool-arg",
        "model=echo",
        "--tool-arg",
        "prompt=hello from the inspector",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello from the inspector"),
        "{out}"
    );
    assert_eq!(env.chat_ids().len(), 1);
    // An error is one.
    let (code, out, err) = run(&[
        "tools/call",
        "--tool-name",
        "read_note",
        "--tool-arg",
        "base=private",
        "--tool-arg",
        "id=diary.md",
    ]);
    let all = format!("{out}{err}");
    assert!(
        code != Some(0) || all.contains("\"isError\": true"),
        "{all}"
    );
    assert!(!all.contains("my secrets"), "{all}");
}

/// `ai mcp ARGS` running with its stdin and stdout held: messages sent one at a time, answers
/// read as they come.
struct Live {
    proc: Proc,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl Live {
    fn start(env: &Env, args: &[&str]) -> Live {
        let mut all = vec!["mcp"];
        all.extend_from_slice(args);
        let mut proc = env
            .command(&all)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start ai mcp");
        let stdin = proc.stdin.take();
        let stdout = proc.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut live = Live { proc, stdin, lines };
        live.send(&init("2025-06-18"));
        assert_eq!(live.answer(1)["result"]["serverInfo"]["name"], "ai");
        live
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let pipe = self.stdin.as_mut().unwrap();
        pipe.write_all(bytes).unwrap();
        pipe.flush().unwrap();
    }

    fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next message (a notification included).
    fn next(&self) -> Value {
        self.lines
            .recv_timeout(DEADLINE)
            .expect("ai mcp answered nothing")
    }

    /// The answer to request `id` (what comes before it, skipped).
    fn answer(&self, id: impl Into<Value>) -> Value {
        let id = id.into();
        loop {
            let v = self.next();
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }

    /// Ask request `id` and wait for its answer.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }
}

fn tool_call(id: u64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": args}})
}

#[test]
fn sigterm_during_an_ask_ends_the_server_with_143_and_the_chat_saved() {
    // Found by a hostile test: the ask was stopped, but `ai mcp` went on reading, and every
    // later call failed at once ("ai exited with 143") since the signal stayed recorded.
    let env = world();
    let pid_file = env.path("state/gemini.pid");
    let mut live = Live::start(&env, &[]);
    live.send(&tool_call(
        2,
        "ask",
        json!({"model": "gemini", "prompt": "tell me everything"}),
    ));
    assert!(
        wait_for_file(&pid_file, DEADLINE),
        "the backend never started"
    );
    let backend = read_pid(&pid_file);
    signal(live.proc.pid(), libc::SIGTERM);
    let answer = live.answer(2);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let status = live.proc.wait_status();
    assert_eq!(status.code(), Some(143));
    assert!(wait_gone(backend, DEADLINE), "the backend still runs");
    let msgs = env.only_messages();
    assert_eq!(msgs[0]["content"], "tell me everything");
    assert_eq!(msgs[1]["interrupted"], true, "{msgs:?}");
}

#[test]
fn a_line_over_the_limit_is_skipped_without_being_held_in_memory() {
    // Found by a hostile test: the rest of an over-long line was read whole into memory (a
    // client sending 200 MiB without a newline took 220 MB); and a line of exactly the limit
    // swallowed the message after it.
    let env = world();
    let mut live = Live::start(&env, &[]);
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..96 {
        live.send_raw(&chunk);
    }
    live.send_raw(b"\n");
    let err = live.next();
    assert_eq!(err["error"]["code"], -32700, "{err}");
    assert_eq!(live.request(2, "ping", json!({}))["result"], json!({}));
    let status = std::fs::read_to_string(format!("/proc/{}/status", live.proc.pid())).unwrap();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(peak_kb < 48 * 1024, "ai mcp held {peak_kb} kB");
    // A message of exactly the limit is still a message (not JSON here), and the next one is
    // read as itself.
    let mut exact = vec![b' '; 4 << 20];
    exact[0] = b'x';
    exact.push(b'\n');
    live.send_raw(&exact);
    assert_eq!(live.next()["error"]["code"], -32700);
    assert_eq!(live.request(3, "ping", json!({}))["result"], json!({}));
    drop(live.stdin.take());
    assert!(live.proc.wait_status().success());
}

#[test]
fn long_arguments_get_a_short_readable_error() {
    // Found by a hostile test: an unknown model of 500 KB came back whole in the error (a
    // tool result of 500 KB); a query or an ID over 128 KiB failed with "ai could not run:
    // Argument list too long"; a query that matched nothing was echoed whole.
    let env = world();
    let mut live = Live::start(&env, &[]);
    let text = |v: &Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let huge = "m".repeat(500_000);
    let a = live.request(
        2,
        "tools/call",
        json!({"name": "ask", "arguments": {"model": format!("nosuch{huge}"), "prompt": "hi"}}),
    );
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(text(&a).len() < 8 * 1024, "{} bytes", text(&a).len());
    for (id, tool, args) in [
        (3, "search_notes", json!({"query": huge})),
        (4, "read_note", json!({"base": "notes", "id": huge})),
    ] {
        let a = live.request(id, "tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(a["result"]["isError"], true, "{a}");
        let t = text(&a);
        assert!(t.len() < 8 * 1024, "{} bytes", t.len());
        assert!(!t.contains("Argument list too long"), "{t}");
        assert!(t.contains("longer than"), "{t}");
    }
    let a = live.request(
        5,
        "tools/call",
        json!({"name": "search_notes", "arguments": {"query": "zzqq ".repeat(3000)}}),
    );
    assert_eq!(a["result"]["isError"], false, "{a}");
    assert!(text(&a).starts_with("no notes match"), "{a}");
    assert!(text(&a).len() < 1024, "{} bytes", text(&a).len());
    // A long prompt goes on stdin: no such bound.
    let prompt = "word ".repeat(40_000);
    let a = live.request(
        6,
        "tools/call",
        json!({"name": "ask", "arguments": {"model": "echo", "prompt": prompt}}),
    );
    assert_eq!(a["result"]["isError"], false, "{a}");
    drop(live.stdin.take());
    assert!(live.proc.wait_status().success());
}

#[test]
fn a_request_without_a_string_method_is_answered() {
    // Found by a hostile test: `{"id": 7, "method": 5}` (or no method at all) got no answer,
    // and a client waits for one for ever.
    let env = world();
    let answers = raw(
        &env,
        &[],
        &[
            init("2025-06-18"),
            json!({"jsonrpc": "2.0", "id": 7, "method": 5}),
            json!({"jsonrpc": "2.0", "id": "x"}),
            json!({"jsonrpc": "2.0", "id": 8, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
        ],
    );
    assert_eq!(answers[1]["id"], 7);
    assert_eq!(answers[1]["error"]["code"], -32600);
    assert_eq!(answers[2]["id"], "x");
    assert_eq!(answers[2]["error"]["code"], -32600);
    // An answer (to a request the server never sent) is not answered.
    assert_eq!(answers[3], json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    assert_eq!(answers.len(), 4);
}

#[test]
fn a_model_name_that_is_an_option_never_reaches_a_backend() {
    // Found by a hostile test: `ask` with model "gemini:--yolo" ran `gemini -m --yolo` (and
    // "ollama:--verbose" ran `ollama run --verbose`): a model or an agent could turn on a
    // backend's auto-approval of its own tools through the model name.
    let env = world();
    for b in ["claude", "codex", "gemini", "qwen", "ollama"] {
        env.install(b);
    }
    let mut live = Live::start(&env, &[]);
    for (id, model) in [
        (2, "gemini:--yolo"),
        (3, "claude:--dangerously-skip-permissions"),
        (4, "codex:--dangerously-bypass-approvals-and-sandbox"),
        (5, "ollama:--verbose"),
        (6, "qwen:-y@high"),
    ] {
        let a = live.request(
            id,
            "tools/call",
            json!({"name": "ask", "arguments": {"model": model, "prompt": "hi"}}),
        );
        assert_eq!(a["result"]["isError"], true, "{model}: {a}");
        let text = a["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("cannot begin with '-'"), "{model}: {text}");
    }
    drop(live.stdin.take());
    assert!(live.proc.wait_status().success());
    assert!(env.calls().is_empty(), "a backend ran: {:?}", env.calls());
    assert!(env.chat_ids().is_empty(), "an error made a chat");
    // The same from the shell.
    let out = env.run(&["ollama:--verbose", "hi"]).code(2);
    assert!(
        out.stderr.contains("cannot begin with '-'"),
        "{}",
        out.stderr
    );
    assert!(env.calls().is_empty());
}

#[test]
fn a_huge_ask_timeout_does_not_lose_the_call() {
    // Found by a hostile test: `--timeout 1e19` (or config mcp.serve.timeout) made the call's
    // deadline overflow: its thread panicked, the request was never answered and kept its
    // slot among the calls that may run at once.
    let env = world();
    let mut live = Live::start(&env, &["--timeout", "1e19"]);
    let a = live.request(
        2,
        "tools/call",
        json!({"name": "ask", "arguments": {"model": "echo", "prompt": "hi"}}),
    );
    assert_eq!(a["result"]["isError"], false, "{a}");
    drop(live.stdin.take());
    let out = live.proc.finish();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_panic_in_a_call_answers_that_call_and_the_server_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let env = world();
    // A debug build panics in `list_chats` when asked to (release builds have no such hook).
    let mut proc = env
        .command(&["mcp"])
        .env("AI_CLI_DEBUG_PANIC_TOOL", "list_chats")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = proc.stdin.take().unwrap();
    let mut output = BufReader::new(proc.stdout.take().unwrap());
    let mut ask = |m: Value| -> Value {
        let id = m["id"].clone();
        writeln!(input, "{m}").unwrap();
        input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(output.read_line(&mut line).unwrap() > 0, "ai mcp ended");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    ask(init("2025-06-18"));
    let call = |id: u64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": {}}})
    };
    let failed = ask(call(2, "list_chats"));
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("internal error: ai failed while running this call"),
        "{failed}"
    );
    // Still serving: a ping, another call, and the same request ID again.
    let pong = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(pong["result"], json!({}));
    let bases = ask(call(4, "list_knowledge_bases"));
    assert_eq!(bases["result"]["isError"], false, "{bases}");
    let again = ask(call(2, "list_chats"));
    assert_eq!(again["error"]["code"], -32603, "{again}");
    drop(input);
    let out = proc.finish();
    assert_eq!(out.status.code(), Some(0));
}
