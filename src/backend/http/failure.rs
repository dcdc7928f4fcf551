//! Why an HTTP call failed, whether to try again, and the one clear error for it.

use std::time::Duration;

use rand::Rng;
use serde::Deserialize;
use serde_json::Value;

use super::bedrock;
use super::provider::{Protocol, Resolved};
use crate::error::Error;

/// The useful parts of any provider's error body. Deserializes from any protocol's `error`
/// value, so typed frames can hold one directly (`error: Option<ErrorBody>`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(from = "Frame")]
pub(crate) struct ErrorBody {
    pub(crate) message: String,
    /// `type`, `status` or `code`, as text.
    pub(crate) code: String,
    /// Gemini's `RetryInfo.retryDelay`.
    pub(crate) retry_delay: Option<Duration>,
}

/// An `error` value, in the shapes the protocols send:
/// - OpenAI: `{"message", "type", "param", "code"}` (`code` a string or a number);
/// - Anthropic: `{"type", "message"}`;
/// - Gemini: `{"code": 429, "message", "status", "details": [{"@type", "retryDelay", "reason"}]}`;
/// - Ollama: a plain string.
#[derive(Deserialize)]
#[serde(untagged)]
enum Frame {
    Text(String),
    Object(ErrorObject),
    /// Anything else (a number, a list) is shown as it came.
    Other(Value),
}

#[derive(Deserialize)]
struct ErrorObject {
    #[serde(default)]
    message: Loose<Scalar>,
    #[serde(default, rename = "type")]
    kind: Loose<Scalar>,
    #[serde(default)]
    status: Loose<Scalar>,
    #[serde(default)]
    code: Loose<Scalar>,
    #[serde(default)]
    details: Loose<Vec<Loose<Detail>>>,
}

/// One entry of Gemini's `details`.
#[derive(Deserialize)]
struct Detail {
    #[serde(default, rename = "retryDelay")]
    retry_delay: Loose<String>,
    #[serde(default)]
    reason: Loose<String>,
}

/// A field shown as text: a string, or a number written as JSON writes it.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Number(serde_json::Number),
}

impl Scalar {
    fn text(self) -> String {
        match self {
            Scalar::Text(s) => s,
            Scalar::Number(n) => n.to_string(),
        }
    }
}

/// A field that is ignored when it has another shape than expected: an error body is read to
/// tell the user what went wrong, so one odd field must not hide the rest.
#[derive(Deserialize)]
#[serde(untagged)]
enum Loose<T> {
    Is(T),
    Not(serde::de::IgnoredAny),
}

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose::Not(serde::de::IgnoredAny)
    }
}

impl<T> Loose<T> {
    fn get(self) -> Option<T> {
        match self {
            Loose::Is(v) => Some(v),
            Loose::Not(_) => None,
        }
    }
}

impl From<Frame> for ErrorBody {
    fn from(frame: Frame) -> ErrorBody {
        match frame {
            Frame::Text(message) => ErrorBody {
                message,
                ..ErrorBody::default()
            },
            Frame::Object(o) => {
                let mut code: Vec<String> = [o.kind, o.status, o.code]
                    .into_iter()
                    .filter_map(|f| f.get().map(Scalar::text))
                    .collect();
                let mut retry_delay = None;
                for d in o.details.get().unwrap_or_default() {
                    let Some(d) = d.get() else { continue };
                    if let Some(delay) = d.retry_delay.get() {
                        retry_delay = parse_seconds(&delay);
                    }
                    if let Some(reason) = d.reason.get() {
                        code.push(reason);
                    }
                }
                ErrorBody {
                    message: o.message.get().map(Scalar::text).unwrap_or_default(),
                    code: code.join(" "),
                    retry_delay,
                }
            }
            Frame::Other(v) => ErrorBody {
                message: v.to_string(),
                ..ErrorBody::default()
            },
        }
    }
}

/// A whole error response: `{"error": …}` (everyone), or the error object alone.
#[derive(Deserialize)]
struct Envelope {
    error: ErrorBody,
}

impl ErrorBody {
    /// An error response body of any shape (JSON or not).
    pub(crate) fn parse(body: &str) -> ErrorBody {
        if let Ok(e) = serde_json::from_str::<Envelope>(body) {
            return e.error;
        }
        if let Ok(e) = serde_json::from_str::<ErrorBody>(body) {
            return e;
        }
        let t = body.trim();
        let cut = t.char_indices().nth(300).map_or(t.len(), |(i, _)| i);
        ErrorBody {
            message: t[..cut].to_owned(),
            ..ErrorBody::default()
        }
    }
}

/// Why a whole (non-streamed) reply could not be used.
#[derive(Debug)]
pub(crate) enum Bad {
    /// Not the shape this protocol promises.
    Invalid(String),
    /// The provider said no, in a 200 reply (an error body, a blocked prompt).
    Provider(ErrorBody),
}

/// A prompt refused by the provider's safety filter.
pub(crate) fn blocked(reason: &str) -> ErrorBody {
    ErrorBody {
        message: format!("the prompt was blocked ({reason})"),
        code: "blocked".into(),
        retry_delay: None,
    }
}

/// `"30s"`, `"1.5s"` → a duration.
fn parse_seconds(text: &str) -> Option<Duration> {
    let secs: f64 = text.trim().trim_end_matches('s').parse().ok()?;
    Duration::try_from_secs_f64(secs).ok()
}

/// Why an attempt failed, before any text was printed.
pub(crate) enum Failure {
    Transport(ureq::Error),
    Io(std::io::Error),
    Status {
        status: u16,
        headers: ureq::http::HeaderMap,
        body: ErrorBody,
    },
    InStream(ErrorBody),
    /// The stream ended early, with nothing printed.
    Cut(Error),
    /// Not worth retrying.
    Final(Error),
}

impl Failure {
    /// How long to wait before the next attempt, or `None` when it must not be retried.
    pub(crate) fn retry_delay(&self, attempt: u32) -> Option<Duration> {
        let backoff = || {
            let base = 0.5 * 2f64.powi(attempt as i32);
            let jitter = rand::rng().random_range(0.75..1.25);
            Duration::from_secs_f64((base * jitter).min(8.0))
        };
        match self {
            Failure::Transport(e) => match e {
                ureq::Error::ConnectionFailed | ureq::Error::Io(_) => Some(backoff()),
                ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve) => {
                    Some(backoff())
                }
                _ => None,
            },
            Failure::Io(_) | Failure::Cut(_) => Some(backoff()),
            // An error event before any text is the server's trouble unless it says the request
            // itself is wrong (PROTOCOLS.md: treat them as retryable).
            Failure::InStream(body) => (!client_error(body)).then(backoff),
            Failure::Status {
                status,
                headers,
                body,
            } => {
                let header = |k: &str| {
                    headers
                        .get(k)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                if bedrock::final_error(body) {
                    return None;
                }
                match header("x-should-retry").as_deref() {
                    Some("false") => return None,
                    Some("true") => {}
                    _ => {
                        let retryable = matches!(status, 408 | 409 | 429 | 529)
                            || *status >= 500
                            || bedrock::retryable(body);
                        if !retryable || quota(*status, body) {
                            return None;
                        }
                    }
                }
                match self.asked_wait() {
                    // Honour what the server asks, up to a minute; longer is not worth waiting.
                    Some(d) if d <= Duration::from_secs(60) => Some(d),
                    Some(_) => None,
                    None => Some(backoff()),
                }
            }
            Failure::Final(_) => None,
        }
    }

    /// How long the server asked us to wait (`Retry-After`, `retry-after-ms`, Gemini's
    /// `retryDelay`), however long that is.
    pub(crate) fn asked_wait(&self) -> Option<Duration> {
        let Failure::Status { headers, body, .. } = self else {
            return None;
        };
        asked_wait(headers, body)
    }

    /// The error when the next try would start after the deadline (`limit` names it).
    pub(crate) fn beyond(self, p: &Resolved, model: &str, limit: &str) -> Error {
        let asked = self.asked_wait();
        let hint = match asked {
            Some(d) => format!(
                "the server asks to wait {}; that is beyond {limit} ({})",
                wait_text(d),
                crate::fmt::human_duration(p.timeout)
            ),
            None => format!(
                "no time is left for another try within {limit} ({}); allow longer with --timeout SECS",
                crate::fmt::human_duration(p.timeout)
            ),
        };
        self.into_error(p, model).hint(hint)
    }

    /// The notice before a retry, redacted: the error text comes from the server, which may
    /// echo the key.
    pub(crate) fn retry_notice(&self, p: &Resolved, attempt: u32, delay: Duration) -> String {
        p.redact(&format!(
            "ai: {} {}; retrying in {:.1}s ({attempt}/{})",
            p.name,
            self.short(),
            delay.as_secs_f64(),
            p.retries
        ))
    }

    pub(crate) fn short(&self) -> String {
        match self {
            Failure::Transport(e) => format!("could not be reached ({e})"),
            Failure::Io(e) => format!("connection failed ({e})"),
            Failure::Status { status, .. } => format!("answered {status}"),
            Failure::InStream(b) => format!("reported an error ({})", b.message),
            Failure::Cut(_) => "cut the reply short".to_owned(),
            Failure::Final(e) => e.to_string(),
        }
    }

    pub(crate) fn into_error(self, p: &Resolved, model: &str) -> Error {
        let e = match self {
            Failure::Transport(e) => transport_error(p, e),
            Failure::Io(e) if is_timeout(&e) => timeout_error(p),
            Failure::Io(e) => Error::backend(format!("the connection to {} failed: {e}", p.name))
                .hint(format!(
                    "check the network and the base URL ({})",
                    p.base_from
                )),
            Failure::Status {
                status,
                headers,
                body,
            } => {
                let asked = asked_wait(&headers, &body);
                status_error(p, model, status, &body, asked)
            }
            Failure::InStream(body) => {
                let msg = crate::fmt::one_line(&body.message, 300);
                let bedrock = (p.protocol == Protocol::Bedrock)
                    .then(|| {
                        let detail = format!("{}: {msg}", body.code);
                        bedrock::explain(p, model, &body, &detail)
                    })
                    .flatten();
                if let Some(e) = bedrock {
                    e
                } else if body.code == "blocked" {
                    Error::backend(format!("{}: {msg}", p.name))
                        .hint("the provider's safety filter refused it; rephrase the prompt")
                } else if overloaded(&body) {
                    Error::backend(format!("{} is overloaded: {msg}", p.name))
                        .hint("try again shortly")
                } else {
                    Error::backend(format!("{} reported an error: {msg}", p.name))
                        .hint("`ai --dry-run …` prints the request that was sent")
                }
            }
            Failure::Cut(e) | Failure::Final(e) => e,
        };
        redact_error(e, p)
    }
}

/// An error about the request itself: resending it cannot help.
fn client_error(body: &ErrorBody) -> bool {
    let c = body.code.to_lowercase();
    [
        "invalid_request",
        "authentication",
        "permission",
        "not_found",
        "blocked",
        "invalid_argument",
    ]
    .iter()
    .any(|k| c.contains(k))
        || quota(200, body)
        || bedrock::final_error(body)
}

fn overloaded(body: &ErrorBody) -> bool {
    let c = body.code.to_lowercase();
    c.contains("overloaded")
        || c.contains("unavailable")
        || body.message.to_lowercase().contains("overloaded")
}

fn quota(status: u16, body: &ErrorBody) -> bool {
    let text = format!("{} {}", body.code, body.message).to_lowercase();
    status == 402
        || text.contains("insufficient_quota")
        || text.contains("billing")
        || text.contains("credit")
}

fn asked_wait(headers: &ureq::http::HeaderMap, body: &ErrorBody) -> Option<Duration> {
    let header = |k: &str| headers.get(k).and_then(|v| v.to_str().ok());
    header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .or_else(|| header("retry-after").and_then(retry_after))
        .or(body.retry_delay)
}

/// A wait as a person says it: `40 s`, `5 min`, `1 h`.
fn wait_text(d: Duration) -> String {
    let secs = d.as_secs_f64().round() as u64;
    if secs < 120 {
        format!("{secs} s")
    } else if secs < 2 * 3600 && !secs.is_multiple_of(3600) {
        format!("{} min", (secs + 30) / 60)
    } else {
        format!("{} h", (secs + 1800) / 3600)
    }
}

/// `Retry-After`: seconds, or an HTTP date.
fn retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let wait = when.signed_duration_since(chrono::Utc::now());
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

fn transport_error(p: &Resolved, e: ureq::Error) -> Error {
    let base = &p.base_url;
    match e {
        ureq::Error::ConnectionFailed => {
            Error::backend(format!("cannot connect to {base}: connection refused")).hint(format!(
                "is the server running? The base URL comes from {}",
                p.base_from
            ))
        }
        ureq::Error::HostNotFound => Error::backend(format!("cannot find the host of {base}"))
            .hint(format!(
                "check the base URL (from {}) and the network",
                p.base_from
            )),
        ureq::Error::Timeout(_) => timeout_error(p),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            Error::backend(format!("cannot connect to {base}: connection refused")).hint(format!(
                "is the server running? The base URL comes from {}",
                p.base_from
            ))
        }
        other => Error::backend(format!("the request to {} failed: {other}", p.name)).hint(
            format!("check the network and the base URL ({})", p.base_from),
        ),
    }
}

fn timeout_error(p: &Resolved) -> Error {
    Error::backend(format!(
        "no answer from {} within {}",
        p.name,
        crate::fmt::human_duration(p.timeout)
    ))
    .hint("allow longer with --timeout SECS, or \"timeout\" in config.json")
}

/// A timeout while the body is read reaches us as an `io::Error` wrapping ureq's own error.
pub(crate) fn is_timeout(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::TimedOut
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ureq::Error>())
            .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)))
}

fn status_error(
    p: &Resolved,
    model: &str,
    status: u16,
    body: &ErrorBody,
    asked: Option<Duration>,
) -> Error {
    let name = &p.name;
    let msg = crate::fmt::one_line(&body.message, 300);
    let detail = if msg.is_empty() {
        format!("{status}")
    } else {
        format!("{status}: {msg}")
    };
    if p.protocol == Protocol::Bedrock
        && let Some(e) = bedrock::explain(p, model, body, &detail)
    {
        return e;
    }
    let lower = format!("{} {}", body.code, body.message).to_lowercase();
    let key_problem = status == 401
        || status == 403
        || (status == 400 && (lower.contains("api_key_invalid") || lower.contains("api key")));
    if key_problem && p.key.is_none() && p.aws.is_some() {
        return Error::config(format!("{name} rejected the AWS credentials ({detail})")).hint(
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones) to valid credentials",
        );
    }
    if key_problem {
        return Error::config(format!("{name} rejected the API key ({detail})"))
            .hint(format!("set {} to a valid key", p.key_var));
    }
    if quota(status, body) {
        return Error::backend(format!("{name}: quota or credits used up ({detail})"))
            .hint(format!("check the plan and billing of your {name} account"));
    }
    if status == 404 {
        return Error::not_found(format!("{name} does not know the model '{model}' ({detail})")).hint(format!(
            "check the model name (`ai list` shows aliases); if it is right, check the base URL ({})",
            p.base_from
        ));
    }
    let too_long = [
        "context length",
        "context window",
        "maximum context",
        "too long",
        "too many tokens",
        "context_length",
    ];
    if matches!(status, 400 | 413) && too_long.iter().any(|t| lower.contains(t)) {
        return Error::backend(format!(
            "the conversation is too long for {model} ({detail})"
        ))
        .hint("lower \"chat.window_tokens\" in config.json, or start a new chat");
    }
    // A wait longer than a minute is not taken (failure.rs): say how long the server asked.
    let long_wait = asked
        .filter(|d| *d > Duration::from_secs(60))
        .map(|d| format!("the server asks to wait {}; try again then", wait_text(d)));
    if status == 429 {
        let setting = format!(
            "set \"max_requests_per_minute\" under \"providers\".\"{name}\" in config.json"
        );
        return Error::backend(format!("{name} is rate limiting these requests ({detail})")).hint(
            match long_wait {
                Some(wait) => format!("{wait}, and {setting} to stay under the limit"),
                None => format!("wait a little, or {setting}"),
            },
        );
    }
    if status == 408 {
        return Error::backend(format!(
            "{name} timed out waiting for the request ({detail})"
        ))
        .hint("try again; a slow network or a large prompt can cause it");
    }
    if status == 529 || status == 503 || overloaded(body) {
        return Error::backend(format!("{name} is overloaded ({detail})"))
            .hint(long_wait.unwrap_or_else(|| "try again shortly".to_owned()));
    }
    if status >= 500 {
        return Error::backend(format!("{name} had a server error ({detail})"))
            .hint("try again shortly");
    }
    Error::backend(format!("{name} refused the request ({detail})"))
        .hint("`ai --dry-run …` prints the request that was sent")
}

/// Make sure no error text carries the key (a server may echo it).
fn redact_error(e: Error, p: &Resolved) -> Error {
    let clean = |s: String| p.redact(&s);
    match e {
        Error::Usage { msg, hint } => Error::Usage {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::Config { msg, hint } => Error::Config {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::NotFound { msg, hint } => Error::NotFound {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::Backend { msg, hint } => Error::Backend {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        Error::Busy { msg, hint } => Error::Busy {
            msg: clean(msg),
            hint: hint.map(clean),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies() {
        let b = ErrorBody::parse(
            r#"{"error":{"message":"nope","type":"invalid_request_error","param":null,"code":"insufficient_quota"}}"#,
        );
        assert_eq!(b.message, "nope");
        assert!(quota(429, &b));
        let g = ErrorBody::parse(
            r#"{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}"#,
        );
        assert_eq!(g.retry_delay, Some(Duration::from_secs(30)));
        assert_eq!(
            ErrorBody::parse(r#"{"error":"model \"x\" not found"}"#).message,
            "model \"x\" not found"
        );
        assert_eq!(
            ErrorBody::parse("<html>bad gateway</html>").message,
            "<html>bad gateway</html>"
        );
        let a = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert!(overloaded(&a));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon"), None);
    }
}

#[cfg(test)]
mod frame_tests {
    use super::*;

    #[test]
    fn typed_frames_keep_every_field() {
        let o = ErrorBody::parse(
            r#"{"error":{"message":"m","type":"invalid_request_error","code":404}}"#,
        );
        assert_eq!(
            (o.message.as_str(), o.code.as_str()),
            ("m", "invalid_request_error 404")
        );
        let g = ErrorBody::parse(
            r#"{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED","details":[7,{"reason":"RATE_LIMIT_EXCEEDED"},{"retryDelay":"1.5s"}]}}"#,
        );
        assert_eq!(g.code, "RESOURCE_EXHAUSTED 429 RATE_LIMIT_EXCEEDED");
        assert_eq!(g.retry_delay, Some(Duration::from_millis(1500)));
        // Odd shapes of single fields do not hide the rest.
        let odd =
            ErrorBody::parse(r#"{"error":{"message":"still here","details":"none","code":[1]}}"#);
        assert_eq!(
            (odd.message.as_str(), odd.code.as_str()),
            ("still here", "")
        );
        assert_eq!(
            ErrorBody::deserialize(serde_json::json!(5))
                .unwrap()
                .message,
            "5"
        );
        assert_eq!(
            ErrorBody::deserialize(serde_json::json!("gone"))
                .unwrap()
                .message,
            "gone"
        );
        let bare = ErrorBody::parse(r#"{"type":"overloaded_error","message":"busy"}"#);
        assert_eq!(
            (bare.message.as_str(), bare.code.as_str()),
            ("busy", "overloaded_error")
        );
    }
}
