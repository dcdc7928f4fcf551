//! Google Gemini (Generative Language API).

use serde::Deserialize;
use serde_json::{Value, json};

use super::provider::Resolved;
use super::{Bad, Built, Piece};
use crate::backend::{Request, Role};
use crate::chat::record::Usage;

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let contents: Vec<Value> = req
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "model",
            };
            json!({"role": role, "parts": [{"text": m.content}]})
        })
        .collect();
    let mut generation = json!({"maxOutputTokens": p.max_tokens});
    if req.modes.json {
        generation["responseMimeType"] = json!("application/json");
    }
    let mut body = json!({"contents": contents, "generationConfig": generation});
    if let Some(s) = req.system {
        body["systemInstruction"] = json!({"parts": [{"text": s}]});
    }
    let model = super::path_segment(
        req.route
            .model
            .strip_prefix("models/")
            .unwrap_or(&req.route.model),
    );
    let url = if stream {
        format!(
            "{}/models/{model}:streamGenerateContent?alt=sse",
            p.base_url
        )
    } else {
        format!("{}/models/{model}:generateContent", p.base_url)
    };
    let headers = p
        .key
        .iter()
        .map(|k| ("x-goog-api-key".to_owned(), k.clone()))
        .collect();
    Built { url, headers, body }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    usage_metadata: Option<WireUsage>,
    #[serde(default)]
    prompt_feedback: Option<Feedback>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Feedback {
    #[serde(default)]
    block_reason: Option<String>,
}

fn text_of(r: &Response) -> String {
    r.candidates
        .iter()
        .filter_map(|c| c.content.as_ref())
        .flat_map(|c| c.parts.iter())
        .filter(|p| !p.thought)
        .filter_map(|p| p.text.as_deref())
        .collect()
}

/// One SSE payload. Gemini has no terminator: a chunk with `finishReason` marks the end.
pub(crate) fn event(data: &str, out: &mut Vec<Piece>) -> Result<(), String> {
    let r: Response = serde_json::from_str(data)
        .map_err(|e| format!("a stream event is not valid JSON ({e})"))?;
    if let Some(err) = &r.error {
        out.push(Piece::Fail(super::ErrorBody::from_value(err)));
        return Ok(());
    }
    if let Some(reason) = r
        .prompt_feedback
        .as_ref()
        .and_then(|f| f.block_reason.clone())
    {
        out.push(Piece::Fail(super::blocked(&reason)));
        return Ok(());
    }
    let text = text_of(&r);
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    if let Some(u) = r.usage_metadata {
        out.push(Piece::Usage(Usage {
            input: u.prompt_token_count,
            output: u.candidates_token_count,
        }));
    }
    if r.candidates
        .iter()
        .any(|c| c.finish_reason.as_deref() == Some("MAX_TOKENS"))
    {
        out.push(Piece::Truncated);
    }
    if r.candidates.iter().any(|c| c.finish_reason.is_some()) {
        out.push(Piece::Done);
    }
    Ok(())
}

pub(crate) fn whole(body: &[u8]) -> Result<(String, Option<Usage>), Bad> {
    let r: Response = serde_json::from_slice(body)
        .map_err(|e| Bad::Invalid(format!("the response is not valid JSON ({e})")))?;
    if let Some(reason) = r
        .prompt_feedback
        .as_ref()
        .and_then(|f| f.block_reason.clone())
    {
        return Err(Bad::Provider(super::blocked(&reason)));
    }
    let usage = r.usage_metadata.as_ref().map(|u| Usage {
        input: u.prompt_token_count,
        output: u.candidates_token_count,
    });
    Ok((text_of(&r), usage))
}
