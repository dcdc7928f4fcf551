//! Anthropic Messages.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::calls::CallPart;
use super::provider::Resolved;
use super::{Bad, Built, ErrorBody, Piece};
use crate::backend::Request;
use crate::chat::record::Usage;
use crate::conversation::Role;

/// A Messages request body.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u64,
    messages: Vec<ReqMsg<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    /// `--schema`: the model must call the reply tool, whose input is the JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
}

/// A tool the model may call.
#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

#[derive(Serialize)]
struct ReqMsg<'a> {
    role: &'static str,
    content: Content<'a>,
}

/// A plain string when the message is only text, else content blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<ReqBlock<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ReqBlock<'a> {
    Text {
        text: Cow<'a, str>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        /// An object (the model's JSON text, parsed).
        input: Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// `{"type":"image","source":{"type":"base64","media_type","data"}}`.
    Image {
        source: Base64Source<'a>,
    },
    /// A PDF: `{"type":"document","source":{"type":"base64","media_type":"application/pdf",…}}`.
    Document {
        source: Base64Source<'a>,
    },
}

#[derive(Serialize)]
struct Base64Source<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: String,
}

fn messages<'a>(req: &Request<'a>) -> Vec<ReqMsg<'a>> {
    req.messages
        .iter()
        .map(|m| {
            if m.tool_calls().next().is_none()
                && m.tool_results().next().is_none()
                && m.attachments().next().is_none()
            {
                return ReqMsg {
                    role: role(m.role),
                    content: Content::Text(m.plain_text()),
                };
            }
            let mut content = Vec::new();
            // Tool results come first in their message, as the API requires.
            for r in m.tool_results() {
                content.push(ReqBlock::ToolResult {
                    tool_use_id: &r.call_id,
                    content: &r.content,
                    is_error: r.is_error,
                });
            }
            // Images and documents before the text that asks about them.
            for a in m.attachments() {
                let source = Base64Source {
                    kind: "base64",
                    media_type: &a.media_type,
                    data: a.base64(),
                };
                content.push(if a.is_image() {
                    ReqBlock::Image { source }
                } else {
                    ReqBlock::Document { source }
                });
            }
            let text = m.plain_text();
            if !text.is_empty() {
                content.push(ReqBlock::Text { text });
            }
            for c in m.tool_calls() {
                content.push(ReqBlock::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input: super::arguments_object(&c.arguments),
                });
            }
            ReqMsg {
                role: role(m.role),
                content: Content::Blocks(content),
            }
        })
        .collect()
}

fn role(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let mut system = req.system.map(str::to_owned);
    if req.modes.json {
        let ask = crate::target::JSON_ASK;
        system = Some(match system {
            Some(s) => format!("{s}\n\n{ask}"),
            None => ask.to_owned(),
        });
    }
    let mut tools: Vec<WireTool> = req
        .tools
        .iter()
        .map(|d| WireTool {
            name: &d.name,
            description: &d.description,
            input_schema: &d.parameters,
        })
        .collect();
    if let Some(schema) = req.schema {
        tools.push(WireTool {
            name: crate::backend::shape::TOOL,
            description: crate::backend::shape::TOOL_DESCRIPTION,
            input_schema: schema,
        });
    }
    let body = Body {
        model: &req.route.model,
        max_tokens: p.max_tokens,
        messages: messages(req),
        system,
        stream: stream.then_some(true),
        tools,
        tool_choice: req
            .schema
            .map(|_| serde_json::json!({"type": "tool", "name": crate::backend::shape::TOOL})),
    };
    let mut headers = vec![("anthropic-version".to_owned(), "2023-06-01".to_owned())];
    if let Some(k) = &p.key {
        headers.push(("x-api-key".to_owned(), k.clone()));
    }
    Built {
        url: format!("{}/v1/messages", p.base_url),
        headers,
        body: super::encode(&body, req),
    }
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<ErrorBody>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    content_block: Option<Block>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
}

impl Block {
    /// A `tool_use` block as a call (or its start, when its input follows in deltas).
    fn call(self, index: Option<u64>) -> CallPart {
        CallPart {
            index,
            id: self.id,
            name: self.name,
            // A stream starts with `{}` and sends the input in pieces; a whole reply has it.
            arguments: self
                .input
                .filter(|v| v.as_object().is_none_or(|o| !o.is_empty()))
                .map(|v| v.to_string()),
            signature: None,
        }
    }
}

#[derive(Deserialize)]
struct Delta {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    partial_json: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    fn input(&self) -> Option<u64> {
        self.input_tokens.map(|i| {
            i + self.cache_creation_input_tokens.unwrap_or(0)
                + self.cache_read_input_tokens.unwrap_or(0)
        })
    }
}

/// Stream state: input tokens arrive first, output tokens (cumulative) last.
#[derive(Default)]
pub(crate) struct State {
    input: Option<u64>,
}

pub(crate) fn event(state: &mut State, data: &str, out: &mut Vec<Piece>) -> Result<(), String> {
    let ev: Event = serde_json::from_str(data)
        .map_err(|e| format!("a stream event is not valid JSON ({e})"))?;
    match ev.kind.as_str() {
        "message_start" => state.input = ev.message.and_then(|m| m.usage).and_then(|u| u.input()),
        "content_block_start" => {
            if let Some(b) = ev.content_block
                && b.kind == "tool_use"
            {
                // Keyed by block index; a start without one still opens a call of its own.
                let index = Some(ev.index.unwrap_or(u64::MAX));
                out.push(Piece::Call(b.call(index)));
            }
        }
        "content_block_delta" => match ev.delta {
            Some(d) if d.kind == "text_delta" => {
                if let Some(t) = d.text.filter(|t| !t.is_empty()) {
                    out.push(Piece::Text(t));
                }
            }
            Some(d) if d.kind == "input_json_delta" => {
                out.push(Piece::Call(CallPart {
                    index: Some(ev.index.unwrap_or(u64::MAX)),
                    arguments: d.partial_json,
                    ..CallPart::default()
                }));
            }
            _ => {}
        },
        "message_delta" => {
            if ev.delta.as_ref().and_then(|d| d.stop_reason.as_deref()) == Some("max_tokens") {
                out.push(Piece::Truncated);
            }
            if let Some(u) = ev.usage {
                out.push(Piece::Usage(Usage {
                    input: state.input,
                    output: u.output_tokens,
                    cost_usd: None,
                }));
            }
        }
        "message_stop" => out.push(Piece::Done),
        "error" => out.push(Piece::Fail(ev.error.unwrap_or_default())),
        _ => {} // ping, content_block_stop, and whatever is added later
    }
    Ok(())
}

pub(crate) fn whole(body: &[u8]) -> Result<super::Whole, Bad> {
    #[derive(Deserialize)]
    struct Whole {
        #[serde(default)]
        content: Vec<Block>,
        #[serde(default)]
        usage: Option<WireUsage>,
        #[serde(default)]
        stop_reason: Option<String>,
    }
    let w: Whole = serde_json::from_slice(body)
        .map_err(|e| Bad::Invalid(format!("the response is not valid JSON ({e})")))?;
    let text: String = w
        .content
        .iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text.as_deref())
        .collect();
    let usage = w.usage.map(|u| Usage {
        input: u.input(),
        output: u.output_tokens,
        cost_usd: None,
    });
    let calls = w
        .content
        .into_iter()
        .filter(|b| b.kind == "tool_use")
        .enumerate()
        .map(|(i, b)| b.call(Some(i as u64)))
        .collect();
    let cut = w.stop_reason.as_deref() == Some("max_tokens");
    Ok((text, usage, cut, calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_usage_is_input_plus_cumulative_output() {
        let mut s = State::default();
        let mut out = Vec::new();
        event(&mut s, r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1},"content":[]}}"#, &mut out).unwrap();
        event(
            &mut s,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            &mut out,
        )
        .unwrap();
        event(&mut s, r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#, &mut out).unwrap();
        event(&mut s, r#"{"type":"message_stop"}"#, &mut out).unwrap();
        assert!(matches!(&out[0], Piece::Text(t) if t == "Hi"));
        assert!(matches!(
            &out[1],
            Piece::Usage(Usage {
                input: Some(15),
                output: Some(7),
                cost_usd: None
            })
        ));
        assert!(matches!(out[2], Piece::Done));
    }
}
