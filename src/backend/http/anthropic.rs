//! Anthropic Messages.

use serde::Deserialize;
use serde_json::{Value, json};

use super::provider::Resolved;
use super::{Bad, Built, ErrorBody, Piece};
use crate::backend::{Request, Role};
use crate::chat::record::Usage;

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": m.content})
        })
        .collect();
    let mut body =
        json!({"model": req.route.model, "max_tokens": p.max_tokens, "messages": messages});
    let mut system = req.system.map(str::to_owned);
    if req.modes.json {
        let ask = "Answer with one valid JSON value and nothing else.";
        system = Some(match system {
            Some(s) => format!("{s}\n\n{ask}"),
            None => ask.to_owned(),
        });
    }
    if let Some(s) = system {
        body["system"] = json!(s);
    }
    if stream {
        body["stream"] = json!(true);
    }
    let mut headers = vec![("anthropic-version".to_owned(), "2023-06-01".to_owned())];
    if let Some(k) = &p.key {
        headers.push(("x-api-key".to_owned(), k.clone()));
    }
    Built {
        url: format!("{}/v1/messages", p.base_url),
        headers,
        body,
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
    error: Option<Value>,
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
}

#[derive(Deserialize)]
struct Delta {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
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
        "content_block_delta" => {
            if let Some(d) = ev.delta
                && d.kind == "text_delta"
                && let Some(t) = d.text.filter(|t| !t.is_empty())
            {
                out.push(Piece::Text(t));
            }
        }
        "message_delta" => {
            if ev.delta.as_ref().and_then(|d| d.stop_reason.as_deref()) == Some("max_tokens") {
                out.push(Piece::Truncated);
            }
            if let Some(u) = ev.usage {
                out.push(Piece::Usage(Usage {
                    input: state.input,
                    output: u.output_tokens,
                }));
            }
        }
        "message_stop" => out.push(Piece::Done),
        "error" => out.push(Piece::Fail(
            ev.error
                .as_ref()
                .map(ErrorBody::from_value)
                .unwrap_or_default(),
        )),
        _ => {} // ping, content_block_start/stop, and whatever is added later
    }
    Ok(())
}

pub(crate) fn whole(body: &[u8]) -> Result<(String, Option<Usage>), Bad> {
    #[derive(Deserialize)]
    struct Whole {
        #[serde(default)]
        content: Vec<Block>,
        #[serde(default)]
        usage: Option<WireUsage>,
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
    });
    Ok((text, usage))
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
                output: Some(7)
            })
        ));
        assert!(matches!(out[2], Piece::Done));
    }
}
