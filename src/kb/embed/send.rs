//! One embedding request on a worker thread: sent with retries (429, 5xx, a dropped
//! connection) within its deadline, the reply read (bounded; not HTML, not compressed), parsed
//! and checked, and every failure turned into one clear error that names the provider.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::wire::{self, Shape, Wire};
use crate::backend::http::failure::Failure;
use crate::backend::http::provider::Resolved;
use crate::backend::http::{Bad, Built, ErrorBody, reply};
use crate::error::{Error, Result};
use crate::output::Ui;
use crate::signal;

/// The most of a reply that is read: 256 inputs of 3072 numbers at ~20 bytes each is ~16 MB.
const MAX_BODY: u64 = 128 * 1024 * 1024;

/// One request, with everything the worker thread needs.
pub(super) struct Job {
    pub(super) p: Arc<Resolved>,
    pub(super) agent: ureq::Agent,
    pub(super) built: Built,
    pub(super) deadline: Instant,
    pub(super) wire: Wire,
    pub(super) model: String,
    pub(super) want: usize,
    pub(super) dimensions: Option<u32>,
    /// What the deadline is called in messages.
    pub(super) limit: &'static str,
    pub(super) ui: Ui,
}

impl Job {
    /// The request with retries, then the vectors. Every attempt gets the time left; no wait
    /// may pass the deadline.
    pub(super) fn run(&self) -> Result<Vec<Vec<f32>>> {
        let p = &*self.p;
        let mut attempt = 0u32;
        loop {
            let failure = match self.attempt() {
                Ok(vectors) => return Ok(vectors),
                Err(f) => *f,
            };
            let Some(delay) = failure.retry_delay(attempt).filter(|_| attempt < p.retries) else {
                return Err(self.error(failure));
            };
            let left = self.deadline.saturating_duration_since(Instant::now());
            if delay >= left {
                return Err(failure.beyond(p, &self.model, self.limit));
            }
            attempt += 1;
            if signal::interrupted() {
                return Err(Error::Interrupted);
            }
            self.ui.notice(&failure.retry_notice(p, attempt, delay));
            std::thread::sleep(delay);
        }
    }

    fn attempt(&self) -> Result<Vec<Vec<f32>>, Box<Failure>> {
        let p = &*self.p;
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Box::new(Failure::Transport(ureq::Error::Timeout(
                ureq::Timeout::Global,
            ))));
        }
        let mut request = self
            .agent
            .post(&self.built.url)
            .config()
            .timeout_global(Some(left))
            .timeout_connect(Some(Duration::from_secs(15).min(left)))
            .build()
            .header("content-type", "application/json");
        for (k, v) in &self.built.headers {
            request = request.header(k, v);
        }
        let resp = request
            .send(&self.built.body[..])
            .map_err(|e| Box::new(Failure::Transport(e)))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let mut body = Vec::new();
        let read = std::io::Read::read_to_end(
            &mut std::io::Read::take(resp.into_body().into_reader(), MAX_BODY + 1),
            &mut body,
        );
        if status >= 400 {
            let text = String::from_utf8_lossy(&body[..body.len().min(256 * 1024)]);
            return Err(Box::new(Failure::Status {
                status,
                headers,
                body: ErrorBody::parse(&text),
            }));
        }
        read.map_err(|e| Box::new(Failure::Io(e)))?;
        if body.len() as u64 > MAX_BODY {
            return Err(Box::new(Failure::Final(invalid(
                p,
                &format!("a reply longer than {} MiB", MAX_BODY >> 20),
            ))));
        }
        if let Some(enc) =
            header(&headers, "content-encoding").filter(|e| !e.is_empty() && e != "identity")
        {
            return Err(Box::new(Failure::Final(invalid(
                p,
                &format!("a {enc}-compressed body, which ai does not ask for and cannot read"),
            ))));
        }
        let html = header(&headers, "content-type")
            .is_some_and(|t| t.starts_with("text/html") || t.starts_with("application/xhtml"));
        let start = body.iter().find(|b| !b.is_ascii_whitespace());
        if html || start == Some(&b'<') {
            let page = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
            return Err(Box::new(Failure::Final(invalid(
                p,
                &format!(
                    "an HTML page, not {}: {}",
                    reply::api_name(p.protocol),
                    reply::html_summary(&page)
                ),
            ))));
        }
        let vectors = wire::parse(self.wire, &body).map_err(|bad| match bad {
            Bad::Provider(e) => Box::new(Failure::InStream(e)),
            Bad::Invalid(why) => Box::new(Failure::Final(invalid(p, &why))),
        })?;
        drop(body);
        wire::finish(vectors, self.want, self.dimensions)
            .map_err(|shape| Box::new(Failure::Final(self.shape_error(&shape))))
    }

    /// The error for a failure that is not retried (again).
    fn error(&self, failure: Failure) -> Error {
        let p = &*self.p;
        let model = &self.model;
        if let Failure::Status { status, body, .. } = &failure {
            let detail = format!(
                "{status}: {}",
                crate::fmt::one_line(&p.redact(&body.message), 300)
            );
            let lower = format!("{} {}", body.code, body.message).to_lowercase();
            let client = matches!(status, 400 | 413 | 422);
            let too_long = [
                "too long",
                "too many tokens",
                "context length",
                "context_length",
                "maximum context",
                "input length",
                "exceeds",
            ];
            // First: "dimensions exceeds the maximum" is not about a passage.
            if let Some(d) = self.dimensions
                && client
                && lower.contains("dimension")
            {
                return Error::usage(format!(
                    "{} cannot give {model} vectors of {d} dimensions ({detail})",
                    p.name
                ))
                .hint("leave out \"dimensions\" (ai kb add --dimensions, or kb.bases.NAME.dimensions in config.json), or give a size the model supports");
            }
            if client && too_long.iter().any(|t| lower.contains(t)) {
                return Error::backend(format!(
                    "a passage is too long for {model} on {} ({detail})",
                    p.name
                ))
                .hint(format!(
                    "ai keeps passages under ~{} estimated tokens for this model; choose a model that reads longer inputs",
                    self.limit_tokens()
                ));
            }
        }
        match failure.into_error(p, model) {
            e @ Error::NotFound { .. } => {
                let hint = if self.wire == Wire::Ollama {
                    format!("pull it first: ollama pull {model}")
                } else {
                    format!(
                        "check the embedding model's name; if it is right, check the base URL ({})",
                        p.base_from
                    )
                };
                e.hint(hint)
            }
            // `ai --dry-run` shows chat requests, not these.
            e @ Error::Backend { .. } if e.hint_text().is_some_and(|h| h.contains("--dry-run")) => {
                e.hint(format!(
                    "check the model '{model}' and that {} serves embeddings",
                    p.name
                ))
            }
            e => e,
        }
    }

    fn limit_tokens(&self) -> usize {
        super::input_limit(self.wire, &self.model)
    }

    fn shape_error(&self, shape: &Shape) -> Error {
        let p = &*self.p;
        let e = Error::backend(format!(
            "invalid embeddings from {} for {}: {shape}",
            p.name, self.model
        ));
        match shape {
            Shape::Dimensions { got, .. } => e.hint(format!(
                "the server ignored the size asked for and gives {got}: add the knowledge base with --dimensions {got} (or set its \"dimensions\" in config.json), or leave the size out"
            )),
            _ => e.hint("the base URL may point at something that is not an embeddings API"),
        }
    }
}

fn header(headers: &ureq::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase())
}

fn invalid(p: &Resolved, why: &str) -> Error {
    Error::backend(p.redact(&format!("invalid response from {}: {why}", p.name)))
        .hint(reply::base_hint(p))
}
