//! Embeddings from the HTTP providers `ai` already knows: OpenAI and OpenAI-compatible servers,
//! Azure OpenAI, the Gemini API and Ollama. An [`Embedder`] is settled once from a
//! `PROVIDER:MODEL` spec (no network); each [`Embedder::embed`] call is one request, retried on
//! 429 and 5xx as chat requests are, bounded by a deadline, and given up at once on Ctrl+C. Every
//! vector it returns is checked and L2-normalized, so cosine similarity is a dot product.

mod send;
mod wire;

use std::path::PathBuf;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use self::send::Job;
use self::wire::{Ask, Wire};
use crate::backend::http::provider::{self, Env, Protocol, Resolved};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::output::Ui;
use crate::signal;

/// What a text is embedded for: some providers and models embed a passage and a question
/// differently (Gemini's `taskType`, the prefixes of nomic and e5 models).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Purpose {
    Document,
    Query,
}

/// One text to embed. The title is sent where the protocol takes one (Gemini, for documents);
/// elsewhere the caller may put it into the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Input<'a> {
    pub(crate) text: &'a str,
    pub(crate) title: Option<&'a str>,
}

/// How often the waiting thread looks for Ctrl+C.
const POLL: Duration = Duration::from_millis(50);

/// An embedding model settled for a knowledge base: an HTTP provider's, or a local model run
/// in-process. Sync and search use only this type, so the two are interchangeable; a base
/// records [`spec`](Embedder::spec) and refuses to mix.
pub(crate) struct Embedder {
    /// `provider:model` (`local:NAME`, `local:/path`), normalized.
    spec: String,
    dimensions: Option<u32>,
    kind: Kind,
}

enum Kind {
    Http(Box<Http>),
    Local(Box<Local>),
}

/// A local model, loaded on first use (a search that never embeds does not read it).
struct Local {
    source: crate::kb::local::Source,
    home: PathBuf,
    model: std::sync::OnceLock<std::sync::Arc<crate::kb::local::LocalModel>>,
    ui: Ui,
}

/// A provider and model settled for embedding, ready to send requests.
struct Http {
    model: String,
    wire: Wire,
    /// How the model is told a passage from a query (the base's `task`).
    task: Option<crate::config::kb::Task>,
    provider: Arc<Resolved>,
    agent: ureq::Agent,
    /// The `ai` home, for the rate-limit state.
    home: PathBuf,
    ui: Ui,
}

impl std::fmt::Debug for Embedder {
    // By hand: the provider holds the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("spec", &self.spec)
            .field("dimensions", &self.dimensions)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// `spec` is "PROVIDER:MODEL" (openai:text-embedding-3-small, gemini:gemini-embedding-001,
    /// ollama:nomic-embed-text, azure:DEPLOYMENT, or any configured OpenAI-compatible provider
    /// NAME:MODEL; `gemini` and `ollama` mean the APIs `gemini-api` and `ollama-api`). Checks
    /// that the provider exists, speaks an embedding protocol and has its key. No network.
    pub(crate) fn new(spec: &str, dimensions: Option<u32>, config: &Config) -> Result<Embedder> {
        let home = config
            .path
            .parent()
            .map_or_else(|| PathBuf::from("."), PathBuf::from);
        if let Some(rest) = local_spec(spec, config) {
            let source = crate::kb::local::Source::parse(rest)?;
            if let Some(d) = dimensions {
                return Err(Error::usage(format!(
                    "--dimensions {d} does not apply to a local model: its size is fixed"
                ))
                .hint("leave --dimensions out with --embed local"));
            }
            return Ok(Embedder {
                spec: source.spec(),
                dimensions: None,
                kind: Kind::Local(Box::new(Local {
                    source,
                    home,
                    model: std::sync::OnceLock::new(),
                    ui: Ui::new(false),
                })),
            });
        }
        let (name, model) = split_spec(spec)?;
        let name = provider_name(name, config)?;
        let env = Env::load(config);
        let p = provider::resolve(&name, config, &env)?;
        let wire = match p.protocol {
            Protocol::Openai => Wire::Openai,
            Protocol::Azure => Wire::Azure,
            Protocol::Gemini => Wire::Gemini,
            Protocol::Ollama => Wire::Ollama,
            Protocol::Anthropic | Protocol::Bedrock => {
                return Err(
                    Error::usage(format!("{name} has no embeddings API that ai can use"))
                        .hint(providers_hint(config)),
                );
            }
        };
        crate::backend::http::key_present(&p, config)?;
        let model = match wire {
            Wire::Gemini => model.strip_prefix("models/").unwrap_or(model),
            _ => model,
        };
        if model.is_empty() {
            return Err(spec_error(spec));
        }
        if let Some(d) = dimensions
            && !(1..=MAX_DIMENSIONS).contains(&d)
        {
            return Err(Error::usage(format!(
                "--dimensions must be between 1 and {MAX_DIMENSIONS}, not {d}"
            ))
            .hint("common sizes are 256, 768, 1536 and 3072; leave it out for the model's own"));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .user_agent(concat!("ai/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Embedder {
            spec: format!("{name}:{model}"),
            dimensions,
            kind: Kind::Http(Box::new(Http {
                model: model.to_owned(),
                wire,
                task: None,
                provider: Arc::new(p),
                agent,
                home,
                ui: Ui::new(false),
            })),
        })
    }

    /// Where retry and rate-limit notices (and a local model's download) go (by default:
    /// stderr, not quiet).
    pub(crate) fn with_ui(mut self, ui: Ui) -> Embedder {
        match &mut self.kind {
            Kind::Http(h) => h.ui = ui,
            Kind::Local(l) => l.ui = ui,
        }
        self
    }

    /// How the model is told a passage from a query (`kb.bases.NAME.task`; unset: by name).
    /// A local model knows its own form (its prompts or its name).
    pub(crate) fn with_task(mut self, task: Option<crate::config::kb::Task>) -> Embedder {
        if let Kind::Http(h) = &mut self.kind {
            h.task = task;
        }
        self
    }

    /// Make sure the model can be used now: a local model is loaded (downloaded first when it
    /// is not on disk). An HTTP provider is not asked anything.
    pub(crate) fn prepare(&self) -> Result<()> {
        match &self.kind {
            Kind::Http(_) => Ok(()),
            Kind::Local(l) => l.get().map(|_| ()),
        }
    }

    /// The local model, when this is one (loaded).
    pub(crate) fn local(&self) -> Result<Option<&crate::kb::local::LocalModel>> {
        match &self.kind {
            Kind::Http(_) => Ok(None),
            Kind::Local(l) => l.get().map(Some),
        }
    }

    /// Whether this is a local static model (a table of token vectors: weaker evidence than a
    /// transformer's, so a search weighs its list less). Reads the model folder's config.json
    /// when the model is not loaded yet, never loads or downloads it (a query embedded by
    /// `ai serve` leaves it unloaded here).
    pub(crate) fn is_static(&self) -> bool {
        let Kind::Local(l) = &self.kind else {
            return false;
        };
        if let Some(m) = l.model.get() {
            return m.family_name() == "static";
        }
        let dir = match &l.source {
            crate::kb::local::Source::Folder(p) => Some(p.clone()),
            other => other.hub_dir(&l.home),
        };
        dir.and_then(|d| crate::kb::local::read_json(&d.join("config.json")).ok())
            .is_some_and(|c| crate::kb::local::is_static_config(&c))
    }

    /// The normalized "provider:model" (`gemini:x` is `gemini-api:x`).
    pub(crate) fn spec(&self) -> &str {
        &self.spec
    }

    /// The dimensions asked for, if any (else the model's own).
    pub(crate) fn dimensions(&self) -> Option<u32> {
        self.dimensions
    }

    /// Inputs per request (for a local model: per batch spread over the cores).
    pub(crate) fn max_batch(&self) -> usize {
        let h = match &self.kind {
            Kind::Http(h) => h,
            Kind::Local(l) => return l.get().map_or(64, |m| m.batch()),
        };
        match h.wire {
            // OpenAI takes 2048; smaller requests fail and retry more cheaply.
            Wire::Openai | Wire::Azure => 256,
            // Gemini: "at most 100 requests can be in one batch".
            Wire::Gemini => 100,
            Wire::Ollama => 64,
        }
    }

    /// Estimated tokens per request.
    pub(crate) fn max_batch_tokens(&self) -> usize {
        let h = match &self.kind {
            Kind::Http(h) => h,
            // In-process: a batch is bounded by its count; each thread holds one text at a time.
            Kind::Local(_) => return usize::MAX,
        };
        match h.wire {
            // OpenAI allows 300,000 per request.
            Wire::Openai | Wire::Azure => 100_000,
            Wire::Gemini => 100_000,
            // A local server works through a batch before it answers: keep each short.
            Wire::Ollama => 32_000,
        }
    }

    /// Estimated tokens per input: under the model's limit, with room for estimation error
    /// and the task prefix.
    pub(crate) fn max_input_tokens(&self) -> usize {
        match &self.kind {
            Kind::Http(h) => input_limit(h.wire, &h.model),
            // Estimated tokens (3 bytes each) run higher than a subword tokenizer's count.
            Kind::Local(l) => l.get().map_or(512, |m| m.max_tokens()),
        }
    }

    /// Embed `inputs` in one request (more than [`max_batch`](Self::max_batch) are sent in
    /// several). Returns one L2-normalized vector per input, in input order, all of one length
    /// (the dimensions asked for, when given). Retries 429 and 5xx as chat requests do; gives up
    /// when `deadline` (or the provider's timeout) passes; Ctrl+C → `Error::Interrupted` within
    /// ~50 ms. Hold a `signal::Defer` around the work, or Ctrl+C ends the process at once.
    pub(crate) fn embed(
        &self,
        inputs: &[Input<'_>],
        purpose: Purpose,
        deadline: Option<Instant>,
    ) -> Result<Vec<Vec<f32>>> {
        if let Some(at) = inputs.iter().position(|i| i.text.trim().is_empty()) {
            return Err(Error::usage(format!(
                "input {} of {} is empty; there is nothing to embed",
                at + 1,
                inputs.len()
            )));
        }
        let h = match &self.kind {
            Kind::Http(h) => h,
            Kind::Local(l) => {
                let texts: Vec<&str> = inputs.iter().map(|i| i.text).collect();
                // A child of `ai serve` or `ai mcp`: the server has the model loaded.
                if purpose == Purpose::Query
                    && l.model.get().is_none()
                    && let Some(v) = crate::kb::local::service::query(&self.spec, &texts)
                {
                    return Ok(v);
                }
                let m = l.get()?;
                let role = match purpose {
                    Purpose::Document => crate::kb::local::Role::Passage,
                    Purpose::Query => crate::kb::local::Role::Query,
                };
                return m.embed(&texts, role);
            }
        };
        let mut out = Vec::with_capacity(inputs.len());
        for part in inputs.chunks(self.max_batch().max(1)) {
            out.extend(h.one_request(part, purpose, deadline, self.dimensions)?);
        }
        Ok(out)
    }
}

impl Local {
    fn get(&self) -> Result<&crate::kb::local::LocalModel> {
        if let Some(m) = self.model.get() {
            return Ok(m);
        }
        let m = self.source.shared(&self.home, &self.ui)?;
        Ok(self.model.get_or_init(|| m))
    }
}

impl Http {
    fn one_request(
        &self,
        inputs: &[Input<'_>],
        purpose: Purpose,
        deadline: Option<Instant>,
        dimensions: Option<u32>,
    ) -> Result<Vec<Vec<f32>>> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        if signal::interrupted() {
            return Err(Error::Interrupted);
        }
        let p = &self.provider;
        if let Some(rpm) = p.max_requests_per_minute {
            crate::backend::http::ratelimit::acquire(&self.home, &p.name, rpm, false, &self.ui)?;
        }
        // The provider's timeout bounds the request; an earlier deadline of the caller's wins.
        let now = Instant::now();
        let mut provider = Arc::clone(p);
        let mut limit = "the timeout";
        if let Some(d) = deadline
            && d < later(now, p.timeout)
        {
            let left = d.saturating_duration_since(now);
            if left.is_zero() {
                return Err(Error::backend(format!(
                    "no time is left to ask {} for embeddings",
                    p.name
                ))
                .hint("allow longer with --timeout SECS"));
            }
            let mut shorter = (**p).clone();
            shorter.timeout = left;
            provider = Arc::new(shorter);
            limit = "--timeout";
        }
        let ask = Ask {
            wire: self.wire,
            model: &self.model,
            dimensions,
            purpose,
            task: self.task,
        };
        let job = Job {
            built: wire::request(&provider, &ask, inputs),
            deadline: later(now, provider.timeout),
            p: provider,
            agent: self.agent.clone(),
            wire: self.wire,
            model: self.model.clone(),
            want: inputs.len(),
            dimensions,
            limit,
            ui: self.ui,
        };
        // The worker does the blocking I/O; this thread stays free to notice Ctrl+C.
        let (tx, rx) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("embed".into())
            .spawn(move || {
                let _ = tx.send(job.run());
            })
            .map_err(|e| Error::backend(format!("cannot start a thread for the request: {e}")))?;
        wait(&rx, signal::interrupted)
    }
}

/// `now + d`, or a year from now when `d` is longer than an `Instant` can hold (a timeout of
/// 1e18 seconds in config).
fn later(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(365 * 24 * 3600)))
        .unwrap_or(now)
}

/// The most dimensions accepted (models today give at most 4096).
const MAX_DIMENSIONS: u32 = 16_384;

/// Split items (their estimated token counts) into consecutive batches of at most `max_count`
/// items and `max_tokens` tokens; an item over `max_tokens` by itself is a batch of its own.
pub(crate) fn batches(
    tokens: &[usize],
    max_count: usize,
    max_tokens: usize,
) -> Vec<std::ops::Range<usize>> {
    let max_count = max_count.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut sum = 0usize;
    for (i, &t) in tokens.iter().enumerate() {
        let over = sum.checked_add(t).is_none_or(|s| s > max_tokens);
        if i > start && (i - start >= max_count || over) {
            out.push(start..i);
            start = i;
            sum = 0;
        }
        sum = sum.saturating_add(t);
    }
    if start < tokens.len() {
        out.push(start..tokens.len());
    }
    out
}

/// A cautious token estimate for the limits above: one token per 3 bytes of UTF-8 (English runs
/// ~4 characters a token, German and code fewer), never 0 for a non-empty text.
#[cfg(test)]
pub(crate) fn estimate_tokens(text: &str) -> usize {
    estimate_tokens_of(text.len())
}

/// [`estimate_tokens`] of a text of `bytes` bytes.
pub(crate) fn estimate_tokens_of(bytes: usize) -> usize {
    bytes.div_ceil(3)
}

/// The per-input limit for a model, in estimated tokens, with a margin.
fn input_limit(wire: Wire, model: &str) -> usize {
    let m = model.to_ascii_lowercase();
    let small = || small_model(&m);
    let model_limit = match wire {
        // Also on Azure, where the name is a deployment's (often the model's).
        _ if m.starts_with("text-embedding-3") || m.starts_with("text-embedding-ada") => 8192,
        Wire::Gemini => 2048,
        // Small BERT-style models read 512 tokens (all-minilm 256).
        Wire::Ollama => small().unwrap_or(2048),
        // An unknown OpenAI-compatible server: many serve 512-token models.
        Wire::Openai => small().unwrap_or(512),
        Wire::Azure => 512,
    };
    model_limit - model_limit / 8
}

/// The input limit of the small open models that read less than Ollama's default context.
fn small_model(m: &str) -> Option<usize> {
    const SMALL: [(&str, usize); 8] = [
        ("all-minilm", 256),
        // v2 reads 8192; Ollama's default context is the bound then.
        ("snowflake-arctic-embed2", 2048),
        ("snowflake-arctic-embed", 512),
        ("mxbai-embed", 512),
        ("bge-large", 512),
        ("bge-base", 512),
        ("bge-small", 512),
        ("e5", 512),
    ];
    SMALL.iter().find(|(k, _)| m.contains(k)).map(|&(_, n)| n)
}

/// Whether `spec` names a local model.
pub(crate) fn is_local(spec: &str, config: &Config) -> bool {
    local_spec(spec, config).is_some()
}

/// What follows `local` in a spec that names a local model (`local`, `local:NAME`,
/// `local:/path`); `None` for an HTTP provider's. A provider that config declares under the name
/// `local` keeps its meaning.
fn local_spec<'a>(spec: &'a str, config: &Config) -> Option<&'a str> {
    let spec = spec.trim();
    let (head, rest) = spec.split_once(':').unwrap_or((spec, ""));
    if !head.eq_ignore_ascii_case("local") || provider::exists(head, config) {
        return None;
    }
    Some(rest)
}

/// `PROVIDER:MODEL` → its two parts (the model may hold more colons: `ollama:bge-m3:latest`).
fn split_spec(spec: &str) -> Result<(&str, &str)> {
    match spec.trim().split_once(':') {
        Some((p, m)) if !p.trim().is_empty() && !m.trim().is_empty() => Ok((p.trim(), m.trim())),
        _ => Err(spec_error(spec)),
    }
}

fn spec_error(spec: &str) -> Error {
    Error::usage(format!(
        "'{}' is not PROVIDER:MODEL",
        crate::fmt::one_line(spec, 80)
    ))
    .hint("e.g. --embed openai:text-embedding-3-small, gemini:gemini-embedding-001 or ollama:nomic-embed-text")
}

/// The HTTP provider a spec names. `gemini` and `ollama` are CLIs elsewhere in `ai`; here they
/// can only mean their APIs (unless config declares providers of those names).
fn provider_name(name: &str, config: &Config) -> Result<String> {
    if provider::exists(name, config) {
        return Ok(name.to_owned());
    }
    let api = match name {
        "gemini" | "google" => "gemini-api",
        "ollama" => "ollama-api",
        _ => name,
    };
    if provider::exists(api, config) {
        return Ok(api.to_owned());
    }
    let cli = crate::target::Cli::ALL.iter().any(|c| c.name() == name)
        || config.backends.contains_key(name)
        || name == "echo";
    if cli {
        return Err(Error::usage(format!(
            "{name} is a CLI backend, which has no embeddings API"
        ))
        .hint(providers_hint(config)));
    }
    Err(Error::not_found(format!(
        "unknown embedding provider '{}'",
        crate::fmt::one_line(name, 60)
    ))
    .hint(providers_hint(config)))
}

/// The providers whose protocol has embeddings, built in and configured.
fn providers_hint(config: &Config) -> String {
    let embeds = |p: Protocol| {
        matches!(
            p,
            Protocol::Openai | Protocol::Azure | Protocol::Gemini | Protocol::Ollama
        )
    };
    // As a spec names them: `gemini`, not `gemini-api`.
    let shown = |n: &str| match n {
        "gemini-api" => "gemini".to_owned(),
        "ollama-api" => "ollama".to_owned(),
        other => other.to_owned(),
    };
    let mut names: Vec<String> = provider::builtin_names()
        .filter(|n| provider::builtin_protocol(n).is_some_and(embeds))
        .map(shown)
        .collect();
    for (name, cfg) in provider::configured(config).unwrap_or_default() {
        let protocol = cfg
            .protocol
            .or_else(|| provider::builtin_protocol(&name))
            .unwrap_or(Protocol::Openai);
        let name = shown(&name);
        if embeds(protocol) && !names.contains(&name) {
            names.push(name);
        }
    }
    format!(
        "embeddings come from: {} (e.g. --embed openai:text-embedding-3-small)",
        names.join(", ")
    )
}

/// Wait for the worker's answer, giving up when `stop` says so (Ctrl+C).
fn wait<T>(rx: &mpsc::Receiver<Result<T>>, stop: impl Fn() -> bool) -> Result<T> {
    loop {
        if stop() {
            return Err(Error::Interrupted);
        }
        match rx.recv_timeout(POLL) {
            Ok(result) => return result,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::backend("the HTTP worker stopped unexpectedly"));
            }
        }
    }
}

#[cfg(test)]
mod tests;
