//! The third step: the rounds with the model. Without tools a turn is one round: the request
//! goes out, the reply streams back through the sink. With tools it is a bounded loop: while
//! the model asks for tools (and the limit allows), `ai` runs every call of the reply, commits
//! the round (the persist step writes it to the chat at once), and sends the conversation again
//! with the round appended in the protocol's shape. Backends stay single-round.

use std::time::Instant;

use super::open::Opened;
use super::prompt::Prepared;
use super::types::Options;
use crate::backend::{self, End, Request};
use crate::chat::record::{self, CallRec, ResultRec, RoundRec, Usage};
use crate::chat::window;
use crate::conversation::{Part, ToolCall};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::output::{self, ReplySink, Sink};
use crate::present::Present;
use crate::signal;

/// What came back.
pub(super) struct Sent {
    /// The answer as received (also when cut short).
    pub(super) text: String,
    pub(super) end: End,
    /// Summed over every round.
    pub(super) usage: Option<Usage>,
    pub(super) ms: u64,
    /// Where the reply went (stdout, or kept); finished by the persist step.
    pub(super) sink: ReplySink,
    /// Tool rounds committed to the chat.
    pub(super) rounds: u32,
    /// Estimated tokens of those rounds (for the reply's `history_tokens`).
    pub(super) round_tokens: u64,
    /// Every call run, for `--json`.
    pub(super) calls: Vec<CallLog>,
    /// The usage of the last request alone (the reply record's own).
    pub(super) last_usage: Option<Usage>,
    /// The turn was stopped at the tool-round limit: the calls asked for after the last
    /// round are stored with results that say they were not run, and the reply is empty.
    pub(super) stopped: Option<Stopped>,
    /// `--schema`: the reply did not fit, also when asked again (it came back whole: not cut
    /// short).
    pub(super) unfit: bool,
}

/// A turn stopped at the tool-round limit.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stopped {
    /// The rounds that ran (the limit).
    pub(super) rounds: u32,
    /// `--data` documents were given (a retry needs them again).
    pub(super) data: bool,
}

use crate::tools::CallLog;

/// Where each completed round goes: the chat (the persist step), or nowhere (`--no-chat`).
/// Gets the round and the prompt of the turn (written with its first round).
pub(super) type Commit<'a> = dyn FnMut(&RoundRec, &str) -> Result<()> + 'a;

fn request<'a>(opts: &Options, opened: &'a Opened, prepared: &'a Prepared) -> Request<'a> {
    Request {
        route: &opened.route,
        system: prepared.system.as_deref(),
        messages: &prepared.messages,
        modes: opened.turn.modes,
        timeout: opts.timeout,
        timeout_given: opts.timeout_given,
        no_wait: opts.no_wait,
        tools: prepared.tools.as_ref().map_or(&[], |t| t.defs.as_slice()),
        schema: opened.turn.schema.as_ref(),
    }
}

/// Send the turn, streaming the reply to stdout when it is shown as it comes; with tools, the
/// bounded loop of rounds.
pub(super) fn send(
    ctx: &Ctx,
    opts: &Options,
    opened: &Opened,
    prepared: &mut Prepared,
    commit: &mut Commit<'_>,
) -> Sent {
    let present = opened.turn.present;
    let started = Instant::now();
    // The MCP servers of the call were started for this turn: the user waited for them too.
    let startup = opts
        .tools
        .as_ref()
        .map(|s| s.take_startup())
        .unwrap_or_default();
    let deadline = started.checked_add(opts.timeout);
    // A reply that must fit a schema is checked before it is shown: it is kept, not streamed.
    let schema = opened.turn.schema.as_ref();
    let mut sink = ReplySink::new(present == Present::Stream && schema.is_none());
    let mut schema_retried = false;
    if present != Present::Collect {
        sink = sink.spinning(&ctx.ui, &opened.route.label);
    }
    let base = prepared.messages.len();
    if let Some(tools) = prepared.tools.as_mut() {
        tools.yolo = opened.turn.modes.yolo;
    }
    let mut total: Option<Usage> = None;
    let mut rounds = 0u32;
    let mut round_tokens = 0u64;
    let mut log: Vec<CallLog> = Vec::new();
    let mut stopped: Option<Stopped> = None;
    let mut unfit = false;
    let (text, end, last_usage) = loop {
        let mut req = request(opts, opened, prepared);
        // `--timeout` bounds the whole turn: a later round gets what is left.
        if rounds > 0 {
            let left = deadline.map_or(opts.timeout, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                break (String::new(), End::Failed(timed_out(opts)), None);
            }
            req.timeout = left;
        }
        let round_started = Instant::now();
        let sent = backend::send(&req, &ctx.config, &mut sink, &ctx.ui);
        sink.stop_spinner();
        let outcome = match sent {
            Ok(o) => o,
            Err(e) => break (String::new(), End::Failed(e), None),
        };
        add(&mut total, outcome.usage.as_ref());
        if let (Some(schema), End::Complete, true) =
            (schema, &outcome.end, outcome.calls.is_empty())
        {
            match crate::schema::check(&outcome.text, schema) {
                Ok(json) => {
                    // The JSON alone, in one line, is the reply: shown now, and saved.
                    if present == Present::Stream {
                        sink = ReplySink::new(true);
                        if let Err(e) = sink.chunk(json.as_bytes()) {
                            break (json, End::Failed(e), outcome.usage);
                        }
                    }
                    break (json, End::Complete, outcome.usage);
                }
                Err(why) if !schema_retried => {
                    // Once more, with what was wrong; the exchange is sent, never saved.
                    schema_retried = true;
                    if present != Present::Collect {
                        ctx.ui.notice(&format!(
                            "ai: the reply did not fit the schema ({}); asking once more",
                            crate::fmt::one_line(&why, 200)
                        ));
                    }
                    prepared.messages.push(crate::conversation::Message::text(
                        crate::conversation::Role::Assistant,
                        outcome.text,
                    ));
                    prepared.messages.push(crate::conversation::Message::text(
                        crate::conversation::Role::User,
                        crate::schema::retry_prompt(&why),
                    ));
                    if present != Present::Collect {
                        let s = std::mem::replace(&mut sink, ReplySink::new(false));
                        sink = s.spinning(&ctx.ui, &opened.route.label);
                    }
                    continue;
                }
                Err(why) => {
                    let e = Error::backend(format!(
                        "{}: the reply does not fit the schema, also when asked again: {}",
                        opened.route.label,
                        crate::fmt::one_line(&why, 300)
                    ))
                    .hint("simplify the schema, or try another model");
                    unfit = true;
                    break (outcome.text, End::Failed(e), outcome.usage);
                }
            }
        }
        let (Some(tools), End::Complete, false) = (
            prepared.tools.as_mut(),
            &outcome.end,
            outcome.calls.is_empty(),
        ) else {
            break (outcome.text, outcome.end, outcome.usage);
        };
        if rounds >= tools.max_rounds {
            // The limit: the calls of this reply are not run. They are kept, each with a result
            // that says so (from `ai`, not the model), so the chat stays well formed and a later
            // turn shows the model what happened; the reply stays empty, never words of ours
            // in the model's mouth.
            let data = tools.has_data();
            let ran = summary(&log);
            let plural = if rounds == 1 { "" } else { "s" };
            let note = format!(
                "stopped after {rounds} tool round{plural} (the limit; raise it with --max-tool-rounds N or \"tools.max_rounds\" in config.json); ran: {ran}"
            );
            let refused = format!(
                "not run: this turn reached its limit of {rounds} tool round{plural}, so ai stopped it before running this call"
            );
            if !outcome.text.is_empty() && present == Present::Stream {
                let _ = sink.chunk(b"\n");
            }
            let round = RoundRec {
                turn: prepared.turn_no,
                round: rounds + 1,
                ts: record::now(),
                text: outcome.text,
                calls: outcome.calls.iter().map(call_rec).collect(),
                results: outcome
                    .calls
                    .iter()
                    .map(|c| ResultRec {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        content: refused.clone(),
                        error: true,
                        truncated: false,
                    })
                    .collect(),
                origin: crate::route::origin(&opened.route),
                usage: outcome.usage.clone(),
                ms: Some(round_started.elapsed().as_millis() as u64),
            };
            let prompt = prompt_of(prepared, base);
            if let Err(e) = commit(&round, &prompt) {
                break (String::new(), End::Failed(e), None);
            }
            let [calls, results] = window::round(&round);
            round_tokens +=
                (window::estimate_message(&calls) + window::estimate_message(&results)) as u64;
            stopped = Some(Stopped { rounds, data });
            rounds += 1;
            break (
                String::new(),
                End::Failed(Error::backend(format!("{}: {note}", opened.route.label))),
                outcome.usage,
            );
        }
        rounds += 1;
        // The text before the calls was streamed; the next round's starts on a line of its own.
        if !outcome.text.is_empty() && present == Present::Stream {
            let _ = sink.chunk(b"\n\n");
        }
        let mut results = Vec::with_capacity(outcome.calls.len());
        for call in &outcome.calls {
            // Ctrl+C between calls: the round is not complete, and not written.
            if signal::interrupted() {
                break;
            }
            let ran = tools.run(ctx, call, deadline, &mut prepared.sources);
            if present != Present::Collect {
                ctx.ui.notice(&ran.line);
            }
            if crate::output::json_stream() {
                let _ = crate::output::print_line(&crate::output::StreamLine::Tool {
                    name: &call.name,
                    arguments: &call.arguments,
                    status: if ran.is_error { "error" } else { "ok" },
                    ms: ran.ms,
                    line: &ran.line,
                });
            }
            log.push(CallLog {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                status: if ran.is_error { "error" } else { "ok" },
                ms: ran.ms,
            });
            results.push(ResultRec {
                id: call.id.clone(),
                name: call.name.clone(),
                content: ran.content,
                error: ran.is_error,
                truncated: ran.truncated,
            });
        }
        if signal::interrupted() {
            // This round is not complete and is not written: it does not count (the prompt is
            // then written with the reply, as in a turn without rounds).
            rounds -= 1;
            break (String::new(), End::Interrupted, None);
        }
        let round = RoundRec {
            turn: prepared.turn_no,
            round: rounds,
            ts: record::now(),
            text: outcome.text,
            calls: outcome.calls.iter().map(call_rec).collect(),
            results,
            origin: crate::route::origin(&opened.route),
            usage: outcome.usage,
            ms: Some(round_started.elapsed().as_millis() as u64),
        };
        let prompt = prompt_of(prepared, base);
        if let Err(e) = commit(&round, &prompt) {
            rounds -= 1;
            break (String::new(), End::Failed(e), None);
        }
        let [calls, results] = window::round(&round);
        round_tokens +=
            (window::estimate_message(&calls) + window::estimate_message(&results)) as u64;
        prepared.messages.push(calls);
        prepared.messages.push(results);
        if present != Present::Collect {
            let s = std::mem::replace(&mut sink, ReplySink::new(false));
            sink = s.spinning(&ctx.ui, &opened.route.label);
        }
    };
    sink.stop_spinner();
    prepared.messages.truncate(base);
    Sent {
        text,
        end,
        usage: total,
        ms: (started.elapsed() + startup).as_millis() as u64,
        sink,
        rounds,
        round_tokens,
        calls: log,
        last_usage,
        stopped,
        unfit,
    }
}

/// The prompt of the turn (the last text of its message), for the first round's write.
fn prompt_of(prepared: &Prepared, base: usize) -> String {
    base.checked_sub(1)
        .and_then(|i| prepared.messages.get(i))
        .and_then(|m| {
            m.parts.iter().rev().find_map(|p| match p {
                Part::Text(t) => Some(t.clone()),
                _ => None,
            })
        })
        .unwrap_or_default()
}

fn call_rec(c: &ToolCall) -> CallRec {
    CallRec {
        id: c.id.clone(),
        name: c.name.clone(),
        arguments: c.arguments.clone(),
        signature: c.signature.clone(),
    }
}

/// `search_knowledge_base ×3, json_value ×1`, in the order first run.
fn summary(log: &[CallLog]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for c in log {
        match counts.iter_mut().find(|(n, _)| *n == c.name) {
            Some((_, k)) => *k += 1,
            None => counts.push((&c.name, 1)),
        }
    }
    if counts.is_empty() {
        return "nothing".into();
    }
    counts
        .iter()
        .map(|(n, k)| format!("{} ×{k}", crate::fmt::one_line(n, 64)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Token counts of all rounds, summed.
fn add(total: &mut Option<Usage>, u: Option<&Usage>) {
    let Some(u) = u else { return };
    let t = total.get_or_insert(Usage {
        input: None,
        output: None,
        cost_usd: None,
    });
    let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    t.input = sum(t.input, u.input);
    t.output = sum(t.output, u.output);
    t.cost_usd = match (t.cost_usd, u.cost_usd) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
}

fn timed_out(opts: &Options) -> Error {
    Error::backend(format!(
        "the turn took longer than {}",
        crate::fmt::human_duration(opts.timeout)
    ))
    .hint(if opts.timeout_given {
        "give it more time with a larger --timeout"
    } else {
        "give it more time with --timeout SECS"
    })
}

/// `--dry-run`: print exactly what would be sent, and send nothing.
pub(super) fn dry_run(
    ctx: &Ctx,
    opts: &Options,
    opened: &Opened,
    prepared: &Prepared,
) -> Result<()> {
    let req = request(opts, opened, prepared);
    // It holds the prompt (files, standard input): made safe on a terminal like any such text.
    output::print_foreign(&backend::dry_run(&req, &ctx.config)?)
}
