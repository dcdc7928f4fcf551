//! Ollama's native API: POST /api/chat, NDJSON stream ending in `"done":true`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::provider::Resolved;
use super::{Bad, Built, ErrorBody, Piece};
use crate::backend::Request;
use crate::chat::record::Usage;

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let messages = super::messages_with_system(req);
    let mut body = json!({
        "model": req.route.model,
        "messages": messages,
        "stream": stream,
        "options": {"num_predict": p.max_tokens},
    });
    if req.modes.json {
        body["format"] = json!("json");
    }
    let headers = p
        .key
        .iter()
        .map(|k| ("Authorization".to_owned(), format!("Bearer {k}")))
        .collect();
    Built {
        url: format!("{}/api/chat", p.base_url),
        headers,
        body,
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
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Msg {
    #[serde(default)]
    content: String,
}

pub(crate) fn line(bytes: &[u8], out: &mut Vec<Piece>) -> Result<(), String> {
    let l: Line = serde_json::from_slice(bytes)
        .map_err(|e| format!("a stream line is not valid JSON ({e})"))?;
    if let Some(err) = l.error {
        out.push(Piece::Fail(ErrorBody::from_value(&err)));
        return Ok(());
    }
    if let Some(m) = l.message.filter(|m| !m.content.is_empty()) {
        out.push(Piece::Text(m.content));
    }
    if l.done && l.done_reason.as_deref() == Some("length") {
        out.push(Piece::Truncated);
    }
    if l.done {
        out.push(Piece::Usage(Usage {
            input: l.prompt_eval_count,
            output: l.eval_count,
        }));
        out.push(Piece::Done);
    }
    Ok(())
}

pub(crate) fn whole(body: &[u8]) -> Result<(String, Option<Usage>), Bad> {
    let l: Line = serde_json::from_slice(body)
        .map_err(|e| Bad::Invalid(format!("the response is not valid JSON ({e})")))?;
    if let Some(err) = l.error {
        return Err(Bad::Provider(ErrorBody::from_value(&err)));
    }
    let usage = Some(Usage {
        input: l.prompt_eval_count,
        output: l.eval_count,
    });
    Ok((l.message.map(|m| m.content).unwrap_or_default(), usage))
}
