//! Chats written by the Python `ai-cli`: `<home>/chats/<ID>.json`, one JSON document
//! `{"chat_id","model_alias","messages":[{"role","content","timestamp"}],"created_at","updated_at"}`.
//! They are listed, shown and continued; the first write converts them to the JSONL format.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::record::{self, Header, MessageRec, Origin, PendingRec, Record, Role};
use crate::error::{Error, Result};

pub(crate) fn path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.json"))
}

/// Where the original goes while its conversion is checked.
pub(crate) fn backup_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.json.bak"))
}

#[derive(Deserialize)]
struct LegacyChat {
    #[serde(default)]
    model_alias: Option<String>,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    created_at: Option<String>,
    /// The file's name says it.
    #[serde(default, rename = "chat_id")]
    _chat_id: Option<Value>,
    /// The newest message (and the file's time) say it.
    #[serde(default, rename = "updated_at")]
    _updated_at: Option<Value>,
    /// Keys the Python tool or its user added (`title`, `tags`, `system_prompt`, …).
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// A user or assistant message as the Python tool wrote it.
#[derive(Deserialize)]
struct LegacyMessage {
    role: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    timestamp: Option<String>,
    /// Fields the message record has no place for (`model`, `tokens`, …).
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// A line of a converted chat for what has no record type of its own: the current reader
/// sees `"type":"legacy"` as an unknown record, skips it, and keeps the line on every rewrite.
#[derive(Serialize)]
struct LegacyLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// The message's position in the Python file's `messages`.
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<usize>,
    /// A message that is not a plain user or assistant message (a system or tool message),
    /// exactly as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a Value>,
    /// Fields of a user or assistant message that its record has no place for.
    #[serde(skip_serializing_if = "Option::is_none")]
    fields: Option<&'a Map<String, Value>>,
    /// Top-level keys of the Python file that the header has no place for.
    #[serde(skip_serializing_if = "Option::is_none")]
    chat: Option<&'a Map<String, Value>>,
}

fn legacy_line(l: &LegacyLine<'_>) -> String {
    // Plain maps of JSON values with string keys: encoding cannot fail.
    let mut s = serde_json::to_string(l).unwrap_or_else(|_| String::from("{}"));
    s.push('\n');
    s
}

/// A legacy chat in the current format.
pub(crate) struct Converted {
    pub(crate) header: Header,
    /// The records the current format has types for.
    pub(crate) records: Vec<Record>,
    /// The converted file after its header line: every record's line and, among them,
    /// `legacy` lines keeping everything else.
    pub(crate) body: String,
}

/// Read a legacy chat as a header and records in the current format.
pub(crate) fn parse(id: &str, text: &str, path: &Path) -> Result<(Header, Vec<Record>)> {
    let c = convert(id, text, path)?;
    Ok((c.header, c.records))
}

/// Convert a legacy chat, keeping everything: a system message becomes the system prompt when
/// there is none (`system_prompt` wins), top-level `title` the title; other roles, messages
/// whose content is not text, unknown keys and extra message fields are kept as `legacy` lines.
pub(crate) fn convert(id: &str, text: &str, path: &Path) -> Result<Converted> {
    let chat: LegacyChat = serde_json::from_str(text).map_err(|e| {
        Error::config(format!(
            "chat file {} (Python ai-cli format) is damaged: line {}, column {}",
            path.display(),
            e.line(),
            e.column()
        ))
        .hint("nothing was changed; fix the file or move it aside")
    })?;
    let created = chat.created_at.clone().unwrap_or_else(record::now);
    let origin = Origin {
        alias: chat.model_alias.clone(),
        ..Origin::default()
    };
    let text_of = |key: &str| {
        chat.rest
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut header = Header {
        v: record::VERSION,
        id: id.to_owned(),
        created: created.clone(),
        model: chat.model_alias.clone(),
        system: text_of("system_prompt").or_else(|| text_of("system")),
        title: text_of("title").filter(|t| !t.trim().is_empty()),
        summary: None,
        kb: Vec::new(),
        kb_tools: false,
    };
    let mut out = Out::default();
    if !chat.rest.is_empty() {
        out.line(legacy_line(&LegacyLine {
            kind: "legacy",
            index: None,
            message: None,
            fields: None,
            chat: Some(&chat.rest),
        }));
    }
    let mut turn = 0u64;
    let mut waiting: Option<LegacyMessage> = None;
    for (index, raw) in chat.messages.iter().enumerate() {
        let typed = LegacyMessage::deserialize(raw)
            .ok()
            .filter(|m| m.role == "user" || m.role == "assistant");
        let Some(m) = typed else {
            let system = raw.get("role").and_then(Value::as_str) == Some("system");
            match raw.get("content").and_then(Value::as_str) {
                Some(s) if system && header.system.is_none() => header.system = Some(s.to_owned()),
                _ => out.line(legacy_line(&LegacyLine {
                    kind: "legacy",
                    index: Some(index),
                    message: Some(raw),
                    fields: None,
                    chat: None,
                })),
            }
            continue;
        };
        if !m.rest.is_empty() {
            out.line(legacy_line(&LegacyLine {
                kind: "legacy",
                index: Some(index),
                message: None,
                fields: Some(&m.rest),
                chat: None,
            }));
        }
        if m.role == "user" {
            if let Some(u) = waiting.take() {
                // Two user messages in a row: the first never got its answer.
                out.record(pending(u, &origin, &created));
            }
            waiting = Some(m);
            continue;
        }
        turn += 1;
        let user = waiting.take().unwrap_or(LegacyMessage {
            role: "user".into(),
            content: String::new(),
            timestamp: m.timestamp.clone(),
            rest: Map::new(),
        });
        out.record(message(Role::User, user, turn, &origin, &created));
        out.record(message(Role::Assistant, m, turn, &origin, &created));
    }
    if let Some(u) = waiting {
        out.record(pending(u, &origin, &created));
    }
    Ok(Converted {
        header,
        records: out.records,
        body: out.body,
    })
}

#[derive(Default)]
struct Out {
    records: Vec<Record>,
    body: String,
}

impl Out {
    fn record(&mut self, r: Record) {
        self.line(record::line(&r));
        self.records.push(r);
    }
    fn line(&mut self, l: String) {
        self.body.push_str(&l);
    }
}

fn message(role: Role, m: LegacyMessage, turn: u64, origin: &Origin, created: &str) -> Record {
    Record::Message(MessageRec {
        role,
        content: m.content,
        ts: m.timestamp.unwrap_or_else(|| created.to_owned()),
        origin: origin.clone(),
        turn: Some(turn),
        usage: None,
        ms: None,
        history_tokens: None,
        interrupted: false,
        sources: Vec::new(),
        empty: false,
        replaces: None,
        attachments: Vec::new(),
    })
}

fn pending(m: LegacyMessage, origin: &Origin, created: &str) -> Record {
    Record::Pending(PendingRec {
        content: m.content,
        ts: m.timestamp.unwrap_or_else(|| created.to_owned()),
        origin: origin.clone(),
        error: "no answer was recorded".into(),
        replaces: None,
        attachments: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_chat() {
        let text = r#"{"chat_id":"XYZ","model_alias":"opus","messages":[
            {"role":"user","content":"Hello","timestamp":"2025-01-01T10:00:00"},
            {"role":"assistant","content":"Hi there","timestamp":"2025-01-01T10:00:05"},
            {"role":"user","content":"lost","timestamp":"2025-01-01T10:01:00"}],
            "created_at":"2025-01-01T10:00:00","updated_at":"2025-01-01T10:00:05"}"#;
        let (h, r) = parse("XYZ", text, Path::new("XYZ.json")).unwrap();
        assert_eq!(h.model.as_deref(), Some("opus"));
        assert_eq!(r.len(), 3);
        assert!(matches!(&r[2], Record::Pending(p) if p.content == "lost"));
    }
}
