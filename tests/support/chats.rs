//! Chat files: read them back as JSON records (one reader, strict: every line a JSON object
//! with a `type`, the file ending in a newline), write them directly, and build the records and
//! replies the echo model produces. Records stay `serde_json::Value` on purpose: a test must see
//! every field `ai` wrote, including ones a typed struct would drop.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Env, wait_for};

impl Env {
    /// `ai chat new MODEL`: the new chat's ID.
    pub fn new_chat(&self, model: &str) -> String {
        let out = self.run(&["chat", "new", model]).success();
        let id = out.stdout.trim().to_owned();
        assert_eq!(out.stdout, format!("{id}\n"), "chat new prints only the ID");
        id
    }

    /// A plain prompt to the default model: the ID of the chat it started.
    pub fn start(&self, prompt: &str) -> String {
        self.run(&[prompt]).success().chat_id()
    }

    /// Let slow fakes finish.
    pub fn release(&self) {
        fs::write(self.state.join("release"), "").expect("release fakes");
    }

    /// Wait until the slow fake `name` has started and written its pid; remove the pid file
    /// (so the next start can be awaited) and return the pid.
    pub fn wait_started(&self, name: &str) -> i32 {
        let path = self.state.join(format!("{name}.pid"));
        let mut pid = 0;
        wait_for(
            &format!("fake {name} to start"),
            || match fs::read_to_string(&path) {
                Ok(s) if s.ends_with('\n') => match s.trim().parse::<i32>() {
                    Ok(p) => {
                        pid = p;
                        true
                    }
                    Err(_) => false,
                },
                _ => false,
            },
        );
        fs::remove_file(&path).expect("remove pid file");
        pid
    }

    pub fn chats_dir(&self) -> PathBuf {
        self.home.join("chats")
    }

    pub fn chat_path(&self, id: &str) -> PathBuf {
        self.chats_dir().join(format!("{id}.jsonl"))
    }

    /// Every file name in the chats folder, sorted (empty when the folder does not exist).
    pub fn chat_files(&self) -> Vec<String> {
        let Ok(dir) = fs::read_dir(self.chats_dir()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = dir
            .map(|e| {
                e.expect("dir entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    /// The IDs of the `.jsonl` chats, sorted.
    pub fn chat_ids(&self) -> Vec<String> {
        self.chat_files()
            .iter()
            .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
            .collect()
    }

    pub fn bytes(&self, id: &str) -> Vec<u8> {
        fs::read(self.chat_path(id)).expect("read chat file")
    }

    /// Every record of a chat file. The file must end with a newline and every line must be a
    /// JSON object with a `type`.
    pub fn records(&self, id: &str) -> Vec<Value> {
        parse_records(&self.chat_path(id))
    }

    pub fn header(&self, id: &str) -> Value {
        let recs = self.records(id);
        assert_eq!(recs[0]["type"], "chat", "line 1 is the header: {recs:?}");
        recs[0].clone()
    }

    /// The message records of a chat, in file order.
    pub fn messages(&self, id: &str) -> Vec<Value> {
        self.records(id)
            .into_iter()
            .filter(|r| r["type"] == "message")
            .collect()
    }

    /// Write a chat file directly.
    pub fn write_chat(&self, id: &str, records: &[Value]) {
        fs::create_dir_all(self.chats_dir()).expect("chats dir");
        let mut text = String::new();
        for r in records {
            text.push_str(&serde_json::to_string(r).expect("encode record"));
            text.push('\n');
        }
        fs::write(self.chat_path(id), text).expect("write chat file");
    }

    pub fn append_raw(&self, id: &str, bytes: &[u8]) {
        let mut f = OpenOptions::new()
            .append(true)
            .open(self.chat_path(id))
            .expect("open chat file");
        f.write_all(bytes).expect("append");
    }

    /// Every chat file, as its records, in file-name order.
    pub fn chats(&self) -> Vec<Vec<Value>> {
        self.chat_ids().iter().map(|id| self.records(id)).collect()
    }

    /// The records of the only chat; fails when there is not exactly one.
    pub fn only_chat(&self) -> Vec<Value> {
        let mut all = self.chats();
        assert_eq!(all.len(), 1, "expected one chat: {all:#?}");
        all.remove(0)
    }

    /// The message records (user and assistant) of the only chat.
    pub fn only_messages(&self) -> Vec<Value> {
        self.only_chat()
            .into_iter()
            .filter(|r| r["type"] == "message")
            .collect()
    }
}

/// Parse a chat file line by line (see [`Env::records`]).
pub fn parse_records(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).expect("read chat file");
    assert!(
        text.ends_with('\n'),
        "{} does not end with a newline:\n{text}",
        path.display()
    );
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{} line {}: {e}: {line}", path.display(), i + 1));
            assert!(v["type"].is_string(), "line {} has no type: {line}", i + 1);
            v
        })
        .collect()
}

/// A header record as `ai` writes it.
pub fn header(id: &str, extra: Value) -> Value {
    let mut h = json!({"type": "chat", "v": 1, "id": id, "created": "2026-01-01T10:00:00.000Z"});
    if let (Some(h), Some(extra)) = (h.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            h.insert(k.clone(), v.clone());
        }
    }
    h
}

/// A message record from the echo model.
pub fn message(role: &str, content: &str, turn: u64) -> Value {
    json!({
        "type": "message", "role": role, "content": content, "ts": "2026-01-01T10:00:00.000Z",
        "alias": "echo", "provider": "echo", "model": "echo", "turn": turn
    })
}

/// What the echo backend replies to `prompt` with `earlier` messages of history before it.
pub fn echo_reply(prompt: &str, earlier: usize) -> String {
    let chars = prompt.chars().count();
    let lines = prompt.lines().count();
    let mut head = format!(
        "echo: model echo, {chars} characters, {lines} line{}",
        if lines == 1 { "" } else { "s" }
    );
    if earlier > 0 {
        head.push_str(&format!(
            ", {earlier} earlier message{} ({} from you)",
            if earlier == 1 { "" } else { "s" },
            earlier / 2
        ));
    }
    format!("{head}\n{prompt}\n")
}

/// Does `s` have the shape of a generated chat ID (3+ of A–Z0–9, at least one digit)?
pub fn generated_id(s: &str) -> bool {
    s.len() >= 3
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// The messages of a CLI transcript (`[[role TAG]]` marker lines), as (role, content).
pub fn transcript(text: &str) -> Vec<(String, String)> {
    let marker = |line: &str| -> Option<(String, String)> {
        let inner = line.strip_prefix("[[")?.strip_suffix("]]")?;
        let (role, tag) = inner.split_once(' ')?;
        let ok = matches!(role, "system" | "user" | "assistant")
            && tag.len() == 8
            && tag.bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| (role.to_owned(), tag.to_owned()))
    };
    let tag = text
        .lines()
        .find_map(marker)
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("no transcript markers in:\n{text}"));
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match marker(line) {
            Some((role, t)) if t == tag => out.push((role, String::new())),
            _ => {
                if let Some((_, content)) = out.last_mut() {
                    content.push_str(line);
                    content.push('\n');
                }
            }
        }
    }
    for (_, content) in &mut out {
        content.truncate(content.trim_end().len());
    }
    out
}
