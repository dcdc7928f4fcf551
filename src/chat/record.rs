//! Chat file records (format v1), one JSON object per line. These types are what is on disk;
//! they are kept apart from runtime state and only ever gain optional fields.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

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
    /// The knowledge bases its turns are grounded in (`--kb`), until changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) kb: Vec<String>,
    /// Its knowledge bases are given to the model as tools (`--tools`), until `--kb` without
    /// `--tools` chooses them again (then config `kb.mode` decides).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) kb_tools: bool,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    User,
    Assistant,
}

/// Token counts (and, where a CLI reports it, the cost) reported by a provider.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) input: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<u64>,
    /// What the call cost in US dollars, as the backend reported it (claude).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cost_usd: Option<f64>,
}

/// Reading token counts and costs that providers and CLIs report: a number of an unexpected
/// shape (a string, a negative or fractional count, a cost that is not finite) is taken as not
/// reported, never as a reason to drop the event that carries it.
pub(crate) mod lenient {
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    /// A count: a whole number from 0 to u64::MAX, else `None`.
    pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Number(n) => n.as_u64(),
            _ => None,
        })
    }

    /// A cost in dollars: a finite number from 0, else `None`.
    pub(crate) fn cost<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Number(n) => n.as_f64().filter(|c| c.is_finite() && *c >= 0.0),
            _ => None,
        })
    }
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
#[serde(from = "MessageWire")]
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
    /// The passages the answer was given (assistant messages of grounded turns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) sources: Vec<SourceRef>,
    /// The backend answered with nothing at all (assistant messages).
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) empty: bool,
    /// The turn this one resends (`ai chat retry` of a reply cut short or empty; user
    /// messages): that turn stays on disk and is never sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replaces: Option<u64>,
    /// What was attached (user messages): images and PDFs (`-F`), web pages (`-F URL`).
    /// Their bytes are not here; a copy kept with `--keep-attachments` is in the chat's
    /// folder (`<ID>.files/`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) attachments: Vec<AttachmentRec>,
}

/// One attachment of a message, as recorded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct AttachmentRec {
    /// As given: the path relative to the working directory, or the URL.
    pub(crate) name: String,
    /// Its media type (`image/png`, `application/pdf`, `text/html`).
    #[serde(rename = "type")]
    pub(crate) media_type: String,
    /// Bytes (of a web page: as downloaded).
    pub(crate) size: u64,
    /// Lowercase hex SHA-256 of those bytes.
    pub(crate) sha256: String,
    /// A web page: the URL it was read from, after redirects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
    /// The kept copy's file name in `<ID>.files/` (`--keep-attachments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kept: Option<String>,
}

/// A message as read: the same fields, with the origin's inline. (`flatten` makes serde buffer
/// every field of every message before reading it; messages are most of what a turn reads.)
#[derive(Deserialize)]
struct MessageWire {
    role: Role,
    content: String,
    ts: String,
    #[serde(default)]
    alias: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    effort: Option<String>,
    #[serde(default)]
    turn: Option<u64>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    ms: Option<u64>,
    #[serde(default)]
    history_tokens: Option<u64>,
    #[serde(default)]
    interrupted: bool,
    #[serde(default)]
    sources: Vec<SourceRef>,
    #[serde(default)]
    empty: bool,
    #[serde(default)]
    replaces: Option<u64>,
    #[serde(default)]
    attachments: Vec<AttachmentRec>,
}

impl From<MessageWire> for MessageRec {
    fn from(w: MessageWire) -> MessageRec {
        MessageRec {
            role: w.role,
            content: w.content,
            ts: w.ts,
            origin: Origin {
                alias: w.alias,
                provider: w.provider,
                model: w.model,
                effort: w.effort,
            },
            turn: w.turn,
            usage: w.usage,
            ms: w.ms,
            history_tokens: w.history_tokens,
            interrupted: w.interrupted,
            sources: w.sources,
            empty: w.empty,
            replaces: w.replaces,
            attachments: w.attachments,
        }
    }
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
    /// The turn a failed retry was resending (see `MessageRec::replaces`): carried on, so the
    /// retry that succeeds still replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replaces: Option<u64>,
    /// What was attached to the prompt (as on a user message), for the resend.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) attachments: Vec<AttachmentRec>,
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

/// One tool round of a turn (tool calling): what the model asked for and what the tools
/// returned. Written when the round completes, so a crash mid-turn loses only the round under
/// way. An `ai` that predates rounds skips the record (it keeps unknown types).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct RoundRec {
    /// The turn it belongs to (the number of its user message).
    pub(crate) turn: u64,
    /// 1 for the first round of the turn.
    pub(crate) round: u32,
    pub(crate) ts: String,
    /// Text the model wrote before asking for the tools.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) text: String,
    #[serde(default)]
    pub(crate) calls: Vec<CallRec>,
    #[serde(default)]
    pub(crate) results: Vec<ResultRec>,
    #[serde(flatten)]
    pub(crate) origin: Origin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ms: Option<u64>,
}

/// A tool call as the model made it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct CallRec {
    pub(crate) id: String,
    pub(crate) name: String,
    /// JSON text, exactly as received.
    pub(crate) arguments: String,
    /// Gemini's `thoughtSignature`, sent back with the call on later turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) signature: Option<String>,
}

/// What a tool returned for one call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ResultRec {
    /// The call it answers.
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) content: String,
    /// The call failed; `content` says why.
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) error: bool,
    /// `content` was cut to the size limit.
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) truncated: bool,
}

/// A passage a grounded answer was given (knowledge bases): a reference, not the text, so the
/// history does not balloon; the text is retrieved afresh when needed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct SourceRef {
    /// The knowledge base.
    pub(crate) kb: String,
    /// The note's ID within it.
    pub(crate) id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ordering: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    /// Which passage of the note (0 for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chunk: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) score: Option<f64>,
}

/// One line of a chat file.
#[derive(Debug, Clone)]
pub(crate) enum Record {
    Chat(Header),
    Message(MessageRec),
    Pending(PendingRec),
    Summary(SummaryRec),
    Round(RoundRec),
    /// A record type from a newer version: skipped here, and kept exactly as written (through
    /// rewrites, `chat show --json`, export and import).
    Unknown(Box<RawValue>),
}

/// The record types this version knows, as they are on disk.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Known {
    Chat(Header),
    Message(MessageRec),
    Pending(PendingRec),
    Summary(SummaryRec),
    Round(RoundRec),
}

/// The same, borrowed, for writing.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum KnownRef<'a> {
    Chat(&'a Header),
    Message(&'a MessageRec),
    Pending(&'a PendingRec),
    Summary(&'a SummaryRec),
    Round(&'a RoundRec),
}

const KNOWN_TYPES: [&str; 5] = ["chat", "message", "pending", "summary", "round"];

/// Just the type of a record.
#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type")]
    kind: Option<String>,
}

impl From<Known> for Record {
    fn from(k: Known) -> Record {
        match k {
            Known::Chat(h) => Record::Chat(h),
            Known::Message(m) => Record::Message(m),
            Known::Pending(p) => Record::Pending(p),
            Known::Summary(s) => Record::Summary(s),
            Known::Round(r) => Record::Round(r),
        }
    }
}

impl Record {
    /// Parse one line. A well-formed object whose `type` this version does not know is kept
    /// whole as [`Record::Unknown`]; a known type that does not parse is an error.
    pub(crate) fn parse(line: &[u8]) -> std::result::Result<Record, serde_json::Error> {
        // Most lines are messages, written with their type first: read those directly, without
        // the buffering an internally tagged enum needs. Anything else takes the general way.
        if line.starts_with(br#"{"type":"message","#)
            && let Ok(m) = serde_json::from_slice::<MessageRec>(line)
        {
            return Ok(Record::Message(m));
        }
        match serde_json::from_slice::<Known>(line) {
            Ok(k) => Ok(k.into()),
            Err(e) => match serde_json::from_slice::<TypeOnly>(line) {
                Ok(TypeOnly { kind: Some(kind) }) if !KNOWN_TYPES.contains(&kind.as_str()) => {
                    let text = std::str::from_utf8(line)
                        .map_err(|_| e)?
                        .trim_end_matches(['\r', '\n']);
                    Ok(Record::Unknown(RawValue::from_string(text.to_owned())?))
                }
                _ => Err(e),
            },
        }
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        match (self, other) {
            (Record::Chat(a), Record::Chat(b)) => a == b,
            (Record::Message(a), Record::Message(b)) => a == b,
            (Record::Pending(a), Record::Pending(b)) => a == b,
            (Record::Summary(a), Record::Summary(b)) => a == b,
            (Record::Round(a), Record::Round(b)) => a == b,
            (Record::Unknown(a), Record::Unknown(b)) => a.get() == b.get(),
            _ => false,
        }
    }
}

impl Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Record::Chat(h) => KnownRef::Chat(h).serialize(s),
            Record::Message(m) => KnownRef::Message(m).serialize(s),
            Record::Pending(p) => KnownRef::Pending(p).serialize(s),
            Record::Summary(x) => KnownRef::Summary(x).serialize(s),
            Record::Round(r) => KnownRef::Round(r).serialize(s),
            Record::Unknown(raw) => raw.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Record, D::Error> {
        // Through the raw text, so an unknown type is kept exactly (exports and imports).
        let raw = Box::<RawValue>::deserialize(d)?;
        Record::parse(raw.get().as_bytes()).map_err(serde::de::Error::custom)
    }
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
            kb: Vec::new(),
            kb_tools: false,
        });
        let l = line(&h);
        assert!(l.starts_with(r#"{"type":"chat","v":1,"id":"K7Q""#), "{l}");
        assert_eq!(Record::parse(l.as_bytes()).unwrap(), h);
    }

    #[test]
    fn unknown_types_are_skipped() {
        let text = r#"{"type":"bookmark","z":1,  "a":[2,1]}"#;
        let r = Record::parse(text.as_bytes()).unwrap();
        let Record::Unknown(raw) = &r else {
            panic!("{r:?}")
        };
        assert_eq!(raw.get(), text);
        // Written back byte for byte, in a line and inside a document.
        assert_eq!(line(&r), format!("{text}\n"));
        let doc: Vec<Record> = serde_json::from_str(&format!("[{text}]")).unwrap();
        assert_eq!(serde_json::to_string(&doc).unwrap(), format!("[{text}]"));
        // A known type that does not parse stays an error.
        assert!(Record::parse(br#"{"type":"message","role":"robot"}"#).is_err());
        assert!(Record::parse(br#"{"no":"type"}"#).is_err());
    }

    #[test]
    fn a_message_reads_the_same_by_the_fast_way_and_the_general_one() {
        let text = br#"{"type":"message","role":"assistant","content":"hi \"there\"","ts":"t","alias":"sonnet","provider":"claude","model":"opus","effort":"high","turn":3,"usage":{"input":1,"output":2,"cost_usd":0.5},"ms":9,"history_tokens":40,"interrupted":true,"sources":[{"kb":"notes","id":"e0d27e3ad"}],"empty":false,"replaces":2,"future":[1]}"#;
        let fast = Record::parse(text).unwrap();
        let general: Record = serde_json::from_slice::<Known>(text).unwrap().into();
        assert_eq!(fast, general);
        // And what it writes reads back the same.
        assert_eq!(Record::parse(line(&fast).as_bytes()).unwrap(), fast);
    }

    #[test]
    fn message_fields() {
        let r = Record::parse(
            br#"{"type":"message","role":"assistant","content":"hi","ts":"t","provider":"claude","model":"opus","turn":3,"interrupted":true}"#,
        )
        .unwrap();
        let Record::Message(m) = r else { panic!() };
        assert_eq!(m.turn, Some(3));
        assert!(m.interrupted);
        assert_eq!(m.origin.provider.as_deref(), Some("claude"));
    }
}
