//! OpenAI Chat Completions, and the servers that speak it: OpenRouter, GLM, Azure OpenAI,
//! LM Studio, vLLM, llama.cpp, LiteLLM, Ollama's /v1.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::calls::CallPart;
use super::provider::{Protocol, Resolved};
use super::{Bad, Built, ErrorBody, Limit, Piece};
use crate::backend::Request;
use crate::chat::record::Usage;
use crate::conversation::{Part, Role};

/// A Chat Completions request body.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Msg<'a>>,
    /// `max_tokens` or `max_completion_tokens`, as the provider wants.
    #[serde(flatten)]
    limit: Limit<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

/// A tool the model may call: `{"type":"function","function":{name, description, parameters}}`.
#[derive(Serialize)]
pub(crate) struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireToolDef<'a>,
}

#[derive(Serialize)]
pub(crate) struct WireToolDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

/// The tools in the OpenAI shape (Ollama takes the same).
pub(crate) fn tools<'a>(defs: &'a [crate::conversation::ToolDef]) -> Vec<WireTool<'a>> {
    defs.iter()
        .map(|d| WireTool {
            kind: "function",
            function: WireToolDef {
                name: &d.name,
                description: &d.description,
                parameters: &d.parameters,
            },
        })
        .collect()
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct ResponseFormat {
    #[serde(rename = "type")]
    kind: &'static str,
    /// `--schema`: `{"name", "strict": true, "schema"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    json_schema: Option<serde_json::Value>,
}

/// One message: `system`, `user`, `assistant` (with its tool calls) or `tool` (one result).
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Msg<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        /// `null` when the message is only tool calls.
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A plain string, or parts when images or files go with the text.
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<UserPart<'a>>),
}

/// `{"type":"text"}`, `{"type":"image_url","image_url":{"url":"data:…"}}` or
/// `{"type":"file","file":{"filename","file_data":"data:application/pdf;base64,…"}}`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum UserPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
    File { file: FileData<'a> },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct FileData<'a> {
    filename: &'a str,
    file_data: String,
}

/// A user message's content: its attachments in their own parts, then its text.
fn user_content<'a>(m: &'a crate::conversation::Message) -> UserContent<'a> {
    let text = m.plain_text();
    if m.attachments().next().is_none() {
        return UserContent::Text(text);
    }
    let mut parts: Vec<UserPart<'a>> = m
        .attachments()
        .map(|a| {
            if a.is_image() {
                UserPart::ImageUrl {
                    image_url: ImageUrl { url: a.data_url() },
                }
            } else {
                UserPart::File {
                    file: FileData {
                        filename: a.file_name(),
                        file_data: a.data_url(),
                    },
                }
            }
        })
        .collect();
    if !text.is_empty() {
        parts.push(UserPart::Text { text });
    }
    UserContent::Parts(parts)
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    /// A string of JSON, exactly as the model sent it.
    arguments: &'a str,
}

/// The messages of a request in the Chat Completions shape (system first; each tool result
/// its own `tool` message, right after the call that asked for it).
fn messages<'a>(req: &Request<'a>) -> Vec<Msg<'a>> {
    let mut out = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = req.system {
        out.push(Msg::System { content: system });
    }
    for m in req.messages {
        match m.role {
            Role::User => {
                for r in m.tool_results() {
                    out.push(Msg::Tool {
                        tool_call_id: &r.call_id,
                        content: &r.content,
                    });
                }
                if m.parts.iter().any(|p| !matches!(p, Part::ToolResult(_))) {
                    out.push(Msg::User {
                        content: user_content(m),
                    });
                }
            }
            Role::Assistant => {
                let text = m.plain_text();
                let tool_calls: Vec<WireCall<'a>> = m
                    .tool_calls()
                    .map(|c| WireCall {
                        id: &c.id,
                        kind: "function",
                        function: WireFunction {
                            name: &c.name,
                            arguments: &c.arguments,
                        },
                    })
                    .collect();
                out.push(Msg::Assistant {
                    content: (!text.is_empty() || tool_calls.is_empty()).then_some(text),
                    tool_calls,
                });
            }
        }
    }
    out
}

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let body = Body {
        model: &req.route.model,
        messages: messages(req),
        limit: Limit(&p.max_tokens_field, p.max_tokens),
        stream: stream.then_some(true),
        stream_options: stream.then_some(StreamOptions {
            include_usage: true,
        }),
        response_format: match req.schema {
            // Strict structured output: the schema in strict mode's rules.
            Some(schema) => Some(ResponseFormat {
                kind: "json_schema",
                json_schema: Some(serde_json::json!({
                    "name": "reply",
                    "strict": true,
                    "schema": crate::backend::shape::strict(schema),
                })),
            }),
            None => req.modes.json.then_some(ResponseFormat {
                kind: "json_object",
                json_schema: None,
            }),
        },
        reasoning_effort: req.route.effort.as_deref(),
        tools: tools(req.tools),
    };
    let (url, auth) = if p.protocol == Protocol::Azure {
        (
            format!(
                "{}/openai/deployments/{}/chat/completions?api-version={}",
                p.base_url,
                super::path_segment(&req.route.model),
                p.api_version
            ),
            p.key.as_ref().map(|k| ("api-key".to_owned(), k.clone())),
        )
    } else {
        (
            format!("{}/chat/completions", p.base_url),
            p.key
                .as_ref()
                .map(|k| ("Authorization".to_owned(), format!("Bearer {k}"))),
        )
    };
    Built {
        url,
        headers: auth.into_iter().collect(),
        body: super::encode(&body, req),
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    message: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallChunk>>,
}

/// A tool call, or (streamed) a fragment of one, keyed by `index`.
#[derive(Deserialize)]
struct CallChunk {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionChunk>,
}

#[derive(Deserialize)]
struct FunctionChunk {
    #[serde(default)]
    name: Option<String>,
    /// A piece of a JSON string. Some servers send an object: it is kept as its JSON text.
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

impl CallChunk {
    fn part(self, whole_at: Option<u64>) -> CallPart {
        let (name, arguments) = match self.function {
            Some(f) => (
                f.name,
                match f.arguments {
                    Some(serde_json::Value::String(s)) => Some(s),
                    Some(serde_json::Value::Null) | None => None,
                    Some(v) => Some(v.to_string()),
                },
            ),
            None => (None, None),
        };
        CallPart {
            index: self.index.or(whole_at),
            id: self.id,
            name,
            arguments,
            signature: None,
        }
    }
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(u: WireUsage) -> Usage {
        Usage {
            input: u.prompt_tokens,
            output: u.completion_tokens,
            cost_usd: None,
        }
    }
}

/// One SSE `data:` payload of a stream.
pub(crate) fn event(data: &str, out: &mut Vec<Piece>) -> Result<(), String> {
    if data.trim() == "[DONE]" {
        out.push(Piece::Done);
        return Ok(());
    }
    let chunk: Chunk = serde_json::from_str(data)
        .map_err(|e| format!("a stream event is not valid JSON ({e})"))?;
    if let Some(err) = chunk.error {
        out.push(Piece::Fail(err));
        return Ok(());
    }
    for choice in chunk.choices {
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                out.push(Piece::Text(text));
            }
            for (i, c) in delta.tool_calls.into_iter().flatten().enumerate() {
                // `index` is always there on OpenAI; a server that leaves it out sends each
                // call whole, in order.
                out.push(Piece::Call(c.part(Some(u64::MAX - i as u64))));
            }
        }
        if choice.finish_reason.as_deref() == Some("length") {
            out.push(Piece::Truncated);
        }
        if choice.finish_reason.as_deref() == Some("error") {
            out.push(Piece::Fail(ErrorBody {
                message: "the provider ended the stream with an error".into(),
                ..ErrorBody::default()
            }));
        }
    }
    if let Some(u) = chunk.usage {
        out.push(Piece::Usage(u.into()));
    }
    Ok(())
}

/// A whole (non-streamed) response.
pub(crate) fn whole(body: &[u8]) -> Result<super::Whole, Bad> {
    let chunk: Chunk = serde_json::from_slice(body)
        .map_err(|e| Bad::Invalid(format!("the response is not valid JSON ({e})")))?;
    if let Some(err) = chunk.error {
        return Err(Bad::Provider(err));
    }
    let choice = chunk
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| Bad::Invalid("the response has no choices".into()))?;
    let cut = choice.finish_reason.as_deref() == Some("length");
    let (text, calls) = match choice.message {
        Some(m) => (
            m.content.unwrap_or_default(),
            m.tool_calls
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, c)| CallChunk { index: None, ..c }.part(Some(i as u64)))
                .collect(),
        ),
        None => (String::new(), Vec::new()),
    };
    Ok((text, chunk.usage.map(Into::into), cut, calls))
}
