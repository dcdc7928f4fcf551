//! Command tools (config `tools.commands`, `--tool NAME`, `tools.allow`) against the scripted
//! server and a fake program that records what it got: the arguments arrive as JSON on stdin,
//! stdout is the result, a non-zero exit and a timeout are error results; a tool not named is
//! not offered; without a terminal and without --yolo nothing runs; on a terminal the question
//! is asked and only "y" runs it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

/// The fake program: `$1` its behaviour, `$2` a folder where it writes its pid and its stdin.
const FAKE_TOOL: &str = r#"
echo $$ > "$2/pid"
case "$1" in
  ok) cat > "$2/args"; printf 'disk: 42 GB free\n' ;;
  fail) cat > "$2/args"; echo 'partial'; echo 'du: cannot access /nope' >&2; exit 4 ;;
  slow) cat > "$2/args"; echo 'about to wait' >&2; exec /bin/sleep 30 ;;
  big) cat > "$2/args"; /usr/bin/head -c 100000 /dev/zero | /usr/bin/tr '\0' 'x' ;;
  escape) cat > "$2/args"; /usr/bin/setsid /bin/sleep 100 & echo $! > "$2/escaped"; echo started ;;
  escape_slow) cat > "$2/args"; /usr/bin/setsid /bin/sleep 100 & echo $! > "$2/escaped"
    echo started; exec /bin/sleep 30 ;;
esac
"#;

/// A world pointed at `server` with the command tool `disk` (the fake in `mode`); the
/// fake's folder is returned.
fn world(server: &Server, mode: &str, extra: Value) -> (Env, PathBuf) {
    let env = Env::for_provider("openai", server);
    let script = env.path("fake_tool.sh");
    std::fs::write(&script, FAKE_TOOL).unwrap();
    let state = env.path("tool_state");
    std::fs::create_dir_all(&state).unwrap();
    let mut spec = json!({
        "description": "Free space of a disk",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]},
        "command": ["/bin/sh", script.to_str().unwrap(), mode, state.to_str().unwrap()]});
    if let Value::Object(m) = extra {
        for (k, v) in m {
            spec[k] = v;
        }
    }
    let mut config = config_of(&env);
    config["tools"]["commands"]["disk"] = spec;
    env.write_config(&config.to_string());
    (env, state)
}

/// OpenAI: one call of `disk`.
fn disk_call() -> String {
    let call = json!({"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "disk", "arguments": "{\"path\":\"/tmp\"}"}});
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

fn script() -> Vec<Reply> {
    vec![
        Reply::sse(&[&disk_call()]),
        Reply::sse(&[&oa_stream("Plenty of space.", 1, 1)]),
    ]
}

fn the_result(env: &Env) -> Value {
    let round = env
        .only_chat()
        .into_iter()
        .find(|r| r["type"] == "round")
        .expect("a round");
    round["results"][0].clone()
}

#[test]
fn with_yolo_the_arguments_arrive_on_stdin_and_stdout_is_the_result() {
    let s = Server::start(script());
    let (env, state) = world(&s, "ok", json!({}));
    let out = env
        .run(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"])
        .success();
    assert_eq!(out.stdout, "Plenty of space.\n");
    assert!(out.stderr.contains("command disk … ok"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(state.join("args")).unwrap(),
        "{\"path\":\"/tmp\"}\n"
    );
    let first = s.requests()[0].json();
    let tool = &first["tools"][0]["function"];
    assert_eq!(tool["name"], "disk");
    assert_eq!(tool["description"], "Free space of a disk");
    assert_eq!(tool["parameters"]["required"], json!(["path"]));
    let r = the_result(&env);
    assert_ne!(r["error"], true);
    assert_eq!(r["content"], "disk: 42 GB free\n");
    let m = s.requests()[1].json()["messages"].clone();
    let last = m.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "disk: 42 GB free\n");
}

#[test]
fn a_command_tool_not_named_is_not_offered_and_config_can_allow_it() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("No tools.", 1, 1)]),
        Reply::sse(&[&disk_call()]),
        Reply::sse(&[&oa_stream("Allowed.", 1, 1)]),
    ]);
    let (env, state) = world(&s, "ok", json!({}));
    env.run(&["openai:gpt-test", "--yolo", "free space?"])
        .success();
    assert!(s.requests()[0].json().get("tools").is_none());
    assert!(!state.join("pid").exists());
    let mut config = env.config();
    config["tools"]["allow"] = json!(["disk"]);
    env.write_config(&config.to_string());
    let out = env
        .run(&["openai:gpt-test", "yolo", "free space?"])
        .success();
    assert_eq!(out.stdout, "Allowed.\n");
    assert_eq!(
        s.requests()[1].json()["tools"][0]["function"]["name"],
        "disk"
    );
    assert!(state.join("args").exists());
    // `tools.allow` naming no command is a config error.
    config["tools"]["allow"] = json!(["nope"]);
    env.write_config(&config.to_string());
    let out = env.run(&["openai:gpt-test", "hi"]).code(3);
    assert!(
        out.stderr.contains("tools.allow: \"nope\""),
        "{}",
        out.stderr
    );
}

#[test]
fn without_a_terminal_and_without_yolo_nothing_runs() {
    let s = Server::start(script());
    let (env, state) = world(&s, "ok", json!({}));
    let out = env
        .run(&["openai:gpt-test", "--tool", "disk", "free space?"])
        .success();
    assert_eq!(out.stdout, "Plenty of space.\n");
    let r = the_result(&env);
    assert_eq!(r["error"], true);
    assert!(
        r["content"]
            .as_str()
            .unwrap()
            .starts_with("not confirmed: "),
        "{r}"
    );
    assert!(
        out.stderr.contains("disk … error: not confirmed"),
        "{}",
        out.stderr
    );
    assert!(!state.join("pid").exists(), "the command ran");
}

#[test]
fn a_non_zero_exit_is_an_error_result_with_the_end_of_stderr() {
    let s = Server::start(script());
    let (env, _) = world(&s, "fail", json!({}));
    env.run(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"])
        .success();
    let r = the_result(&env);
    assert_eq!(r["error"], true);
    let text = r["content"].as_str().unwrap();
    assert!(text.starts_with("disk failed (exit code 4)"), "{text}");
    assert!(text.contains("du: cannot access /nope"), "{text}");
}

#[test]
fn a_command_past_its_timeout_is_stopped() {
    let s = Server::start(script());
    let (env, state) = world(&s, "slow", json!({"timeout": 0.5}));
    env.run(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"])
        .success();
    let r = the_result(&env);
    assert_eq!(r["error"], true);
    let text = r["content"].as_str().unwrap();
    assert!(text.contains("disk did not finish within"), "{text}");
    assert!(text.contains("about to wait"), "{text}");
    let pid = read_pid(&state.join("pid"));
    assert!(wait_gone(pid, Duration::from_secs(3)), "{pid} still runs");
}

#[test]
fn a_long_output_is_cut_with_a_note() {
    let s = Server::start(script());
    let (env, _) = world(&s, "big", json!({}));
    env.run(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"])
        .success();
    let r = the_result(&env);
    assert_ne!(r["error"], true);
    assert_eq!(r["truncated"], true);
    let text = r["content"].as_str().unwrap();
    assert!(text.starts_with("xxxx"), "{}", &text[..10]);
    assert!(
        text.ends_with("(cut: the output was 98 KiB; the first 32 KiB are kept.)"),
        "{}",
        &text[text.len() - 80..]
    );
}

#[test]
fn an_unknown_tool_name_is_a_usage_error() {
    let s = Server::start(vec![]);
    let (env, _) = world(&s, "ok", json!({}));
    let out = env.run(&["openai:gpt-test", "--tool", "rm", "hi"]).code(2);
    assert!(
        out.stderr
            .contains("error: --tool rm: there is no command tool of that name"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: the command tools in config.json are: disk"),
        "{}",
        out.stderr
    );
    assert!(s.requests().is_empty());
    // A CLI backend cannot be given one.
    let out = env.run(&["echo", "--tool", "disk", "hi"]).code(2);
    assert!(
        out.stderr.contains("not an HTTP provider"),
        "{}",
        out.stderr
    );
}

#[test]
fn on_a_terminal_the_question_is_asked_and_no_or_ctrl_d_declines() {
    for (keys, runs) in [("n\r", false), ("\x04", false), ("y\r", true)] {
        let s = Server::start(script());
        let (env, state) = world(&s, "ok", json!({}));
        let mut term = Terminal::start(&env, "openai:gpt-test --tool disk 'free space?'");
        term.expect("run disk with {\"path\":\"/tmp\"}? [y/N] ");
        term.send(keys);
        term.expect("Plenty of space.");
        let (code, screen) = term.finish();
        assert_eq!(code, Some(0), "{keys:?}: {screen}");
        let r = the_result(&env);
        assert_eq!(state.join("args").exists(), runs, "{keys:?}: {screen}");
        if runs {
            assert_eq!(r["content"], "disk: 42 GB free\n");
        } else {
            assert_eq!(r["error"], true);
            assert!(
                r["content"]
                    .as_str()
                    .unwrap()
                    .starts_with("the user declined"),
                "{r}"
            );
        }
    }
}

/// OpenAI: one call of `disk` with `args`.
fn disk_call_with(args: &Value) -> String {
    let call = json!({"index": 0, "id": "call_1", "type": "function",
        "function": {"name": "disk", "arguments": args.to_string()}});
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

#[test]
fn the_question_shows_long_arguments_whole_and_exactly() {
    // H2-1: a long first key pushed `delete` and `path` out of a 300-character question, and
    // runs of spaces were joined.
    let reason = "Listing the size of the temporary folder the user asked about. ".repeat(3);
    let args = json!({"a_reason": reason, "path": format!("/srv/safe{}; and also /home/user/.ssh", " ".repeat(400)), "delete": true});
    let s = Server::start(vec![
        Reply::sse(&[&disk_call_with(&args)]),
        Reply::sse(&[&oa_stream("Plenty of space.", 1, 1)]),
    ]);
    let (env, state) = world(&s, "ok", json!({}));
    let mut term = Terminal::start(&env, "openai:gpt-test --tool disk 'free space?'");
    term.expect(&format!(
        "{}\r\nrun disk with the arguments above? [y/N] ",
        args
    ));
    term.send("y\r");
    term.expect("Plenty of space.");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(
        std::fs::read_to_string(state.join("args")).unwrap(),
        format!("{args}\n")
    );
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
fn ctrl_c_stops_a_running_command_tool() {
    let s = Server::start(script());
    let (env, state) = world(&s, "slow", json!({}));
    let mut ai = env.spawn(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"]);
    assert!(wait_for_file(&state.join("args"), Duration::from_secs(10)));
    let tool = read_pid(&state.join("pid"));
    signal(ai.pid(), libc::SIGINT);
    let status = ai.wait_status_within(Duration::from_secs(5));
    assert_eq!(status.code(), Some(130));
    assert!(wait_gone(tool, Duration::from_secs(3)), "{tool} still runs");
}

#[test]
fn ctrl_c_in_the_first_tool_round_keeps_the_prompt() {
    let s = Server::start(script());
    let (env, state) = world(&s, "slow", json!({}));
    let mut ai = env.spawn(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"]);
    assert!(wait_for_file(&state.join("args"), Duration::from_secs(10)));
    signal(ai.pid(), libc::SIGINT);
    let status = ai.wait_status_within(Duration::from_secs(5));
    assert_eq!(status.code(), Some(130));
    // The round never completed, so it is not written; the question is.
    let msgs = env.only_messages();
    assert_eq!(msgs[0]["role"], "user", "{msgs:?}");
    assert_eq!(msgs[0]["content"], "free space?");
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["interrupted"], true);
}

/// Stops the process a tool left outside its group (`setsid`), whatever the test's outcome.
struct Escaped(PathBuf);

impl Drop for Escaped {
    fn drop(&mut self) {
        if let Ok(text) = std::fs::read_to_string(&self.0)
            && let Ok(pid) = text.trim().parse::<i32>()
        {
            // SAFETY: kill(2) takes no pointers.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// H2-2: a tool that leaves a process outside its group holding its stdout. The turn goes on
/// once the tool itself has exited; it does not wait for the escaped process (100 s, longer
/// than the test's hang guard).
#[test]
fn a_grandchild_holding_stdout_does_not_hold_the_turn() {
    let s = Server::start(script());
    let (env, state) = world(&s, "escape", json!({"timeout": 3}));
    let _escaped = Escaped(state.join("escaped"));
    let out = env
        .run(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"])
        .success();
    assert_eq!(out.stdout, "Plenty of space.\n");
    let r = the_result(&env);
    assert_eq!(r["content"], "started\n", "{r}");
}

/// H2-2: the same tool, still running itself: stopped at its timeout, and the turn goes on.
#[test]
fn a_grandchild_holding_stdout_does_not_outlive_the_timeout() {
    let s = Server::start(script());
    let (env, state) = world(&s, "escape_slow", json!({"timeout": 0.5}));
    let _escaped = Escaped(state.join("escaped"));
    env.run(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"])
        .success();
    let r = the_result(&env);
    assert_eq!(r["error"], true);
    let text = r["content"].as_str().unwrap();
    assert!(text.contains("disk did not finish within"), "{text}");
}

/// H2-2: and the first Ctrl+C ends the call (130), keeping the prompt.
#[test]
fn a_grandchild_holding_stdout_does_not_outlive_ctrl_c() {
    let s = Server::start(script());
    let (env, state) = world(&s, "escape_slow", json!({}));
    let _escaped = Escaped(state.join("escaped"));
    let mut ai = env.spawn(&["openai:gpt-test", "--tool", "disk", "--yolo", "free space?"]);
    assert!(wait_for_file(
        &state.join("escaped"),
        Duration::from_secs(10)
    ));
    signal(ai.pid(), libc::SIGINT);
    let status = ai.wait_status_within(Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    let msgs = env.only_messages();
    assert_eq!(msgs[0]["content"], "free space?", "{msgs:?}");
}

// ---- one approval path, asked by each face --------------------------------------------------

#[test]
fn in_a_session_the_question_is_asked_there_and_only_yes_runs() {
    let s = Server::start(vec![
        Reply::sse(&[&disk_call()]),
        Reply::sse(&[&oa_stream("Not run, then.", 1, 1)]),
        Reply::sse(&[&disk_call()]),
        Reply::sse(&[&oa_stream("Plenty of space.", 1, 1)]),
    ]);
    let (env, state) = world(&s, "ok", json!({}));
    let mut term = Terminal::start(&env, "-i openai:gpt-test --tool disk");
    term.expect("gpt-test> ");
    term.send("free space?\r");
    term.expect("run disk with {\"path\":\"/tmp\"}? [y/N] ");
    term.send("n\r");
    term.expect("Not run, then.");
    term.expect("gpt-test> ");
    assert!(!state.join("args").exists(), "a no ran it");
    term.send("and now?\r");
    term.expect("run disk with {\"path\":\"/tmp\"}? [y/N] ");
    term.send("yes\r");
    term.expect("Plenty of space.");
    term.expect("gpt-test> ");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(
        std::fs::read_to_string(state.join("args")).unwrap(),
        "{\"path\":\"/tmp\"}\n"
    );
    let results: Vec<Value> = env
        .only_chat()
        .into_iter()
        .filter(|r| r["type"] == "round")
        .map(|r| r["results"][0].clone())
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["error"], true);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("the user declined: disk was not run"),
        "{results:?}"
    );
    assert_eq!(results[1]["content"], "disk: 42 GB free\n");
    // The answers are no prompts: the history keeps the two lines only.
    let history = std::fs::read_to_string(env.home.join("history")).unwrap();
    assert!(!history.contains("yes"), "{history}");
}

#[test]
fn in_a_session_lines_pasted_before_the_question_are_no_answer_and_run_after_the_turn() {
    // Found last session: with a burst of pasted lines whose first began a turn that asks
    // before a tool, the line editor handed over the next pasted line (read ahead with the
    // first) as the answer: `yes` ran the tool, anything else declined it.
    let s = Server::start(vec![
        Reply::sse(&[&disk_call()]),
        Reply::sse(&[&oa_stream("Not run, then.", 1, 1)]),
        Reply::sse(&[&oa_stream("You said yes.", 1, 1)]),
        Reply::sse(&[&oa_stream("You are welcome.", 1, 1)]),
    ]);
    let (env, state) = world(&s, "ok", json!({}));
    let mut term = Terminal::start(&env, "-i openai:gpt-test --tool disk");
    term.expect("gpt-test> ");
    term.send("free space?\ryes\rthanks\r");
    term.expect("run disk with {\"path\":\"/tmp\"}? [y/N] ");
    // The answer is what is typed after the question.
    term.send("n\r");
    term.expect("Not run, then.");
    // The pasted lines are messages, sent in order after the turn.
    term.expect("You said yes.");
    term.expect("You are welcome.");
    term.expect("gpt-test> ");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        !state.join("args").exists(),
        "a pasted line ran it: {screen}"
    );
    let prompts: Vec<Value> = env
        .only_messages()
        .into_iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(prompts, ["free space?", "yes", "thanks"], "{screen}");
    let results: Vec<Value> = env
        .only_chat()
        .into_iter()
        .filter(|r| r["type"] == "round")
        .map(|r| r["results"][0].clone())
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("the user declined: disk was not run"),
        "{results:?}"
    );
}

#[test]
fn in_a_session_a_long_question_shows_every_argument_and_ctrl_c_declines() {
    let reason = "Listing the size of the temporary folder the user asked about. ".repeat(3);
    let args = json!({"a_reason": reason, "path": "/home/user/.ssh", "delete": true});
    let s = Server::start(vec![
        Reply::sse(&[&disk_call_with(&args)]),
        Reply::sse(&[&oa_stream("Stopped.", 1, 1)]),
    ]);
    let (env, state) = world(&s, "ok", json!({}));
    let mut term = Terminal::start(&env, "-i openai:gpt-test --tool disk");
    term.expect("gpt-test> ");
    term.send("clean up\r");
    let before = term.expect("run disk with the arguments above? [y/N] ");
    assert!(before.contains(&args.to_string()), "{before}");
    term.send("\x03");
    term.expect("Stopped.");
    term.expect("gpt-test> ");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(!state.join("args").exists(), "Ctrl+C ran it: {screen}");
}

#[test]
fn in_a_session_data_tools_run_without_asking() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_call_named("json_keys", &json!({"path": "/"}))]),
        Reply::sse(&[&oa_stream("It has k0.", 1, 1)]),
    ]);
    let env = Env::for_provider("openai", &s);
    let doc = env.path("d.json");
    std::fs::write(&doc, r#"{"k0": 1}"#).unwrap();
    let mut term = Terminal::start(
        &env,
        &format!("-i openai:gpt-test --data '{}'", doc.display()),
    );
    term.expect("gpt-test> ");
    term.send("what keys?\r");
    term.expect("It has k0.");
    term.expect("gpt-test> ");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let offered = s.requests()[0].json();
    assert_eq!(offered["tools"][0]["function"]["name"], "json_keys");
    let round = env
        .only_chat()
        .into_iter()
        .find(|r| r["type"] == "round")
        .expect("a round");
    assert!(
        round["results"][0]["content"]
            .as_str()
            .unwrap()
            .contains("k0"),
        "{round}"
    );
}

/// OpenAI: one call of `name` with `args`.
fn oa_call_named(name: &str, args: &Value) -> String {
    disk_call_with(args).replace("\"name\":\"disk\"", &format!("\"name\":\"{name}\""))
}

#[test]
fn under_ai_mcp_a_tool_that_needs_a_yes_is_refused_naming_what_allows_it() {
    use std::io::{BufRead, BufReader, Write};
    let s = Server::start(script());
    let (env, state) = world(&s, "ok", json!({}));
    // Offered to every call by config; an `ask` of `ai mcp` is such a call.
    let mut config = env.config();
    config["tools"]["allow"] = json!(["disk"]);
    env.write_config(&config.to_string());
    let mut proc = env
        .command(&["mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = proc.stdin.take().unwrap();
    let mut output = BufReader::new(proc.stdout.take().unwrap());
    for m in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ask", "arguments": {"model": "openai:gpt-test", "prompt": "free space?"}}}),
    ] {
        writeln!(input, "{m}").unwrap();
    }
    input.flush().unwrap();
    let answer = loop {
        let mut line = String::new();
        assert!(output.read_line(&mut line).unwrap() > 0, "ai mcp ended");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    drop(input);
    proc.wait_status();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(!state.join("args").exists(), "it ran without a yes");
    let r = the_result(&env);
    assert_eq!(r["error"], true);
    assert_eq!(
        r["content"],
        "not confirmed: ai asks before it runs the command tool disk, and ai mcp has nobody to ask; it was not run (the user can allow it with --yolo)"
    );
}
