//! Backends: where a request goes and how its reply comes back.

pub(crate) mod cli;
pub(crate) mod echo;
pub(crate) mod http;
pub(crate) mod process;
#[cfg(target_os = "linux")]
pub(crate) mod reaper;
pub(crate) mod shape;
pub(crate) mod stream;
pub(crate) mod supervise;
pub(crate) mod transcript;

use std::time::Duration;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::output::{Sink, Ui};
use crate::target::Modes;
use crate::target::{Provider, Route};

use crate::conversation::{Message, Part, ToolCall};

/// Everything a backend needs for one call.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    pub(crate) route: &'a Route,
    pub(crate) system: Option<&'a str>,
    /// The conversation to send, ending with the new user prompt.
    pub(crate) messages: &'a [Message],
    pub(crate) modes: Modes,
    pub(crate) timeout: Duration,
    /// `timeout` was asked for (`--timeout`): it wins over an HTTP provider's own "timeout".
    pub(crate) timeout_given: bool,
    /// `--no-wait`: fail at once instead of waiting for a rate limit.
    pub(crate) no_wait: bool,
    /// The tools the model may call (HTTP providers only); empty: none.
    pub(crate) tools: &'a [crate::conversation::ToolDef],
    /// `--schema`: ask for JSON that fits it, in the protocol's own way.
    pub(crate) schema: Option<&'a serde_json::Value>,
}

impl Request<'_> {
    /// The new prompt: the text typed for this turn (the last text of the last message).
    pub(crate) fn prompt(&self) -> &str {
        self.messages
            .last()
            .and_then(|m| {
                m.parts.iter().rev().find_map(|p| match p {
                    Part::Text(t) => Some(t.as_str()),
                    _ => None,
                })
            })
            .unwrap_or("")
    }
}

/// How a call ended. The text received so far is kept in every case, so a chat can save it.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) text: String,
    pub(crate) end: End,
    /// Token counts, when the provider reports them.
    pub(crate) usage: Option<crate::chat::record::Usage>,
    /// The tools the model asked for (a complete reply only; HTTP providers only).
    pub(crate) calls: Vec<ToolCall>,
}

#[derive(Debug)]
pub(crate) enum End {
    Complete,
    Interrupted,
    Failed(Error),
}

impl Outcome {
    pub(crate) fn into_result(self) -> Result<String> {
        match self.end {
            End::Complete => Ok(self.text),
            End::Interrupted => Err(Error::Interrupted),
            End::Failed(e) => Err(e),
        }
    }
}

/// Send a request to its provider, streaming the reply into `sink`.
pub(crate) fn send(
    req: &Request<'_>,
    config: &Config,
    sink: &mut dyn Sink,
    ui: &Ui,
) -> Result<Outcome> {
    match &req.route.provider {
        Provider::Echo => Ok(echo::send(req, sink)),
        Provider::Cli(_) | Provider::Custom(_) => {
            let inv = cli::build(req, config)?;
            for note in &inv.notes {
                ui.warn(note);
            }
            Ok(process::run_with(&inv, req.timeout, sink, &mut |m| {
                ui.warn(m)
            }))
        }
        Provider::Http(_) => {
            let mut outcome = http::send(req, config, sink, ui, req.no_wait)?;
            // `--schema` through a forced tool (Anthropic, Bedrock): the call's input is the
            // reply.
            if req.schema.is_some()
                && let Some(i) = outcome
                    .calls
                    .iter()
                    .position(|c| c.name == crate::backend::shape::TOOL)
            {
                outcome.text = outcome.calls.remove(i).arguments;
            }
            Ok(outcome)
        }
    }
}

/// Check that a route can be used (its provider's settings, its key, a custom backend's
/// declaration) before anything is written for it.
pub(crate) fn check(route: &Route, config: &Config) -> Result<()> {
    match &route.provider {
        Provider::Echo | Provider::Cli(_) => Ok(()),
        Provider::Custom(name) => match config.backends.get(name) {
            Some(_) => Ok(()),
            None => Err(Error::config(format!(
                "backend '{name}' is not declared in config"
            ))),
        },
        Provider::Http(_) => http::check(route, config),
    }
}

/// Is the program a CLI or custom backend runs installed? Checked before a chat is created
/// or a prompt saved, so that a call that cannot start leaves nothing behind. (Not for
/// `--dry-run`, which shows the command whether or not it can run.)
pub(crate) fn installed(route: &Route, config: &Config) -> Result<()> {
    let (name, program, hint) = match &route.provider {
        Provider::Cli(c) => (
            c.name().to_owned(),
            c.name().to_owned(),
            Some(cli::install_hint(*c).to_owned()),
        ),
        Provider::Custom(name) => match config.backends.get(name) {
            Some(spec) => (name.clone(), spec.program.clone(), spec.install.clone()),
            None => return Ok(()),
        },
        Provider::Echo | Provider::Http(_) => return Ok(()),
    };
    match cli::find_program(&program) {
        Some(_) => Ok(()),
        None => Err(process::not_installed(&name, &program, hint.as_deref())),
    }
}

/// What `--dry-run` prints: the exact program, arguments and prompt.
pub(crate) fn dry_run(req: &Request<'_>, config: &Config) -> Result<String> {
    match &req.route.provider {
        Provider::Echo => {
            // What a model would be given: the system prompt, the history and the new prompt
            // with its quoted parts, as one transcript.
            let whole = transcript::render(req.system, req.messages);
            Ok(format!(
                "backend: echo (built in; no program runs)\nprompt ({} bytes):\n{}\n",
                whole.len(),
                whole
            ))
        }
        Provider::Cli(_) | Provider::Custom(_) => Ok(cli::build(req, config)?.describe()),
        Provider::Http(_) => http::dry_run(req, config),
    }
}
