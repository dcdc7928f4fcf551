use super::*;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/cli-streams/{name}.stdout",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Feed `input` in small pieces; what reached the sink, and the result.
fn decode(format: Format, input: &str) -> (String, Decoded) {
    let mut d = Decoder::new(format).expect("a structured format");
    let mut streamed = String::new();
    let mut lines = Lines::new(MAX_LINE);
    for piece in input.as_bytes().chunks(7) {
        lines
            .push(piece, &mut |l| {
                d.line(l, &mut |t| {
                    streamed.push_str(t);
                    Ok(())
                })
            })
            .expect("line fits")
            .expect("sink ok");
    }
    let rest = lines.rest();
    if !rest.is_empty() {
        d.line(&rest, &mut |t| {
            streamed.push_str(t);
            Ok(())
        })
        .expect("sink ok");
    }
    let (done, r) = d.finish(&mut |t| {
        streamed.push_str(t);
        Ok(())
    });
    r.expect("sink ok");
    (streamed, done)
}

#[test]
fn claude_ok_streams_deltas_and_keeps_usage_and_cost() {
    let (out, d) = decode(Format::ClaudeStream, &fixture("claude-ok"));
    let want = "STUB[anthropic/claude-sonnet-5-5]: Explain in two sentences why the sky is blue.";
    assert_eq!(out, want);
    assert_eq!(d.text, want);
    assert!(d.finished && d.error.is_none() && d.plain.is_none());
    let u = d.usage.expect("usage");
    assert_eq!(
        (u.input, u.output, u.cost_usd),
        (Some(12474), Some(27), Some(0.025218))
    );
}

#[test]
fn claude_errors_are_its_own_message() {
    let (out, d) = decode(Format::ClaudeStream, &fixture("claude-e401"));
    assert_eq!(out, "");
    assert_eq!(
        d.error.as_deref(),
        Some("Failed to authenticate. API Error: 401 stub forced failure 401")
    );
    let (_, d) = decode(Format::ClaudeStream, &fixture("claude-e500"));
    assert!(
        d.error
            .expect("error")
            .starts_with("API Error: 500 stub forced failure 500")
    );
}

#[test]
fn codex_ok_ignores_the_warning_item() {
    let (out, d) = decode(Format::CodexJson, &fixture("codex-ok"));
    assert_eq!(
        out,
        "STUB[openai-responses/gpt-stub]: Explain in two sentences why the sky is blue."
    );
    assert!(d.finished && d.error.is_none());
    let u = d.usage.expect("usage");
    assert_eq!((u.input, u.output), (Some(10090), Some(19)));
}

#[test]
fn codex_turn_failed_is_the_error() {
    let (out, d) = decode(Format::CodexJson, &fixture("codex-e401"));
    assert_eq!(out, "");
    assert!(
        d.error
            .expect("error")
            .starts_with("unexpected status 401 Unauthorized")
    );
    let (_, d) = decode(Format::CodexJson, &fixture("codex-e500"));
    assert_eq!(
        d.error.as_deref(),
        Some("We’re currently experiencing high demand, which may cause temporary errors.")
    );
}

#[test]
fn gemini_ok_and_error() {
    let (out, d) = decode(Format::GeminiStream, &fixture("gemini-ok"));
    assert_eq!(
        out,
        "STUB[gemini/gemini-2.5-flash]: Explain in two sentences why the sky is blue."
    );
    let u = d.usage.expect("usage");
    assert_eq!((u.input, u.output), (Some(9811), Some(19)));
    let (out, d) = decode(Format::GeminiStream, &fixture("gemini-e401"));
    assert_eq!(out, "");
    assert!(d.error.expect("error").contains("stub forced failure 401"));
    // Retried until killed: no final event.
    let (_, d) = decode(Format::GeminiStream, &fixture("gemini-e500"));
    assert!(!d.finished && d.error.is_none());
}

#[test]
fn qwen_ok_and_an_error_streamed_as_text_is_not_the_reply() {
    let (out, d) = decode(Format::QwenStream, &fixture("qwen-ok"));
    assert_eq!(
        out,
        "STUB[openai-chat/qwen-stub]: Explain in two sentences why the sky is blue."
    );
    let u = d.usage.expect("usage");
    assert_eq!((u.input, u.output), (Some(14260), Some(18)));
    let (out, d) = decode(Format::QwenStream, &fixture("qwen-e401"));
    assert_eq!(out, "");
    assert_eq!(d.text, "");
    assert_eq!(
        d.error.as_deref(),
        Some("[API Error: 401 stub forced failure 401]")
    );
}

#[test]
fn qwen_text_that_only_looks_like_an_error_at_first_is_released() {
    let s = |t: &str| {
        format!(
            "{{\"type\":\"stream_event\",\"event\":{{\"type\":\"content_block_delta\",\"delta\":{{\"type\":\"text_delta\",\"text\":\"{t}\"}}}}}}\n"
        )
    };
    let start = "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_start\",\"content_block\":{\"type\":\"text\"}}}\n";
    let input = format!("{start}{}{}", s("[AP"), s("I docs]"));
    let (out, d) = decode(Format::QwenStream, &input);
    assert_eq!(out, "[API docs]");
    assert!(!d.finished);
}

#[test]
fn unknown_events_and_fields_are_ignored() {
    let input = "{\"type\":\"brand_new\",\"x\":1}\n{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\",\"extra\":[1]}}}\n{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}}\n{\"type\":\"result\",\"is_error\":false,\"result\":\"hi\"}\n";
    let (out, d) = decode(Format::ClaudeStream, input);
    assert_eq!(out, "hi");
    assert!(d.finished);
}

#[test]
fn a_stream_cut_short_keeps_its_text_and_is_not_finished() {
    let full = fixture("claude-ok");
    let cut: Vec<&str> = full.lines().take(6).collect();
    let (out, d) = decode(Format::ClaudeStream, &cut.join("\n"));
    assert_eq!(
        out,
        "STUB[anthropic/claude-sonnet-5-5]: Explain in two sent"
    );
    assert!(!d.finished);
}

#[test]
fn claude_without_deltas_takes_the_result() {
    let (out, d) = decode(
        Format::ClaudeStream,
        "{\"type\":\"result\",\"is_error\":false,\"result\":\"whole\"}\n",
    );
    assert_eq!(out, "whole");
    assert!(d.finished);
}

#[test]
fn plain_text_is_held_not_streamed() {
    let (out, d) = decode(
        Format::ClaudeStream,
        "Not logged in · Please run /login\nmore\n",
    );
    assert_eq!(out, "");
    assert_eq!(
        d.plain.as_deref(),
        Some("Not logged in · Please run /login\nmore\n")
    );
}

#[test]
fn subagent_text_is_not_the_reply() {
    let input = "{\"type\":\"stream_event\",\"parent_tool_use_id\":\"t1\",\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"inner\"}}}\n{\"type\":\"result\",\"is_error\":false,\"result\":\"outer\"}\n";
    let (out, _) = decode(Format::ClaudeStream, input);
    assert_eq!(out, "outer");
}

#[test]
fn lines_are_bounded() {
    let mut lines = Lines::new(10);
    let mut got = Vec::new();
    let r = lines.push(b"0123456789\nab", &mut |l| {
        got.push(l.to_vec());
        Ok(())
    });
    assert!(matches!(r, Ok(Ok(()))));
    assert_eq!(got, vec![b"0123456789".to_vec()]);
    assert!(lines.push(b"cdefghijk", &mut |_| Ok(())).is_err());
}

#[test]
fn separate_blocks_of_text_are_separated_by_a_blank_line() {
    let start = "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_start\",\"content_block\":{\"type\":\"text\"}}}\n";
    let delta = |t: &str| {
        format!(
            "{{\"type\":\"stream_event\",\"event\":{{\"type\":\"content_block_delta\",\"delta\":{{\"type\":\"text_delta\",\"text\":\"{t}\"}}}}}}\n"
        )
    };
    let input = format!(
        "{start}{}{start}{}{{\"type\":\"result\",\"is_error\":false}}\n",
        delta("Let me look."),
        delta("Found it.")
    );
    let (out, _) = decode(Format::ClaudeStream, &input);
    assert_eq!(out, "Let me look.\n\nFound it.");
    let gem = |t: &str| {
        format!(
            "{{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"{t}\",\"delta\":true}}\n"
        )
    };
    let input = format!(
        "{}{}{{\"type\":\"tool_use\"}}\n{{\"type\":\"tool_result\"}}\n{}{{\"type\":\"result\",\"status\":\"success\"}}\n",
        gem("Let me "),
        gem("look."),
        gem("Found it.")
    );
    let (out, d) = decode(Format::GeminiStream, &input);
    assert_eq!(out, "Let me look.\n\nFound it.");
    assert!(d.finished && d.error.is_none());
}

#[test]
fn a_carriage_return_before_the_newline_is_dropped() {
    let (out, d) = decode(
        Format::CodexJson,
        "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"hi\"}}\r\n{\"type\":\"turn.completed\"}\r\n",
    );
    assert_eq!(out, "hi");
    assert!(d.finished);
}
