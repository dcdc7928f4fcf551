//! How a finished reply reaches the user: streamed, as JSON, as a bare command, or run.

use serde::Serialize;

use crate::alias::Route;
use crate::chat::record::Usage;
use crate::error::{Error, Result};
use crate::output::{self, Ui};
use crate::target::Modes;

/// How a reply reaches the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Present {
    /// Streamed to stdout as it arrives.
    Stream,
    /// One JSON object (`--json`).
    Json,
    /// The shell command in it, bare (`cmd`).
    Command,
    /// The command, confirmed and run (`run`; `yes`: without asking).
    Run { yes: bool },
    /// Kept for the caller (several models at once).
    Collect,
}

/// A finished turn.
pub(crate) struct Done {
    pub(crate) route: Route,
    pub(crate) chat: Option<String>,
    pub(crate) reply: String,
    pub(crate) usage: Option<Usage>,
    pub(crate) ms: u128,
    /// The notes a grounded answer was given.
    pub(crate) sources: Vec<crate::kb::Hit>,
    /// The tool calls run for it.
    pub(crate) tool_calls: Vec<crate::tools::CallLog>,
}

impl Present {
    pub(crate) fn of(modes: Modes, json: bool, yes: bool) -> Present {
        if modes.run {
            Present::Run { yes }
        } else if modes.cmd {
            Present::Command
        } else if json {
            Present::Json
        } else {
            Present::Stream
        }
    }

    /// What the model is told besides the system prompt.
    pub(crate) fn instruction(self) -> Option<String> {
        matches!(self, Present::Command | Present::Run { .. }).then(crate::modes::instruction)
    }

    /// Show a complete reply (a streamed one is on stdout already).
    pub(crate) fn show(self, ui: &Ui, done: &Done) -> Result<()> {
        match self {
            // `--json-stream`: the pieces are out already; the done line ends them.
            Present::Stream if output::json_stream() => output::print_line(&DoneLine {
                kind: "done",
                reply: JsonReply::of(done),
            }),
            Present::Stream | Present::Collect => Ok(()),
            Present::Json => print_json(&[JsonReply::of(done)], false),
            Present::Command => {
                let command = crate::modes::clean(&done.reply);
                output::check_command(&command)?;
                output::print_stdout(&format!("{command}\n"))
            }
            Present::Run { yes } => {
                match crate::modes::confirm_and_run(&crate::modes::clean(&done.reply), yes, ui)? {
                    0 => Ok(()),
                    code => Err(Error::Exit(code)),
                }
            }
        }
    }
}

/// One answer in `--json` output.
#[derive(Serialize)]
pub(crate) struct JsonReply<'a> {
    pub(crate) reply: Option<&'a str>,
    pub(crate) chat: Option<&'a str>,
    pub(crate) model: &'a str,
    pub(crate) provider: &'a str,
    pub(crate) alias: &'a str,
    pub(crate) usage: Option<&'a Usage>,
    pub(crate) elapsed_ms: u128,
    /// The notes a grounded answer was given (knowledge bases).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) sources: Vec<crate::chat::record::SourceRef>,
    /// The tool calls run for the answer: name, arguments, ok or error, ms.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) tool_calls: &'a [crate::tools::CallLog],
    /// Only for several models at once: why this one failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

impl<'a> JsonReply<'a> {
    pub(crate) fn of(done: &'a Done) -> JsonReply<'a> {
        JsonReply {
            reply: Some(&done.reply),
            chat: done.chat.as_deref(),
            model: &done.route.model,
            provider: done.route.provider.name(),
            alias: &done.route.label,
            usage: done.usage.as_ref(),
            elapsed_ms: done.ms,
            sources: crate::kb::ground::refs(&done.sources),
            tool_calls: &done.tool_calls,
            error: None,
        }
    }
}

/// The last line of `--json-stream` output: `{"type":"done"}` and the fields of `--json`.
#[derive(Serialize)]
struct DoneLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    reply: JsonReply<'a>,
}

/// One object, or (several models) an array.
pub(crate) fn print_json(items: &[JsonReply<'_>], array: bool) -> Result<()> {
    let encoded = if array {
        serde_json::to_string(items)
    } else {
        serde_json::to_string(&items[0])
    };
    let mut text = encoded.map_err(|e| Error::backend(format!("cannot encode JSON: {e}")))?;
    text.push('\n');
    output::print_stdout(&text)
}
