//! Amazon Bedrock's Converse API: `POST /model/{modelId}/converse-stream` (an AWS event
//! stream, see `eventstream.rs`) or `/converse` (one JSON body). Auth is a Bedrock API key sent
//! as a bearer token, or AWS credentials signed with SigV4 (`sigv4.rs`) on every attempt.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::calls::CallPart;
use super::eventstream;
use super::provider::Resolved;
use super::{Bad, Built, ErrorBody, Piece};
use crate::backend::Request;
use crate::chat::record::Usage;
use crate::conversation::Role;
use crate::error::Error;

/// The SigV4 service name of the Bedrock runtime.
pub(crate) const SERVICE: &str = "bedrock";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    messages: Vec<ReqMsg<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock>,
    inference_config: InferenceConfig,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<ToolConfig<'a>>,
}

/// `toolConfig`: the tools the model may call.
#[derive(Serialize)]
struct ToolConfig<'a> {
    tools: Vec<WireTool<'a>>,
    /// `--schema`: `{"tool": {"name"}}`, the reply tool forced.
    #[serde(rename = "toolChoice", skip_serializing_if = "Option::is_none")]
    tool_choice: Option<serde_json::Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireTool<'a> {
    tool_spec: ToolSpec<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolSpec<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: InputSchema<'a>,
}

#[derive(Serialize)]
struct InputSchema<'a> {
    json: &'a Value,
}

#[derive(Serialize)]
struct SystemBlock {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InferenceConfig {
    max_tokens: u64,
}

#[derive(Serialize)]
struct ReqMsg<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

/// A content block: exactly one of its keys.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Block<'a> {
    Text(std::borrow::Cow<'a, str>),
    ToolUse(ToolUse<'a>),
    ToolResult(ToolResult<'a>),
    /// `{"image":{"format":"png","source":{"bytes":"<base64>"}}}`.
    Image(Media),
    /// A PDF: `{"document":{"format":"pdf","name","source":{"bytes"}}}`.
    Document(Media),
}

#[derive(Serialize)]
struct Media {
    format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    source: MediaBytes,
}

#[derive(Serialize)]
struct MediaBytes {
    bytes: String,
}

/// A document's name as Converse allows it: letters, digits, single spaces, `-`, `(`, `)`,
/// `[`, `]` (it is a prompt-injection vector, AWS notes, so kept plain).
fn document_name(file: &str) -> String {
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    let mut out = String::new();
    for c in stem.chars() {
        let c = if c.is_ascii_alphanumeric() || "-()[]".contains(c) {
            c
        } else {
            ' '
        };
        if !(c == ' ' && (out.is_empty() || out.ends_with(' '))) {
            out.push(c);
        }
    }
    let out = out.trim_end().chars().take(100).collect::<String>();
    if out.is_empty() {
        "document".to_owned()
    } else {
        out
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolUse<'a> {
    tool_use_id: &'a str,
    name: &'a str,
    /// An object (the model's JSON text, parsed).
    input: Value,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolResult<'a> {
    tool_use_id: &'a str,
    content: Vec<ResultText<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
}

#[derive(Serialize)]
struct ResultText<'a> {
    text: &'a str,
}

fn messages<'a>(req: &Request<'a>) -> Vec<ReqMsg<'a>> {
    req.messages
        .iter()
        .map(|m| {
            let mut content = Vec::new();
            // Tool results first in their message, as with Anthropic's models behind it.
            for r in m.tool_results() {
                content.push(Block::ToolResult(ToolResult {
                    tool_use_id: &r.call_id,
                    content: vec![ResultText { text: &r.content }],
                    status: r.is_error.then_some("error"),
                }));
            }
            for a in m.attachments() {
                let format = match a.media_type.as_str() {
                    "image/png" => "png",
                    "image/jpeg" => "jpeg",
                    "image/gif" => "gif",
                    "image/webp" => "webp",
                    _ => "pdf",
                };
                let source = MediaBytes { bytes: a.base64() };
                content.push(if a.is_image() {
                    Block::Image(Media {
                        format,
                        name: None,
                        source,
                    })
                } else {
                    Block::Document(Media {
                        format,
                        name: Some(document_name(a.file_name())),
                        source,
                    })
                });
            }
            let text = m.plain_text();
            if !text.is_empty() {
                content.push(Block::Text(text));
            }
            for c in m.tool_calls() {
                content.push(Block::ToolUse(ToolUse {
                    tool_use_id: &c.id,
                    name: &c.name,
                    input: super::arguments_object(&c.arguments),
                }));
            }
            ReqMsg {
                role: match m.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                },
                content,
            }
        })
        .collect()
}

pub(crate) fn request(p: &Resolved, req: &Request<'_>, stream: bool) -> Built {
    let mut system = req.system.map(str::to_owned);
    if req.modes.json {
        let ask = "Answer with one valid JSON value and nothing else.";
        system = Some(match system {
            Some(s) => format!("{s}\n\n{ask}"),
            None => ask.to_owned(),
        });
    }
    let body = Body {
        messages: messages(req),
        system: system
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(|text| SystemBlock { text })
            .collect(),
        inference_config: InferenceConfig {
            max_tokens: p.max_tokens,
        },
        tool_config: (!req.tools.is_empty() || req.schema.is_some()).then(|| ToolConfig {
            tools: req
                .tools
                .iter()
                .map(|d| WireTool {
                    tool_spec: ToolSpec {
                        name: &d.name,
                        description: &d.description,
                        input_schema: InputSchema {
                            json: &d.parameters,
                        },
                    },
                })
                .chain(req.schema.map(|schema| WireTool {
                    tool_spec: ToolSpec {
                        name: crate::backend::shape::TOOL,
                        description: crate::backend::shape::TOOL_DESCRIPTION,
                        input_schema: InputSchema { json: schema },
                    },
                }))
                .collect(),
            tool_choice: req
                .schema
                .map(|_| serde_json::json!({"tool": {"name": crate::backend::shape::TOOL}})),
        }),
    };
    let method = if stream {
        "converse-stream"
    } else {
        "converse"
    };
    let mut headers = Vec::new();
    if let Some(k) = &p.key {
        headers.push(("authorization".to_owned(), format!("Bearer {k}")));
    }
    Built {
        // Strictly encoded: a model ID's `:` becomes `%3A`, as the AWS SDKs send it.
        url: format!(
            "{}/model/{}/{method}",
            p.base_url,
            super::sigv4::uri_encode(&req.route.model)
        ),
        headers,
        body: super::encode(&body, req),
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    start: Option<Start>,
    #[serde(default)]
    content_block_index: Option<u64>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default, alias = "Message")]
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    #[serde(default)]
    text: Option<String>,
    /// A piece of a tool call's input, as JSON text.
    #[serde(default)]
    tool_use: Option<InputPiece>,
}

#[derive(Deserialize)]
struct InputPiece {
    #[serde(default)]
    input: Option<String>,
}

/// `contentBlockStart`: a tool call begins (its input follows in deltas).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start {
    #[serde(default)]
    tool_use: Option<StartToolUse>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartToolUse {
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

/// One message of a ConverseStream reply.
pub(crate) fn event(msg: &eventstream::Message, out: &mut Vec<Piece>) -> Result<(), String> {
    let data = &msg.payload;
    match msg.header(":message-type").unwrap_or("event") {
        "exception" => {
            let ev: Option<Event> = serde_json::from_slice(data).ok();
            out.push(Piece::Fail(ErrorBody {
                message: ev
                    .and_then(|e| e.message)
                    .unwrap_or_else(|| String::from_utf8_lossy(data).into_owned()),
                code: msg.header(":exception-type").unwrap_or("exception").into(),
                retry_delay: None,
            }));
            return Ok(());
        }
        "error" => {
            out.push(Piece::Fail(ErrorBody {
                message: msg.header(":error-message").unwrap_or_default().into(),
                code: msg.header(":error-code").unwrap_or("error").into(),
                retry_delay: None,
            }));
            return Ok(());
        }
        _ => {}
    }
    let kind = msg.header(":event-type").unwrap_or_default();
    if !matches!(
        kind,
        "contentBlockStart" | "contentBlockDelta" | "messageStop" | "metadata"
    ) {
        return Ok(()); // messageStart, contentBlockStop, and whatever is added later
    }
    let ev: Event = serde_json::from_slice(data)
        .map_err(|e| format!("a stream event is not valid JSON ({e})"))?;
    match kind {
        "contentBlockStart" => {
            if let Some(t) = ev.start.and_then(|s| s.tool_use) {
                out.push(Piece::Call(CallPart {
                    index: Some(ev.content_block_index.unwrap_or(0)),
                    id: t.tool_use_id,
                    name: t.name,
                    ..CallPart::default()
                }));
            }
        }
        "contentBlockDelta" => {
            let Some(d) = ev.delta else { return Ok(()) };
            if let Some(t) = d.text.filter(|t| !t.is_empty()) {
                out.push(Piece::Text(t));
            }
            if let Some(input) = d.tool_use.and_then(|t| t.input) {
                out.push(Piece::Call(CallPart {
                    index: Some(ev.content_block_index.unwrap_or(0)),
                    arguments: Some(input),
                    ..CallPart::default()
                }));
            }
        }
        "messageStop" => {
            if ev.stop_reason.as_deref() == Some("max_tokens") {
                out.push(Piece::Truncated);
            }
            out.push(Piece::Done);
        }
        _ => {
            if let Some(u) = ev.usage {
                out.push(Piece::Usage(Usage {
                    input: u.input_tokens,
                    output: u.output_tokens,
                    cost_usd: None,
                }));
            }
        }
    }
    Ok(())
}

/// Text of a `message` with content blocks.
#[derive(Deserialize, Default)]
struct OutMessage {
    #[serde(default)]
    content: Vec<OutBlock>,
}

/// A content block: its text, or a tool call.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct OutBlock {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_use: Option<OutToolUse>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct OutToolUse {
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
}

/// A whole Converse reply: its text, usage, whether it hit the token limit, and its tool calls.
pub(crate) fn whole(body: &[u8]) -> Result<super::Whole, Bad> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Output {
        #[serde(default)]
        message: OutMessage,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Whole {
        output: Option<Output>,
        #[serde(default)]
        stop_reason: Option<String>,
        #[serde(default)]
        usage: Option<WireUsage>,
        #[serde(default, alias = "Message")]
        message: Option<String>,
    }
    let w: Whole = serde_json::from_slice(body)
        .map_err(|e| Bad::Invalid(format!("the response is not valid JSON ({e})")))?;
    let Some(output) = w.output else {
        return match w.message {
            Some(m) => Err(Bad::Provider(ErrorBody {
                message: m,
                ..ErrorBody::default()
            })),
            None => Err(Bad::Invalid("the response has no \"output\"".into())),
        };
    };
    let text: String = output
        .message
        .content
        .iter()
        .filter_map(|b| b.text.as_deref())
        .collect();
    let usage = w.usage.map(|u| Usage {
        input: u.input_tokens,
        output: u.output_tokens,
        cost_usd: None,
    });
    let calls = output
        .message
        .content
        .into_iter()
        .filter_map(|b| b.tool_use)
        .enumerate()
        .map(|(i, t)| CallPart {
            index: Some(i as u64),
            id: t.tool_use_id,
            name: t.name,
            arguments: t.input.map(|v| v.to_string()),
            ..CallPart::default()
        })
        .collect();
    Ok((
        text,
        usage,
        w.stop_reason.as_deref() == Some("max_tokens"),
        calls,
    ))
}

/// An error response: the type from `x-amzn-ErrorType` (`ThrottlingException:http://…`), the
/// message from the body (`{"message"}` or `{"Message"}`).
pub(crate) fn error_body(error_type: Option<&str>, text: &str) -> ErrorBody {
    #[derive(Deserialize)]
    struct Wire {
        #[serde(default, alias = "Message")]
        message: Option<String>,
        #[serde(default, rename = "__type")]
        kind: Option<String>,
    }
    let wire: Option<Wire> = serde_json::from_str(text).ok();
    let mut body = match &wire {
        Some(Wire {
            message: Some(m), ..
        }) => ErrorBody {
            message: m.clone(),
            ..ErrorBody::default()
        },
        _ => ErrorBody::parse(text),
    };
    let kind = error_type
        .map(str::to_owned)
        .or_else(|| wire.and_then(|w| w.kind));
    if let Some(kind) = kind {
        // `ThrottlingException:http://internal…` and `com.amazon…#ThrottlingException`.
        let kind = kind.split(':').next().unwrap_or_default();
        let kind = kind.rsplit('#').next().unwrap_or_default();
        body.code = kind.to_owned();
    }
    body
}

fn is(body: &ErrorBody, name: &str) -> bool {
    body.code
        .to_ascii_lowercase()
        .starts_with(&name.to_ascii_lowercase())
}

/// Whether an error (an HTTP status, or an exception event) is worth another try.
pub(crate) fn retryable(body: &ErrorBody) -> bool {
    [
        "throttlingException",
        "modelTimeoutException",
        "serviceUnavailableException",
        "internalServerException",
        "modelStreamErrorException",
        "modelNotReadyException",
    ]
    .iter()
    .any(|n| is(body, n))
}

/// A client error that no retry can fix.
pub(crate) fn final_error(body: &ErrorBody) -> bool {
    [
        "validationException",
        "accessDeniedException",
        "resourceNotFoundException",
        "unrecognizedClientException",
        "invalidSignatureException",
        "expiredTokenException",
        "serviceQuotaExceededException",
    ]
    .iter()
    .any(|n| is(body, n))
}

/// The error for Bedrock's own error types, with what to do about it; `None` for the rest.
pub(crate) fn explain(p: &Resolved, model: &str, body: &ErrorBody, detail: &str) -> Option<Error> {
    let name = &p.name;
    let region = p.region.as_deref().unwrap_or("its region");
    let creds = if p.key.is_some() {
        "AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key)".to_owned()
    } else {
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)"
            .to_owned()
    };
    let e = if is(body, "accessDeniedException") {
        Error::config(format!("{name} denied access to '{model}' ({detail})")).hint(format!(
            "enable the model under \"Model access\" in the Bedrock console for {region}, and check that the credentials may call bedrock:InvokeModel and bedrock:InvokeModelWithResponseStream"
        ))
    } else if is(body, "unrecognizedClientException")
        || is(body, "invalidSignatureException")
        || is(body, "expiredTokenException")
        || is(body, "signatureDoesNotMatch")
    {
        Error::config(format!("{name} rejected the credentials ({detail})"))
            .hint(format!("set {creds} to valid ones"))
    } else if is(body, "validationException") {
        Error::backend(format!("{name} refused the request for '{model}' ({detail})")).hint(format!(
            "check the model ID and the region ({region}); some models are only called through an inference profile (`bedrock:us.{model}`); `ai --dry-run …` prints the request"
        ))
    } else if is(body, "resourceNotFoundException") {
        Error::not_found(format!(
            "{name} does not know the model '{model}' ({detail})"
        ))
        .hint(format!(
            "check the model ID, and that the model is offered in {region}"
        ))
    } else if is(body, "throttlingException") || is(body, "serviceQuotaExceededException") {
        Error::backend(format!("{name} is throttling these requests ({detail})")).hint(format!(
            "wait a little, or set \"max_requests_per_minute\" under \"providers\".\"{name}\" in config.json"
        ))
    } else if is(body, "modelTimeoutException") {
        Error::backend(format!("{model} on {name} took too long ({detail})"))
            .hint("try again, or ask for a shorter answer")
    } else {
        return None;
    };
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use eventstream::frame;

    fn ev(kind: &str, json: &str) -> eventstream::Message {
        eventstream::Reader::new(
            &frame(
                &[
                    (":event-type", kind),
                    (":content-type", "application/json"),
                    (":message-type", "event"),
                ],
                json.as_bytes(),
            )[..],
        )
        .next_message()
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_stream_of_events() {
        let mut out = Vec::new();
        for (k, j) in [
            ("messageStart", r#"{"role":"assistant"}"#),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#,
            ),
            ("contentBlockStop", r#"{"contentBlockIndex":0}"#),
            ("messageStop", r#"{"stopReason":"max_tokens"}"#),
            (
                "metadata",
                r#"{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"metrics":{"latencyMs":1}}"#,
            ),
        ] {
            event(&ev(k, j), &mut out).unwrap();
        }
        assert!(matches!(&out[0], Piece::Text(t) if t == "Hi"));
        assert!(matches!(out[1], Piece::Truncated));
        assert!(matches!(out[2], Piece::Done));
        assert!(matches!(
            out[3],
            Piece::Usage(Usage {
                input: Some(3),
                output: Some(4),
                cost_usd: None
            })
        ));
    }

    #[test]
    fn exceptions_and_error_bodies() {
        let m = eventstream::Reader::new(
            &frame(
                &[
                    (":exception-type", "throttlingException"),
                    (":message-type", "exception"),
                ],
                br#"{"message":"slow down"}"#,
            )[..],
        )
        .next_message()
        .unwrap()
        .unwrap();
        let mut out = Vec::new();
        event(&m, &mut out).unwrap();
        let Piece::Fail(b) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(
            (b.message.as_str(), b.code.as_str()),
            ("slow down", "throttlingException")
        );
        assert!(retryable(b));
        let b = error_body(
            Some("ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
            r#"{"message":"bad model"}"#,
        );
        assert_eq!(
            (b.message.as_str(), b.code.as_str()),
            ("bad model", "ValidationException")
        );
        assert!(final_error(&b) && !retryable(&b));
        let b = error_body(
            None,
            r#"{"__type":"com.amazon#AccessDeniedException","Message":"no"}"#,
        );
        assert_eq!(
            (b.message.as_str(), b.code.as_str()),
            ("no", "AccessDeniedException")
        );
    }

    #[test]
    fn tool_calls_and_results_are_rendered() {
        use crate::conversation::{Message, Part, ToolCall, ToolResult};
        let route = crate::alias::Route {
            label: "bedrock:m".into(),
            provider: crate::alias::Provider::Http("bedrock".into()),
            model: "m".into(),
            effort: None,
        };
        let msgs = vec![
            Message::text(Role::User, "weather?"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text("checking".into()),
                    Part::ToolCall(ToolCall {
                        id: "tooluse_1".into(),
                        name: "weather".into(),
                        arguments: r#"{"city":"Paris"}"#.into(),
                        signature: None,
                    }),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "tooluse_1".into(),
                    name: "weather".into(),
                    content: "no network".into(),
                    is_error: true,
                })],
            },
        ];
        let req = Request {
            route: &route,
            system: None,
            messages: &msgs,
            modes: Default::default(),
            timeout: std::time::Duration::from_secs(1),
            timeout_given: false,
            no_wait: false,
            tools: &[],
            schema: None,
        };
        let v = serde_json::to_value(messages(&req)).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                {"role": "user", "content": [{"text": "weather?"}]},
                {"role": "assistant", "content": [
                    {"text": "checking"},
                    {"toolUse": {"toolUseId": "tooluse_1", "name": "weather", "input": {"city": "Paris"}}}
                ]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "no network"}], "status": "error"}}
                ]}
            ])
        );
    }

    #[test]
    fn whole_reply() {
        let (text, usage, cut, calls) = whole(br#"{"output":{"message":{"role":"assistant","content":[{"text":"a"},{"text":"b"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":2}}"#).unwrap();
        assert_eq!(text, "ab");
        assert_eq!(usage.unwrap().output, Some(2));
        assert!(!cut);
        assert!(calls.is_empty());
    }

    #[test]
    fn whole_reply_with_a_tool_use() {
        let (text, _, _, calls) = whole(br#"{"output":{"message":{"role":"assistant","content":[{"text":"checking"},{"toolUse":{"toolUseId":"t1","name":"weather","input":{"city":"Paris"}}}]}},"stopReason":"tool_use"}"#).unwrap();
        assert_eq!(text, "checking");
        assert_eq!(calls[0].id.as_deref(), Some("t1"));
        assert_eq!(calls[0].name.as_deref(), Some("weather"));
        assert_eq!(calls[0].arguments.as_deref(), Some(r#"{"city":"Paris"}"#));
    }

    #[test]
    fn streamed_tool_use_pieces() {
        let mut out = Vec::new();
        for (kind, json) in [
            (
                "contentBlockStart",
                r#"{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t9","name":"f"}}}"#,
            ),
            (
                "contentBlockDelta",
                r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"a\":1}"}}}"#,
            ),
        ] {
            event(&ev(kind, json), &mut out).unwrap();
        }
        let mut asm = super::super::calls::Assembler::default();
        for p in out {
            if let Piece::Call(c) = p {
                asm.add(c).unwrap();
            }
        }
        let calls = asm.finish();
        assert_eq!(calls.len(), 1);
        assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("t9", "f"));
        assert_eq!(calls[0].arguments, r#"{"a":1}"#);
    }
}
