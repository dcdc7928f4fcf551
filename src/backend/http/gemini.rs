//! Google Gemini (Generative Language API).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::calls::CallPart;
use super::provider::Resolved;
use super::{Bad, Built, ErrorBody, Piece};
use crate::backend::Request;
use crate::chat::record::Usage;
use crate::conversation::Role;

/// A generateContent request body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    contents: Vec<WireContent<'a>>,
    generation_config: GenerationConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTools<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireTools<'a> {
    function_declarations: Vec<Declaration<'a>>,
}

#[derive(Serialize)]
struct Declaration<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Value,
}

/// A JSON schema as Gemini's OpenAPI subset takes it: without the keys it refuses.
fn openapi_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "$schema" | "additionalProperties"))
                .map(|(k, v)| (k.clone(), openapi_schema(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(openapi_schema).collect()),
        other => other.clone(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig {
    max_output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_mime_type: Option<&'static str>,
    /// `--schema`, in Gemini's OpenAPI subset.
    #[serde(skip_serializing_if = "Option::is_none")]
    response_schema: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct SystemInstruction<'a> {
    parts: [TextPart<'a>; 1],
}

#[derive(Serialize)]
struct TextPart<'a> {
    text: &'a str,
}

#[derive(Serialize)]
struct WireContent<'a> {
    role: &'static str,
    parts: Vec<WirePart<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WirePart<'a> {
    Text {
        text: Cow<'a, str>,
    },
    #[serde(rename_all = "camelCase")]
    Call {
        function_call: FunctionCall<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    #[serde(rename_all = "camelCase")]
    Response {
        function_response: FunctionResponse<'a>,
    },
    /// An image or PDF: `{"inline_data":{"mime_type","data"}}` (the API takes the snake_case
    /// spelling as well as camelCase).
    Inline {
        inline_data: InlineData<'a>,
    },
}

#[derive(Serialize)]
struct InlineData<'a> {
    mime_type: &'a str,
    data: String,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    name: &'a str,
    args: Value,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    name: &'a str,
    /// Must be an object: the result is wrapped.
    response: ResultObject<'a>,
}

#[derive(Serialize)]
struct ResultObject<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

fn contents<'a>(req: &Request<'a>) -> Vec<WireContent<'a>> {
    req.messages
        .iter()
        .map(|m| {
            let mut parts = Vec::new();
            for r in m.tool_results() {
                parts.push(WirePart::Response {
                    function_response: FunctionResponse {
                        name: &r.name,
                        response: ResultObject {
                            result: (!r.is_error).then_some(r.content.as_str()),
                            error: r.is_error.then_some(r.content.as_str()),
                        },
                    },
                });
            }
            for a in m.attachments() {
                parts.push(WirePart::Inline {
                    inline_data: InlineData {
                        mime_type: &a.media_type,
                        data: a.base64(),
                    },
                });
            }
            let text = m.plain_text();
            if !text.is_empty() || m.parts.is_empty() {
                parts.push(WirePart::Text { text });
            }
            for c in m.tool_calls() {
                parts.push(WirePart::Call {
                    function_call: FunctionCall {
                        name: &c.name,
                        args: super::arguments_object(&c.arguments),
                    },
                    thought_signature: c.signature.as_deref(),
                });
            }
            WireContent {
                role: match m.role {
                    Role::User => "user",
                    Role::Assistant => "model",
                },
                parts,
            }
        })
        .collect()
}

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let body = Body {
        contents: contents(req),
        generation_config: GenerationConfig {
            max_output_tokens: p.max_tokens,
            response_mime_type: (req.modes.json || req.schema.is_some())
                .then_some("application/json"),
            response_schema: req.schema.map(crate::backend::shape::gemini),
        },
        system_instruction: req.system.map(|s| SystemInstruction {
            parts: [TextPart { text: s }],
        }),
        tools: if req.tools.is_empty() {
            Vec::new()
        } else {
            vec![WireTools {
                function_declarations: req
                    .tools
                    .iter()
                    .map(|d| Declaration {
                        name: &d.name,
                        description: &d.description,
                        parameters: openapi_schema(&d.parameters),
                    })
                    .collect(),
            }]
        },
    };
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
    Built {
        url,
        headers,
        body: super::encode(&body, req),
    }
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
    error: Option<ErrorBody>,
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
#[serde(rename_all = "camelCase")]
struct Part {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    #[serde(default)]
    function_call: Option<WireCall>,
    /// Kept and sent back with the call (Gemini 3 refuses a follow-up without it).
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
struct WireCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    args: Option<Value>,
}

/// The calls of a response, whole (Gemini never splits one).
fn calls_of(r: &mut Response) -> Vec<CallPart> {
    r.candidates
        .iter_mut()
        .filter_map(|c| c.content.as_mut())
        .flat_map(|c| c.parts.iter_mut())
        .filter_map(|p| {
            let call = p.function_call.take()?;
            Some(CallPart {
                index: None,
                id: call.id,
                name: call.name,
                arguments: call.args.map(|a| a.to_string()),
                signature: p.thought_signature.take(),
            })
        })
        .collect()
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
    let mut r: Response = serde_json::from_str(data)
        .map_err(|e| format!("a stream event is not valid JSON ({e})"))?;
    if let Some(err) = &r.error {
        out.push(Piece::Fail(err.clone()));
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
    out.extend(calls_of(&mut r).into_iter().map(Piece::Call));
    if let Some(u) = r.usage_metadata {
        out.push(Piece::Usage(Usage {
            input: u.prompt_token_count,
            output: u.candidates_token_count,
            cost_usd: None,
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

pub(crate) fn whole(body: &[u8]) -> Result<super::Whole, Bad> {
    let mut r: Response = serde_json::from_slice(body)
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
        cost_usd: None,
    });
    let cut = r
        .candidates
        .iter()
        .any(|c| c.finish_reason.as_deref() == Some("MAX_TOKENS"));
    let calls = calls_of(&mut r);
    Ok((text_of(&r), usage, cut, calls))
}
