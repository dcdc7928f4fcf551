//! Ollama's native API: POST /api/chat, NDJSON stream ending in `"done":true`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::calls::CallPart;
use super::provider::Resolved;
use super::{Bad, Built, ErrorBody, Limit, Piece};
use crate::backend::Request;
use crate::chat::record::Usage;
use crate::conversation::{Part, Role};

/// A /api/chat request body.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<ReqMsg<'a>>,
    stream: bool,
    options: Options<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `"json"`, or (`--schema`) the schema itself.
    format: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<super::openai::WireTool<'a>>,
}

#[derive(Serialize)]
struct Options<'a> {
    #[serde(flatten)]
    limit: Limit<'a>,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ReqMsg<'a> {
    System {
        content: &'a str,
    },
    User {
        content: Cow<'a, str>,
        /// Images, base64 (Ollama takes no other files).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
    },
    Assistant {
        content: Cow<'a, str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
    },
    Tool {
        tool_name: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct WireCall<'a> {
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    /// An object, not a string (unlike OpenAI).
    arguments: Value,
}

fn messages<'a>(req: &Request<'a>) -> Vec<ReqMsg<'a>> {
    let mut out = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = req.system {
        out.push(ReqMsg::System { content: system });
    }
    for m in req.messages {
        match m.role {
            Role::User => {
                for r in m.tool_results() {
                    out.push(ReqMsg::Tool {
                        tool_name: &r.name,
                        content: &r.content,
                    });
                }
                if m.parts.iter().any(|p| !matches!(p, Part::ToolResult(_))) {
                    out.push(ReqMsg::User {
                        content: m.plain_text(),
                        images: m.attachments().map(|a| a.base64()).collect(),
                    });
                }
            }
            Role::Assistant => out.push(ReqMsg::Assistant {
                content: m.plain_text(),
                tool_calls: m
                    .tool_calls()
                    .map(|c| WireCall {
                        function: WireFunction {
                            name: &c.name,
                            arguments: super::arguments_object(&c.arguments),
                        },
                    })
                    .collect(),
            }),
        }
    }
    out
}

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let body = Body {
        model: &req.route.model,
        messages: messages(req),
        stream,
        options: Options {
            limit: Limit(&p.max_tokens_field, p.max_tokens),
        },
        format: match req.schema {
            Some(schema) => Some(schema.clone()),
            None => req.modes.json.then(|| serde_json::Value::from("json")),
        },
        tools: super::openai::tools(req.tools),
    };
    let headers = p
        .key
        .iter()
        .map(|k| ("Authorization".to_owned(), format!("Bearer {k}")))
        .collect();
    Built {
        url: format!("{}/api/chat", p.base_url),
        headers,
        body: super::encode(&body, req),
    }
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    message: Option<Msg>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct Msg {
    #[serde(default)]
    content: String,
    #[serde(default)]
    tool_calls: Vec<WireCallIn>,
}

/// A whole tool call: `{"function":{"name","arguments":{object}}}` (no reliable ID).
#[derive(Deserialize)]
struct WireCallIn {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionIn>,
}

#[derive(Deserialize)]
struct FunctionIn {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

impl WireCallIn {
    fn part(self) -> CallPart {
        let (name, arguments) = match self.function {
            Some(f) => (
                f.name,
                f.arguments.map(|a| match a {
                    Value::String(s) => s,
                    other => other.to_string(),
                }),
            ),
            None => (None, None),
        };
        CallPart {
            index: None,
            id: self.id,
            name,
            arguments,
            signature: None,
        }
    }
}

pub(crate) fn line(bytes: &[u8], out: &mut Vec<Piece>) -> Result<(), String> {
    let l: Line = serde_json::from_slice(bytes)
        .map_err(|e| format!("a stream line is not valid JSON ({e})"))?;
    if let Some(err) = l.error {
        out.push(Piece::Fail(err));
        return Ok(());
    }
    if let Some(m) = l.message {
        if !m.content.is_empty() {
            out.push(Piece::Text(m.content));
        }
        out.extend(m.tool_calls.into_iter().map(|c| Piece::Call(c.part())));
    }
    if l.done && l.done_reason.as_deref() == Some("length") {
        out.push(Piece::Truncated);
    }
    if l.done {
        out.push(Piece::Usage(Usage {
            input: l.prompt_eval_count,
            output: l.eval_count,
            cost_usd: None,
        }));
        out.push(Piece::Done);
    }
    Ok(())
}

pub(crate) fn whole(body: &[u8]) -> Result<super::Whole, Bad> {
    let l: Line = serde_json::from_slice(body)
        .map_err(|e| Bad::Invalid(format!("the response is not valid JSON ({e})")))?;
    if let Some(err) = l.error {
        return Err(Bad::Provider(err));
    }
    let usage = Some(Usage {
        input: l.prompt_eval_count,
        output: l.eval_count,
        cost_usd: None,
    });
    let cut = l.done_reason.as_deref() == Some("length");
    let (text, calls) = match l.message {
        Some(m) => (
            m.content,
            m.tool_calls.into_iter().map(WireCallIn::part).collect(),
        ),
        None => (String::new(), Vec::new()),
    };
    Ok((text, usage, cut, calls))
}
