//! The third step: the rounds with the model. Today a turn is one round: the request goes out,
//! the reply streams back through the sink. (Tool calling makes this a bounded loop of rounds,
//! each committed by the persist step as it completes; backends stay single-round.)

use std::time::Instant;

use super::open::Opened;
use super::prompt::Prepared;
use super::types::Options;
use crate::backend::{self, End, Request};
use crate::chat::record::Usage;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::output::{self, ReplySink};
use crate::present::Present;

/// What came back.
pub(super) struct Sent {
    /// The answer as received (also when cut short).
    pub(super) text: String,
    pub(super) end: End,
    pub(super) usage: Option<Usage>,
    pub(super) ms: u64,
    /// Where the reply went (stdout, or kept); finished by the persist step.
    pub(super) sink: ReplySink,
}

fn request<'a>(opts: &Options, opened: &'a Opened, prepared: &'a Prepared) -> Request<'a> {
    Request {
        route: &opened.route,
        system: prepared.system.as_deref(),
        messages: &prepared.messages,
        modes: opened.turn.modes,
        timeout: opts.timeout,
        timeout_given: opts.timeout_given,
        no_wait: opts.no_wait,
    }
}

/// Send the turn, streaming the reply to stdout when it is shown as it comes.
pub(super) fn send(ctx: &Ctx, opts: &Options, opened: &Opened, prepared: &Prepared) -> Sent {
    let req = request(opts, opened, prepared);
    let present = opened.turn.present;
    let started = Instant::now();
    let mut sink = ReplySink::new(present == Present::Stream);
    if present != Present::Collect {
        sink = sink.spinning(&ctx.ui, &opened.route.label);
    }
    let sent = backend::send(&req, &ctx.config, &mut sink, &ctx.ui);
    sink.stop_spinner();
    let (text, end, usage) = match sent {
        Ok(o) => (o.text, o.end, o.usage),
        Err(e) => (String::new(), End::Failed(e), None),
    };
    Sent {
        text,
        end,
        usage,
        ms: started.elapsed().as_millis() as u64,
        sink,
    }
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
