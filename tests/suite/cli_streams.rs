//! The agent CLIs in their JSON stream modes: fakes replay what the real CLIs printed
//! (`tests/fixtures/cli-streams/`, see its README), plus errors, streams cut short, unknown
//! events, long lines, plain text where JSON was asked, and a CLI too old for the flags.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Env, chunks, drain};

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/cli-streams/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The fake `cli` prints what the real one printed for `case`, and exits as it did.
fn replay(env: &Env, cli: &str, case: &str) {
    let base = fixture(&format!("{cli}-{case}"));
    let code = std::fs::read_to_string(format!("{base}.exit")).unwrap();
    env.fake(
        cli,
        &format!(
            "\"$CAT\" > /dev/null\n\"$CAT\" '{base}.stdout'\n\"$CAT\" '{base}.stderr' >&2\nexit {}",
            code.trim()
        ),
    );
}

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

fn last_reply(env: &Env, id: &str) -> Value {
    env.messages(id)
        .into_iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .expect("an assistant message")
}

const CASES: [(&str, &str, &str, u64, u64); 4] = [
    (
        "sonnet",
        "claude",
        "STUB[anthropic/claude-sonnet-5-5]: Explain in two sentences why the sky is blue.",
        12474,
        27,
    ),
    (
        "codex",
        "codex",
        "STUB[openai-responses/gpt-stub]: Explain in two sentences why the sky is blue.",
        10090,
        19,
    ),
    (
        "gemini",
        "gemini",
        "STUB[gemini/gemini-2.5-flash]: Explain in two sentences why the sky is blue.",
        9811,
        19,
    ),
    (
        "qwen",
        "qwen",
        "STUB[openai-chat/qwen-stub]: Explain in two sentences why the sky is blue.",
        14260,
        18,
    ),
];

#[test]
fn recorded_answers_are_the_reply_with_their_usage() {
    for (alias, cli, text, input, output) in CASES {
        let env = Env::empty();
        replay(&env, cli, "ok");
        let out = env.run(&[alias, "why is the sky blue"]).success();
        assert_eq!(out.stdout.trim_end(), text, "{cli}");
        assert!(!out.stderr.contains("warning"), "{cli}: {}", out.stderr);
        let reply = last_reply(&env, &out.chat_id());
        assert_eq!(reply["content"], text, "{cli}");
        assert_eq!(reply["usage"]["input"], input, "{cli}");
        assert_eq!(reply["usage"]["output"], output, "{cli}");
        if cli == "claude" {
            assert_eq!(reply["usage"]["cost_usd"], 0.025218);
        } else {
            assert!(reply["usage"].get("cost_usd").is_none(), "{cli}: {reply}");
        }
    }
}

#[test]
fn usage_and_cost_in_json_output_and_chat_stats() {
    let env = Env::empty();
    replay(&env, "claude", "ok");
    let out = env.run(&["--json", "sonnet", "why"]).success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["reply"],
        "STUB[anthropic/claude-sonnet-5-5]: Explain in two sentences why the sky is blue."
    );
    assert_eq!(v["usage"]["input"], 12474);
    assert_eq!(v["usage"]["output"], 27);
    assert_eq!(v["usage"]["cost_usd"], 0.025218);
    let id = out.chat_id();
    // A second turn, from codex (tokens, no cost).
    replay(&env, "codex", "ok");
    env.run(&["codex", "--chat", &id, "again"]).success();
    let stats = env
        .run(&["chat", "show", &id, "--stats", "--json"])
        .success();
    let st: Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(st["usage_input"], 12474 + 10090);
    assert_eq!(st["usage_output"], 27 + 19);
    assert_eq!(st["cost_usd"], 0.025218);
    let text = env.run(&["chat", "show", &id, "--stats"]).success().stdout;
    assert!(
        text.contains("provider-reported usage: 22564 in, 46 out, $0.0252 reported cost"),
        "{text}"
    );
}

#[test]
fn recorded_api_errors_are_the_clis_own_message() {
    let cases = [
        (
            "sonnet",
            "claude",
            "error: claude failed: Failed to authenticate. API Error: 401 stub forced failure 401",
        ),
        (
            "codex",
            "codex",
            "error: codex failed: unexpected status 401 Unauthorized: stub forced failure 401, url: http://127.0.0.1:37067/v1/responses",
        ),
        (
            "gemini",
            "gemini",
            "error: gemini failed: [API Error: {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"stub forced failure 401\",\"code\":401,\"status\":\"UNAUTHENTICATED\"}}]",
        ),
        (
            "qwen",
            "qwen",
            "error: qwen failed: [API Error: 401 stub forced failure 401]",
        ),
    ];
    for (alias, cli, want) in cases {
        let env = Env::empty();
        replay(&env, cli, "e401");
        let out = env.run(&[alias, "why"]).code(1);
        assert_eq!(out.stdout, "", "{cli}: the error is not the reply");
        assert_eq!(out.error(), want, "{cli}");
        assert!(out.stderr.contains("hint: "), "{cli}: {}", out.stderr);
    }
    // claude's 500: its result message, not its subtype ("success").
    let env = Env::empty();
    replay(&env, "claude", "e500");
    let out = env.run(&["sonnet", "why"]).code(1);
    assert!(
        out.error()
            .starts_with("error: claude failed: API Error: 500 stub forced failure 500"),
        "{}",
        out.stderr
    );
    // codex's 500: turn.failed's message; the warning item before it is not the error.
    let env = Env::empty();
    replay(&env, "codex", "e500");
    let out = env.run(&["codex", "why"]).code(1);
    assert_eq!(
        out.error(),
        "error: codex failed: We’re currently experiencing high demand, which may cause temporary errors."
    );
}

#[test]
fn an_error_event_after_some_text_keeps_the_text_and_fails() {
    let env = Env::empty();
    prints(
        &env,
        "codex",
        concat!(
            "{\"type\":\"turn.started\"}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"i1\",\"type\":\"agent_message\",\"text\":\"half an answer\"}}\n",
            "{\"type\":\"error\",\"message\":\"stream disconnected before completion\"}\n",
        ),
        1,
    );
    let out = env.run(&["codex", "why"]).code(1);
    assert_eq!(out.stdout.trim_end(), "half an answer");
    assert_eq!(
        out.error(),
        "error: codex failed: stream disconnected before completion"
    );
}

#[test]
fn a_stream_cut_short_is_an_error_that_keeps_the_partial_text() {
    let env = Env::empty();
    let full = std::fs::read_to_string(fixture("claude-ok.stdout")).unwrap();
    let cut: String = full.lines().take(6).map(|l| format!("{l}\n")).collect();
    prints(&env, "claude", &cut, 0);
    let out = env.run(&["sonnet", "why"]).code(1);
    assert_eq!(
        out.stdout.trim_end(),
        "STUB[anthropic/claude-sonnet-5-5]: Explain in two sent"
    );
    assert!(
        out.error()
            .contains("claude's output stopped before its final event"),
        "{}",
        out.stderr
    );
    let id = out.chat_id();
    let reply = last_reply(&env, &id);
    assert_eq!(
        reply["content"],
        "STUB[anthropic/claude-sonnet-5-5]: Explain in two sent"
    );
}

#[test]
fn unknown_event_types_are_ignored() {
    let env = Env::empty();
    let full = std::fs::read_to_string(fixture("gemini-ok.stdout")).unwrap();
    let mut lines: Vec<String> = full.lines().map(str::to_owned).collect();
    lines.insert(
        2,
        r#"{"type":"thought","content":"hmm","x":{"y":[1,2]}}"#.into(),
    );
    lines.insert(
        4,
        r#"{"type":"tool_use","tool_name":"ls","parameters":{}}"#.into(),
    );
    lines.insert(5, r#"{"type":"future_event_kind"}"#.into());
    prints(&env, "gemini", &(lines.join("\n") + "\n"), 0);
    let out = env.run(&["gemini", "why"]).success();
    assert!(
        out.stdout.starts_with("STUB[gemini/gemini-2.5-fla"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("why the sky is blue."),
        "{}",
        out.stdout
    );
}

#[test]
fn a_very_long_line_is_read_whole() {
    let env = Env::empty();
    let long = "x".repeat(3 << 20);
    let stream = format!(
        "{{\"type\":\"stream_event\",\"event\":{{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{long}\"}}}}}}\n{{\"type\":\"result\",\"is_error\":false,\"result\":\"{long}\",\"usage\":{{\"input_tokens\":1,\"output_tokens\":2}}}}\n"
    );
    prints(&env, "claude", &stream, 0);
    let out = env.run(&["sonnet", "long"]).success();
    assert_eq!(out.stdout.trim_end().len(), long.len());
    let reply = last_reply(&env, &out.chat_id());
    assert_eq!(reply["content"].as_str().unwrap().len(), long.len());
}

#[test]
fn plain_text_where_json_was_asked_is_the_reply() {
    // gemini printing plain text and exiting 0: that text is the answer.
    let env = Env::empty();
    prints(&env, "gemini", "  \nplain answer\nsecond line\n", 0);
    let out = env.run(&["gemini", "why"]).success();
    assert_eq!(out.stdout.trim(), "plain answer\nsecond line");
    // claude printing plain text and failing: its words are the error, not the reply.
    let env = Env::empty();
    prints(&env, "claude", "Not logged in · Please run /login\n", 1);
    let out = env.run(&["sonnet", "why"]).code(1);
    assert_eq!(out.stdout, "");
    assert!(
        out.error()
            .contains("claude failed (exit code 1): Not logged in · Please run /login"),
        "{}",
        out.stderr
    );
}

/// claude, asked for JSON, printing plain lines among its events and failing: those lines are
/// what it said, and reach the user in the error (they used to be dropped as stray warnings).
#[test]
fn plain_lines_inside_a_failing_json_stream_reach_the_error() {
    let init = std::fs::read_to_string(fixture("claude-e401.stdout")).unwrap();
    let init = init.lines().next().unwrap().to_owned();
    // Exit 1 with no final event; and exit 0 with no final event.
    for code in [1, 0] {
        let env = Env::empty();
        let stream =
            format!("{init}\nAPI Error: 401 invalid x-api-key\nPlease run /login\n{init}\n");
        prints(&env, "claude", &stream, code);
        let out = env.ai().args(["sonnet", "why"]).run();
        assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
        assert_eq!(out.stdout, "");
        assert!(
            out.stderr.contains(
                "claude also printed:\n  API Error: 401 invalid x-api-key\n  Please run /login"
            ),
            "exit {code}: {}",
            out.stderr
        );
    }
    // With its own error event too (a `result` with is_error), the lines come with it.
    let env = Env::empty();
    let result =
        r#"{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key"}"#;
    prints(
        &env,
        "claude",
        &format!("{init}\nAuth failed: token expired\n{result}\n"),
        1,
    );
    let out = env.ai().args(["sonnet", "why"]).run();
    assert!(out.stderr.contains("Invalid API key"), "{}", out.stderr);
    assert!(
        out.stderr.contains("Auth failed: token expired"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_cli_too_old_for_the_flags_is_run_again_in_plain_text() {
    let env = Env::empty();
    env.fake(
        "claude",
        r#""$CAT" > /dev/null
echo "$*" >> "$FAKE_STATE/claude.calls"
case " $* " in
  *" --include-partial-messages "*) echo "error: unknown option '--include-partial-messages'" >&2; exit 1 ;;
esac
echo 'old claude answer'"#,
    );
    let out = env.run(&["sonnet", "why"]).success();
    assert_eq!(out.stdout, "old claude answer\n");
    let notices: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("does not accept"))
        .collect();
    assert_eq!(notices.len(), 1, "{}", out.stderr);
    assert!(
        notices[0].contains("claude does not accept `--output-format stream-json --verbose --include-partial-messages`")
            && notices[0].contains("Claude Code 2.1.330"),
        "{}",
        notices[0]
    );
    let calls = std::fs::read_to_string(env.state.join("claude.calls")).unwrap();
    assert_eq!(
        calls,
        "--print --model sonnet --output-format stream-json --verbose --include-partial-messages\n--print --model sonnet\n"
    );

    // codex (clap): exit 2, "unexpected argument".
    let env = Env::empty();
    env.fake(
        "codex",
        r#""$CAT" > /dev/null
case " $* " in
  *" --json "*) printf "error: unexpected argument '--json' found\n\nUsage: codex exec [OPTIONS] [PROMPT]\n" >&2; exit 2 ;;
esac
echo 'old codex answer'"#,
    );
    let out = env.run(&["codex", "why"]).success();
    assert_eq!(out.stdout, "old codex answer\n");
    assert!(
        out.stderr.contains("codex does not accept `--json`"),
        "{}",
        out.stderr
    );

    // gemini (yargs) that knows -o but not stream-json.
    let env = Env::empty();
    env.fake(
        "gemini",
        r#""$CAT" > /dev/null
case " $* " in
  *" stream-json "*) printf 'Invalid values:\n  Argument: output-format, Given: "stream-json", Choices: "text", "json"\n' >&2; exit 1 ;;
esac
echo 'old gemini answer'"#,
    );
    let out = env.run(&["gemini", "why"]).success();
    assert_eq!(out.stdout, "old gemini answer\n");
    assert!(
        out.stderr
            .contains("gemini does not accept `-o stream-json`"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_ordinary_failure_is_not_taken_for_an_old_cli() {
    let env = Env::empty();
    env.fake(
        "gemini",
        r#""$CAT" > /dev/null
echo "$*" >> "$FAKE_STATE/gemini.calls"
echo 'quota exceeded' >&2
exit 1"#,
    );
    let out = env.run(&["gemini", "why"]).code(1);
    assert!(out.error().contains("quota exceeded"), "{}", out.stderr);
    let calls = std::fs::read_to_string(env.state.join("gemini.calls")).unwrap();
    assert_eq!(calls.lines().count(), 1, "{calls}");
}

#[test]
fn a_custom_backend_declares_its_output_format() {
    let env = Env::empty();
    env.write_config(
        r#"{"backends": {"mycodex": {"program": "mycodex", "args": ["exec", "--json"], "output": "codex-json"}}}"#,
    );
    replay(&env, "codex", "ok");
    std::fs::rename(env.bin.join("codex"), env.bin.join("mycodex")).unwrap();
    let out = env.run(&["mycodex:any", "why"]).success();
    assert_eq!(
        out.stdout.trim_end(),
        "STUB[openai-responses/gpt-stub]: Explain in two sentences why the sky is blue."
    );
    assert_eq!(last_reply(&env, &out.chat_id())["usage"]["input"], 10090);

    env.write_config(r#"{"backends": {"bad": {"program": "x", "output": "xml"}}}"#);
    let out = env.run(&["bad:m", "hi"]);
    assert_ne!(out.code, Some(0));
    assert!(out.stderr.contains("output"), "{}", out.stderr);
}

/// Text deltas reach stdout while the CLI still runs.
#[test]
fn deltas_arrive_before_the_cli_exits() {
    let delta = |t: &str| {
        format!(
            r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{t}"}}}}}}"#
        )
    };
    let gem = |t: &str| {
        format!(r#"{{"type":"message","role":"assistant","content":"{t}","delta":true}}"#)
    };
    let cases = [
        (
            "sonnet",
            "claude",
            delta("FIRST "),
            delta("REST"),
            r#"{"type":"result","is_error":false,"result":"FIRST REST"}"#.to_owned(),
        ),
        (
            "qwen",
            "qwen",
            delta("FIRST "),
            delta("REST"),
            r#"{"type":"result","is_error":false,"result":"FIRST REST"}"#.to_owned(),
        ),
        (
            "gemini",
            "gemini",
            gem("FIRST "),
            gem("REST"),
            r#"{"type":"result","status":"success","stats":{}}"#.to_owned(),
        ),
    ];
    for (alias, cli, first, rest, end) in cases {
        let env = Env::empty();
        let marker = env.path("got-first");
        env.fake(
            cli,
            &format!(
                r#""$CAT" > /dev/null
printf '%s\n' '{first}'
i=0
while [ ! -e '{m}' ] && [ $i -lt 1200 ]; do "$SLEEP" 0.05; i=$((i+1)); done
printf '%s\n%s\n' '{rest}' '{end}'"#,
                m = marker.display()
            ),
        );
        let mut child = env
            .ai()
            .args([alias, "slowly"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = drain(child.stderr.take().unwrap());
        let (rx, reader) = chunks(child.stdout.take().unwrap());
        let mut seen = Vec::new();
        while !seen.starts_with(b"FIRST ") {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(chunk) => seen.extend(chunk),
                Err(_) => {
                    child.kill();
                    panic!("{cli}: the first delta did not reach stdout while the CLI ran");
                }
            }
        }
        std::fs::write(&marker, "").unwrap();
        let status = child.wait_status();
        reader.join().unwrap();
        seen.extend(rx.try_iter().flatten());
        let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
        assert!(status.success(), "{cli}: {err}");
        assert_eq!(
            String::from_utf8_lossy(&seen).trim_end(),
            "FIRST REST",
            "{cli}"
        );
    }
}

#[test]
fn a_line_past_the_limit_stops_the_cli() {
    let env = Env::empty();
    std::fs::write(env.path("mib"), vec![b'q'; 1024 * 1024]).unwrap();
    env.fake(
        "codex",
        &format!(
            r#""$CAT" > /dev/null
printf '{{"type":"item.completed","item":{{"type":"agent_message","text":"'
i=0
while [ $i -lt 11 ]; do "$CAT" '{big}'; i=$((i+1)); done
: > '{done}'"#,
            big = env.path("mib").display(),
            done = env.path("finished").display()
        ),
    );
    let out = env.run(&["codex", "hi"]).code(1);
    assert!(
        out.error()
            .contains("a line of codex's output is longer than 9 MiB"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    assert!(
        !env.path("finished").exists(),
        "the backend was not stopped"
    );
}

#[test]
fn a_streamed_reply_past_8_mib_stops_the_cli() {
    let env = Env::empty();
    let line = format!(
        "{{\"type\":\"stream_event\",\"event\":{{\"type\":\"content_block_delta\",\"delta\":{{\"type\":\"text_delta\",\"text\":\"{}\"}}}}}}\n",
        "q".repeat(1024 * 1024)
    );
    std::fs::write(env.path("delta"), line).unwrap();
    env.fake(
        "claude",
        &format!(
            r#""$CAT" > /dev/null
i=0
while [ $i -lt 10 ]; do "$CAT" '{delta}'; i=$((i+1)); done
: > '{done}'"#,
            delta = env.path("delta").display(),
            done = env.path("finished").display()
        ),
    );
    let out = env.run(&["sonnet", "hi"]).code(1);
    assert!(out.error().contains("longer than 8 MiB"), "{}", out.stderr);
    assert!(out.stdout.len() <= 9 * 1024 * 1024, "{}", out.stdout.len());
    assert!(
        !env.path("finished").exists(),
        "the backend was not stopped"
    );
}

#[test]
fn ctrl_c_keeps_the_streamed_text() {
    let env = Env::echo();
    env.fake(
        "claude",
        r#""$CAT" > /dev/null
printf '%s\n' '{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"partial answer"}}}'
echo $$ > "$FAKE_STATE/claude.pid"
i=0
while [ ! -e "$FAKE_STATE/release" ] && [ $i -lt 1200 ]; do "$SLEEP" 0.05; i=$((i+1)); done
printf '%s\n' '{"type":"result","is_error":false,"result":"partial answer"}'"#,
    );
    let id = env.start("one");
    let p = env.spawn(&["chat", &id, "sonnet", "tell me everything"]);
    env.wait_started("claude");
    crate::support::signal(p.pid(), libc::SIGINT);
    let out = p.wait().code(130);
    assert_eq!(out.stdout.trim_end(), "partial answer");
    let msgs = env.messages(&id);
    let reply = msgs.last().unwrap();
    assert_eq!(reply["content"], "partial answer");
    assert_eq!(reply["interrupted"], true);
}
