//! One turn of a conversation, as a pipeline of plain steps, each in its own file:
//!
//! - [`open`]: resolve the route, lock and load the chat, find the prompt a retry resends;
//! - [`prompt`]: system prompt, summary, mode instruction, overflow policy, window → messages;
//! - [`send`]: the rounds with the model (one today; tool calling adds a bounded loop here);
//! - [`persist`]: the turn's records in one write per completed round, pending prompts,
//!   footers and the "last chat".
//!
//! A call saved nowhere (`--no-chat`) runs the prompt and send steps only ([`one_shot`]).

mod open;
mod pending;
mod persist;
mod prompt;
mod send;
mod types;

pub(crate) use types::{Finished, Kind, Options, Target, Turn};

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::present::{Done, Present};

/// One turn of a chat: open → prompt → send → persist. `None` after `--dry-run`.
pub(crate) fn chat(ctx: &Ctx, opts: &Options, target: &Target, turn: Turn, kind: Kind) -> Finished {
    // From here a Ctrl+C does not end `ai` at once: waiting for the chat's lock notices it and
    // says so; once the chat is held, what was typed (and received) gets saved.
    let _defer = crate::signal::Defer::start();
    let mut opened = match open::open(ctx, opts, target, turn, kind) {
        Ok(o) => o,
        Err(Error::Interrupted) => {
            let which = match target {
                Target::Existing(id) => format!("chat {id}"),
                Target::New(Some(name)) => format!("chat {name}"),
                Target::New(None) => "the chat".to_owned(),
            };
            ctx.ui.notice(&format!(
                "ai: interrupted while waiting for {which} (another call held it); the prompt was not saved"
            ));
            return Finished::early(Error::Interrupted);
        }
        Err(e) => return Finished::early(e),
    };
    if let Err(e) = tools_served(opts, &opened.route) {
        return Finished::early(e);
    }
    let mut prepared = match prompt::prepare(ctx, opts, &mut opened) {
        Ok(p) => p,
        Err(e) => {
            let chat = opened.chat.as_ref().map(|c| c.id.clone());
            if let Some(id) = &chat {
                crate::output::set_call_chat(id);
            }
            // Refused by the overflow policy, or compaction failed: the prompt may have been
            // kept in the chat; stderr ends with its footer, as after any failed turn.
            let e = match &chat {
                Some(id) if opened.turn.present != Present::Collect && !opts.dry_run => {
                    if !matches!(e, Error::Interrupted) {
                        crate::output::print_error(&e);
                    }
                    ctx.ui.notice(&format!("[chat: {id}]"));
                    match e {
                        Error::Interrupted => Error::Interrupted,
                        e => Error::Exit(e.exit_code()),
                    }
                }
                _ => e,
            };
            return Finished {
                result: Err(e),
                chat,
            };
        }
    };
    if opts.dry_run {
        return Finished {
            result: send::dry_run(ctx, opts, &opened, &prepared).map(|()| None),
            chat: None,
        };
    }
    let fresh = opened.chat.is_none();
    let mut chat = match persist::create_if_new(ctx, target, &mut opened, &prepared) {
        Ok(c) => c,
        Err(e) => return Finished::early(e),
    };
    // Copies asked for (`--keep-attachments`) are in the chat's folder before the turn is sent.
    if let Err(e) = crate::attach::keep(&ctx.store, &chat.id, &opened.turn.attachments) {
        return Finished::early(e);
    }
    // Each completed tool round is written at once (the first with the prompt).
    let mut rounds = persist::Rounds::default();
    let sent = send::send(ctx, opts, &opened, &mut prepared, &mut |round, prompt| {
        rounds.commit(ctx, &mut chat, &opened, round, prompt)
    });
    persist::finish(ctx, chat, fresh, &opened, prepared, sent)
}

/// The tools `ai` runs need an HTTP provider: a CLI backend runs its own.
fn tools_served(opts: &Options, route: &crate::alias::Route) -> Result<()> {
    if opts.tools.as_ref().is_some_and(|s| s.asked)
        && !matches!(route.provider, crate::alias::Provider::Http(_))
    {
        return Err(Error::usage(format!(
            "{} cannot be given the tools ai runs (--tools, --data, --tools-file, --tool, --mcp): it is not an HTTP provider",
            route.label
        ))
        .hint(format!(
            "use a model of one of these providers: {}; --kb without --tools works with every backend",
            crate::tools::PROVIDERS
        )));
    }
    Ok(())
}

/// A call saved nowhere (`--no-chat`, or config `chat.save: false`). `None` after `--dry-run`.
pub(crate) fn one_shot(ctx: &Ctx, opts: &Options, turn: Turn) -> Result<Option<Done>> {
    let mut opened = open::unsaved(ctx, turn)?;
    tools_served(opts, &opened.route)?;
    let mut prepared = prompt::unsaved(ctx, opts, &mut opened)?;
    if opts.dry_run {
        send::dry_run(ctx, opts, &opened, &prepared)?;
        return Ok(None);
    }
    let sent = send::send(ctx, opts, &opened, &mut prepared, &mut |_, _| Ok(()));
    persist::unsaved(ctx, &opened, prepared, sent)
}
