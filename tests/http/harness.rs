//! A hermetic environment for HTTP provider tests: temporary `AI_CLI_HOME` and `HOME`, an
//! emptied environment (no real keys, base URLs or proxies reach the child), a fake key, and
//! checks that the key never shows up in the output or in any file the call wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use tempfile::TempDir;

/// The binary under test.
pub const AI: &str = env!("CARGO_BIN_EXE_ai");

/// The fake key every test uses; it must never appear in output or in stored files.
pub const KEY: &str = "sk-test-SECRET-1234567890";

/// What the child must never inherit, even though the environment is cleared anyway: listed
/// so the intent is plain.
pub const SCRUBBED: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "OPENROUTER_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "OLLAMA_HOST",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "ZHIPU_API_KEY",
    "GLM_BASE_URL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

pub struct Env {
    _tmp: TempDir,
    /// `AI_CLI_HOME`.
    pub home: PathBuf,
    /// `HOME`, and the working directory of every call.
    pub user_home: PathBuf,
    vars: Vec<(String, String)>,
}

/// The result of one call.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// Lines of stderr that start with `error:`.
    pub fn error_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect()
    }

    /// The one `error:` line; fails when there are none or several.
    pub fn error(&self) -> &str {
        let e = self.error_lines();
        assert_eq!(e.len(), 1, "expected one error line: {self:#?}");
        e[0]
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {self:#?}"))
    }

    #[track_caller]
    pub fn ok(&self) -> &Out {
        assert_eq!(self.code, 0, "call failed: {self:#?}");
        self
    }
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::Builder::new()
            .prefix("ai-http-test")
            .tempdir()
            .expect("temp dir");
        let home = tmp.path().join("ai-home");
        let user_home = tmp.path().join("user");
        std::fs::create_dir_all(&home).expect("mkdir home");
        std::fs::create_dir_all(&user_home).expect("mkdir user home");
        Env {
            _tmp: tmp,
            home,
            user_home,
            vars: Vec::new(),
        }
    }

    /// Set a variable for every later call.
    pub fn set(&mut self, k: &str, v: &str) -> &mut Env {
        self.vars.retain(|(n, _)| n != k);
        self.vars.push((k.to_owned(), v.to_owned()));
        self
    }

    pub fn write_config(&self, json: &str) {
        let v: Value = serde_json::from_str(json).expect("test config is JSON");
        std::fs::write(self.home.join("config.json"), v.to_string()).expect("write config");
    }

    pub fn config(&self) -> Value {
        let text = std::fs::read_to_string(self.home.join("config.json")).expect("config.json");
        serde_json::from_str(&text).expect("config.json is JSON")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(AI);
        c.args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.user_home)
            .env("AI_CLI_HOME", &self.home)
            .env("NO_COLOR", "1")
            .current_dir(&self.user_home)
            .stdin(Stdio::null());
        for v in SCRUBBED {
            if !self.vars.iter().any(|(k, _)| k == v) {
                c.env_remove(v);
            }
        }
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// Run `ai ARGS`, then check the key leaked nowhere.
    pub fn run(&self, args: &[&str]) -> Out {
        let out = self.command(args).output().expect("run ai");
        let out = Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        // Shown only when the test fails: every call it made, with its output.
        eprintln!("$ ai {args:?}\n{out:#?}");
        assert!(
            !out.stdout.contains(KEY) && !out.stderr.contains(KEY),
            "the key leaked into the output: {out:#?}"
        );
        self.assert_no_key_in_files();
        out
    }

    /// No file under `AI_CLI_HOME` holds the key, except `.env`, where the test put it.
    pub fn assert_no_key_in_files(&self) {
        for path in files_under(&self.home) {
            if path.file_name().is_some_and(|n| n == ".env") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(KEY),
                "the key leaked into {}",
                path.display()
            );
        }
    }

    /// Every chat file, as its records.
    pub fn chats(&self) -> Vec<Vec<Value>> {
        let dir = self.home.join("chats");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
        files.sort();
        files.iter().map(|p| records(p)).collect()
    }

    /// The records of the only chat.
    pub fn chat(&self) -> Vec<Value> {
        let mut all = self.chats();
        assert_eq!(all.len(), 1, "expected one chat: {all:#?}");
        all.remove(0)
    }

    /// The message records (user and assistant) of the only chat.
    pub fn messages(&self) -> Vec<Value> {
        self.chat()
            .into_iter()
            .filter(|r| r["type"] == "message")
            .collect()
    }
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read chat")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("chat line is JSON"))
        .collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
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

impl Env {
    /// An environment whose `provider` points at `server` with the test key.
    pub fn for_provider(provider: &str, server: &super::server::Server) -> Env {
        let mut env = Env::new();
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
            other => panic!("no test setup for provider {other}"),
        };
        env
    }
}

impl Out {
    /// The chat ID from the `[chat: ID]` notice.
    pub fn chat_id(&self) -> String {
        let at = self
            .stderr
            .find("[chat: ")
            .unwrap_or_else(|| panic!("no [chat: ID] notice: {self:#?}"));
        let rest = &self.stderr[at + 7..];
        rest[..rest.find(']').expect("closing ]")].to_owned()
    }
}
