//! HTTP provider helpers: the fake key and the check that it leaks nowhere, pointing a world at
//! a [`Server`], and builders for the stream frames each protocol sends (SSE for OpenAI,
//! Anthropic and Gemini; NDJSON for Ollama).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::{Env, Server};

/// The fake key every HTTP test uses; it must never appear in output or in stored files (every
/// call checks, see `run.rs`).
pub const KEY: &str = "sk-test-SECRET-1234567890";

/// Point `provider` at `server`, with the test key, for every later call.
pub(super) fn point_at(env: &mut Env, provider: &str, server: &Server) {
    let url = server.url();
    match provider {
        "openai" => env
            .set("OPENAI_API_KEY", KEY)
            .set("OPENAI_BASE_URL", &format!("{url}/v1")),
        "openrouter" => env
            .set("OPENROUTER_API_KEY", KEY)
            .set("OPENROUTER_BASE_URL", &format!("{url}/api/v1")),
        "anthropic" => env
            .set("ANTHROPIC_API_KEY", KEY)
            .set("ANTHROPIC_BASE_URL", &url),
        "gemini-api" => env
            .set("GEMINI_API_KEY", KEY)
            .set("GEMINI_BASE_URL", &format!("{url}/v1beta")),
        // OLLAMA_HOST is often written without a scheme.
        "ollama-api" => env.set("OLLAMA_HOST", &server.host_port()),
        "azure" => env
            .set("AZURE_OPENAI_API_KEY", KEY)
            .set("AZURE_OPENAI_ENDPOINT", &url),
        "glm" => env
            .set("ZHIPU_API_KEY", KEY)
            .set("GLM_BASE_URL", &format!("{url}/api/paas/v4")),
        "bedrock" => env
            .set("AWS_BEARER_TOKEN_BEDROCK", KEY)
            .set("BEDROCK_BASE_URL", &url)
            .set("AWS_REGION", "us-east-1"),
        other => panic!("no test setup for provider {other}"),
    };
}

/// After every call: the test key is in neither output nor any file under `AI_CLI_HOME`.
pub(super) fn assert_no_leak(label: &str, out: &Output, home: &Path) {
    let leaked = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains(KEY);
    assert!(
        !leaked(&out.stdout) && !leaked(&out.stderr),
        "{label}: the key leaked into the output:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_key_in_files(home);
}

/// No file under `dir` holds the key, except `.env`, where a test may put it. Only regular
/// files are read: a test may plant a FIFO there, and opening it would block.
pub(super) fn assert_no_key_in_files(dir: &Path) {
    for path in files_under(dir) {
        if path.file_name().is_some_and(|n| n == ".env") {
            continue;
        }
        let bytes = fs::read(&path).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "the key leaked into {}",
            path.display()
        );
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.is_file() {
                out.push(p);
            }
        }
    }
    out
}

/// One SSE `data:` event (LF endings).
pub fn data(json: &str) -> String {
    format!("data: {json}\n\n")
}

/// One SSE event with a name.
pub fn event(name: &str, json: &str) -> String {
    format!("event: {name}\ndata: {json}\n\n")
}

/// An OpenAI chat.completion.chunk carrying `text`.
pub fn oa_text(text: &str) -> String {
    data(
        &serde_json::json!({
            "id": "c1", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}],
            "usage": null
        })
        .to_string(),
    )
}

/// The closing chunks of an OpenAI stream: finish_reason, usage, `[DONE]`.
pub fn oa_end(input: u64, output: u64) -> String {
    format!(
        "{}{}data: [DONE]\n\n",
        data(
            r#"{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#
        ),
        data(&format!(
            r#"{{"id":"c1","choices":[],"usage":{{"prompt_tokens":{input},"completion_tokens":{output},"total_tokens":{}}}}}"#,
            input + output
        ))
    )
}

/// A whole OpenAI stream answering `text`.
pub fn oa_stream(text: &str, input: u64, output: u64) -> String {
    format!("{}{}", oa_text(text), oa_end(input, output))
}

/// Anthropic events before the text.
pub fn an_start(input: u64) -> String {
    format!(
        "{}{}",
        event(
            "message_start",
            &format!(
                r#"{{"type":"message_start","message":{{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{{"input_tokens":{input},"output_tokens":1}}}}}}"#
            )
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
        )
    )
}

pub fn an_text(text: &str) -> String {
    event(
        "content_block_delta",
        &serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}})
            .to_string(),
    )
}

pub fn an_end(output: u64) -> String {
    format!(
        "{}{}{}",
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#
        ),
        event(
            "message_delta",
            &format!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{{"output_tokens":{output}}}}}"#
            )
        ),
        event("message_stop", r#"{"type":"message_stop"}"#)
    )
}

/// One Gemini SSE chunk; `finish` adds finishReason and usage.
pub fn gm_chunk(text: &str, finish: Option<(u64, u64)>) -> String {
    let mut v = serde_json::json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}]
    });
    if let Some((i, o)) = finish {
        v["candidates"][0]["finishReason"] = "STOP".into();
        v["usageMetadata"] = serde_json::json!({"promptTokenCount": i, "candidatesTokenCount": o, "totalTokenCount": i + o});
    }
    data(&v.to_string())
}

/// One Ollama NDJSON line carrying text.
pub fn ol_text(text: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":text},"done":false})
    )
}

pub fn ol_done(input: u64, output: u64) -> String {
    format!(
        "{}\n",
        serde_json::json!({"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":input,"eval_count":output})
    )
}

/// CRC-32 (IEEE), for building AWS event-stream frames.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// One AWS event-stream message with string headers: prelude, its CRC, headers, payload, CRC.
pub fn es_frame(headers: &[(&str, &str)], payload: &str) -> Vec<u8> {
    let mut h = Vec::new();
    for (k, v) in headers {
        h.push(k.len() as u8);
        h.extend_from_slice(k.as_bytes());
        h.push(7);
        h.extend_from_slice(&(v.len() as u16).to_be_bytes());
        h.extend_from_slice(v.as_bytes());
    }
    let total = (16 + h.len() + payload.len()) as u32;
    let mut out = total.to_be_bytes().to_vec();
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload.as_bytes());
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out
}

/// A Bedrock ConverseStream event.
pub fn br_event(kind: &str, json: &str) -> Vec<u8> {
    es_frame(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        json,
    )
}

/// A Bedrock ConverseStream exception (`throttlingException`, …).
pub fn br_exception(kind: &str, message: &str) -> Vec<u8> {
    es_frame(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        &serde_json::json!({ "message": message }).to_string(),
    )
}

/// A text delta.
pub fn br_text(text: &str) -> Vec<u8> {
    br_event(
        "contentBlockDelta",
        &serde_json::json!({"contentBlockIndex": 0, "delta": {"text": text}, "p": "abc"})
            .to_string(),
    )
}

/// `messageStop` then `metadata` with usage.
pub fn br_end(input: u64, output: u64) -> Vec<Vec<u8>> {
    vec![
        br_event("contentBlockStop", r#"{"contentBlockIndex":0}"#),
        br_event("messageStop", r#"{"stopReason":"end_turn"}"#),
        br_event(
            "metadata",
            &serde_json::json!({"usage": {"inputTokens": input, "outputTokens": output, "totalTokens": input + output}, "metrics": {"latencyMs": 12}}).to_string(),
        ),
    ]
}

/// A whole ConverseStream reply.
pub fn br_stream(text: &str, input: u64, output: u64) -> Vec<Vec<u8>> {
    let mut v = vec![
        br_event("messageStart", r#"{"role":"assistant"}"#),
        br_text(text),
    ];
    v.extend(br_end(input, output));
    v
}

/// Standard base64 with padding (RFC 4648), as attachments, data URLs and OSC 52 carry bytes.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(ABC[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
