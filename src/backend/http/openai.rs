//! OpenAI Chat Completions, and the servers that speak it: OpenRouter, GLM, Azure OpenAI,
//! LM Studio, vLLM, llama.cpp, LiteLLM, Ollama's /v1.

use serde::Deserialize;
use serde_json::{Value, json};

use super::provider::{Protocol, Resolved};
use super::{Bad, Built, ErrorBody, Piece};
use crate::backend::Request;
use crate::chat::record::Usage;

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let messages = super::messages_with_system(req);
    let mut body = json!({"model": req.route.model, "messages": messages});
    body[&p.max_tokens_field] = json!(p.max_tokens);
    if stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    if req.modes.json {
        body["response_format"] = json!({"type": "json_object"});
    }
    if let Some(effort) = &req.route.effort {
        body["reasoning_effort"] = json!(effort);
    }
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
        body,
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
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
        out.push(Piece::Fail(ErrorBody::from_value(&err)));
        return Ok(());
    }
    for choice in chunk.choices {
        if let Some(text) = choice
            .delta
            .and_then(|d| d.content)
            .filter(|t| !t.is_empty())
        {
            out.push(Piece::Text(text));
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
pub(crate) fn whole(body: &[u8]) -> Result<(String, Option<Usage>), Bad> {
    let chunk: Chunk = serde_json::from_slice(body)
        .map_err(|e| Bad::Invalid(format!("the response is not valid JSON ({e})")))?;
    if let Some(err) = chunk.error {
        return Err(Bad::Provider(ErrorBody::from_value(&err)));
    }
    let choice = chunk
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| Bad::Invalid("the response has no choices".into()))?;
    let text = choice.message.and_then(|m| m.content).unwrap_or_default();
    Ok((text, chunk.usage.map(Into::into)))
}
