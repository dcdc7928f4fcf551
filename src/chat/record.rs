//! Chat file records (format v1), one JSON object per line. These types are what is on disk;
//! they are kept apart from runtime state and only ever gain optional fields.

use serde::{Deserialize, Serialize};

pub(crate) const VERSION: u32 = 1;

/// Line 1 of every chat file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Header {
    pub(crate) v: u32,
    pub(crate) id: String,
    pub(crate) created: String,
    /// The model the chat was started with (the alias as typed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) system: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
    /// The latest summary (also kept as a record): here so a turn finds it without reading
    /// the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<SummaryRec>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    User,
    Assistant,
}

/// Token counts reported by a provider.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) input: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<u64>,
}

/// Who answered: enough to route the next turn the same way.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Origin {
    /// The alias as typed (`sonnet`, `claude:opus@high`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) alias: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) effort: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct MessageRec {
    pub(crate) role: Role,
    pub(crate) content: String,
    pub(crate) ts: String,
    #[serde(flatten)]
    pub(crate) origin: Origin,
    /// The number of this exchange (1 for the first user/assistant pair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) turn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<Usage>,
    /// Milliseconds the backend took (assistant messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ms: Option<u64>,
    /// Estimated tokens of the conversation through this message, since the latest summary
    /// (assistant messages): lets a turn weigh a long chat without reading all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) history_tokens: Option<u64>,
    /// The reply was cut short (Ctrl+C, a dropped stream, a closed stdout).
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) interrupted: bool,
}

/// A prompt whose turn failed: kept so nothing typed is lost, and `ai chat retry` resends it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct PendingRec {
    pub(crate) content: String,
    pub(crate) ts: String,
    #[serde(flatten)]
    pub(crate) origin: Origin,
    /// What went wrong (one line; never a secret).
    #[serde(default)]
    pub(crate) error: String,
}

/// A summary of older messages (written by compaction).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct SummaryRec {
    pub(crate) content: String,
    pub(crate) ts: String,
    /// The turn number up to which this summary stands for the messages.
    #[serde(default)]
    pub(crate) through_turn: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Record {
    Chat(Header),
    Message(MessageRec),
    Pending(PendingRec),
    Summary(SummaryRec),
    /// A record type from a newer version: kept on disk, skipped here.
    #[serde(other)]
    Unknown,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Encode a record as one line, newline included.
pub(crate) fn line(record: &Record) -> String {
    // Serializing these plain structs cannot fail (string keys, no maps of non-strings).
    let mut s = serde_json::to_string(record).unwrap_or_else(|_| String::from("{}"));
    s.push('\n');
    s
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_shape() {
        let h = Record::Chat(Header {
            v: 1,
            id: "K7Q".into(),
            created: "2026-11-21T00:00:00.000Z".into(),
            model: Some("sonnet".into()),
            system: None,
            title: None,
            summary: None,
        });
        let l = line(&h);
        assert!(l.starts_with(r#"{"type":"chat","v":1,"id":"K7Q""#), "{l}");
        assert_eq!(serde_json::from_str::<Record>(&l).unwrap(), h);
    }

    #[test]
    fn unknown_types_are_skipped() {
        let r: Record = serde_json::from_str(r#"{"type":"bookmark","x":1}"#).unwrap();
        assert_eq!(r, Record::Unknown);
    }

    #[test]
    fn message_fields() {
        let r: Record = serde_json::from_str(
            r#"{"type":"message","role":"assistant","content":"hi","ts":"t","provider":"claude","model":"opus","turn":3,"interrupted":true}"#,
        )
        .unwrap();
        let Record::Message(m) = r else { panic!() };
        assert_eq!(m.turn, Some(3));
        assert!(m.interrupted);
        assert_eq!(m.origin.provider.as_deref(), Some("claude"));
    }
}
