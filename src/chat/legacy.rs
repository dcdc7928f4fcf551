//! Chats written by the Python `ai-cli`: `<home>/chats/<ID>.json`, one JSON document
//! `{"chat_id","model_alias","messages":[{"role","content","timestamp"}],"created_at","updated_at"}`.
//! They are listed, shown and continued; the first write converts them to the JSONL format.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::record::{self, Header, MessageRec, Origin, PendingRec, Record, Role};
use crate::error::{Error, Result};

pub(crate) fn path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.json"))
}

#[derive(Deserialize)]
struct LegacyChat {
    #[serde(default)]
    model_alias: Option<String>,
    #[serde(default)]
    messages: Vec<LegacyMessage>,
    #[serde(default)]
    created_at: Option<String>,
}

#[derive(Deserialize)]
struct LegacyMessage {
    role: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    timestamp: Option<String>,
}

/// Read a legacy chat as a header and records in the current format.
pub(crate) fn parse(id: &str, text: &str, path: &Path) -> Result<(Header, Vec<Record>)> {
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
    let header = Header {
        v: record::VERSION,
        id: id.to_owned(),
        created: created.clone(),
        model: chat.model_alias,
        system: None,
        title: None,
        summary: None,
    };
    let mut records = Vec::new();
    let mut turn = 0u64;
    let mut waiting: Option<LegacyMessage> = None;
    for m in chat.messages {
        match m.role.as_str() {
            "user" => {
                if let Some(u) = waiting.take() {
                    // Two user messages in a row: the first never got its answer.
                    records.push(pending(u, &origin, &created));
                }
                waiting = Some(m);
            }
            "assistant" => {
                turn += 1;
                if let Some(u) = waiting.take() {
                    records.push(message(Role::User, u, turn, &origin, &created));
                } else {
                    records.push(message(
                        Role::User,
                        LegacyMessage {
                            role: "user".into(),
                            content: String::new(),
                            timestamp: m.timestamp.clone(),
                        },
                        turn,
                        &origin,
                        &created,
                    ));
                }
                records.push(message(Role::Assistant, m, turn, &origin, &created));
            }
            _ => {}
        }
    }
    if let Some(u) = waiting {
        records.push(pending(u, &origin, &created));
    }
    Ok((header, records))
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
    })
}

fn pending(m: LegacyMessage, origin: &Origin, created: &str) -> Record {
    Record::Pending(PendingRec {
        content: m.content,
        ts: m.timestamp.unwrap_or_else(|| created.to_owned()),
        origin: origin.clone(),
        error: "no answer was recorded".into(),
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
