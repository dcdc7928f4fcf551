//! The last step: the turn goes into its chat in one write (with tool calling, one write per
//! completed round, then the reply), a failed prompt is kept as pending, and stderr ends with
//! the chat footer, whether the turn succeeded or not.

use super::open::{self, Opened};
use super::pending;
use super::prompt::Prepared;
use super::send::{Sent, Stopped};
use super::types::{Finished, Kind, Target};
use crate::backend::End;
use crate::chat::file::Unsaved;
use crate::chat::record::{self, MessageRec, Record, Role, RoundRec};
use crate::chat::store::Chat;
use crate::chat::window;
use crate::config::write_atomic_unsynced;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::output;
use crate::present::{Done, Present};
use crate::route;
use crate::signal;

/// The chat to write the turn to: the one opened, or a new one created now, whole and locked.
pub(super) fn create_if_new(
    ctx: &Ctx,
    target: &Target,
    opened: &mut Opened,
    prepared: &Prepared,
) -> Result<Chat> {
    if let Some(c) = opened.chat.take() {
        output::set_call_chat(&c.id);
        return Ok(c);
    }
    let mut header = open::header(
        &opened.route,
        prepared.chat_system.clone(),
        &opened.turn.title,
    );
    header.kb = prepared.chat_kb.clone();
    header.kb_tools = prepared.chat_kb_tools;
    let name = match target {
        Target::New(name) => name.as_deref(),
        Target::Existing(_) => None,
    };
    let chat = ctx.store.create(name, header)?;
    output::set_call_chat(&chat.id);
    Ok(chat)
}

/// The tool rounds of a turn, written to its chat as each completes: the first together with
/// the turn's prompt (one write), the others alone.
#[derive(Default)]
pub(super) struct Rounds {
    /// The prompt is in the chat.
    prompt_written: bool,
}

impl Rounds {
    pub(super) fn commit(
        &mut self,
        ctx: &Ctx,
        chat: &mut Chat,
        opened: &Opened,
        round: &RoundRec,
        prompt: &str,
    ) -> Result<()> {
        let mut records = Vec::with_capacity(2);
        if !self.prompt_written {
            records.push(user_record(prompt.to_owned(), opened, round.turn));
        }
        records.push(Record::Round(round.clone()));
        chat.append(&records, &ctx.ui).map_err(Error::from)?;
        self.prompt_written = true;
        Ok(())
    }
}

fn user_record(prompt: String, opened: &Opened, turn: u64) -> Record {
    Record::Message(MessageRec {
        role: Role::User,
        content: prompt,
        ts: record::now(),
        origin: route::origin(&opened.route),
        turn: Some(turn),
        usage: None,
        ms: None,
        history_tokens: None,
        interrupted: false,
        sources: Vec::new(),
        empty: false,
        replaces: opened.supersedes,
        attachments: opened.turn.records(),
    })
}

/// Write the turn, then tell how it went. The prompt and the reply are moved into their
/// records, never copied: a turn holds each once.
pub(super) fn finish(
    ctx: &Ctx,
    mut chat: Chat,
    fresh: bool,
    opened: &Opened,
    mut prepared: Prepared,
    sent: Sent,
) -> Finished {
    let route = &opened.route;
    let prompt = prepared.take_prompt();
    let origin = route::origin(route);
    let turn_no = prepared.turn_no;
    let Sent {
        text,
        end,
        usage,
        ms,
        sink,
        rounds,
        round_tokens,
        calls,
        last_usage,
        stopped,
        unfit,
    } = sent;
    let empty = matches!(end, End::Complete) && text.trim().is_empty();
    // Rounds in the chat: the turn is there already, and the reply is written whatever happens.
    let partial = !text.is_empty() || rounds > 0;
    let history_tokens = prepared.prior_weight
        + window::estimate(&prompt) as u64
        + round_tokens
        + window::estimate(&text) as u64;
    // (the reply is marked interrupted, the backend failed before any text, the result)
    let (interrupted, unanswered, result) = match end {
        End::Complete if empty => (
            false,
            false,
            Err(Error::backend(format!(
                "{} returned an empty reply",
                route.label
            ))),
        ),
        End::Complete => (false, false, Ok(())),
        End::Interrupted => (true, false, Err(Error::Interrupted)),
        End::Failed(Error::BrokenPipe) => (true, false, Err(Error::BrokenPipe)),
        // A reply cut short (a dropped stream, an error frame): keep what arrived.
        End::Failed(e) if partial => (true, false, Err(e)),
        End::Failed(e) => (false, true, Err(e)),
    };
    // Nothing came back and the backend failed: the prompt is kept as pending (a failed resend
    // of a pending prompt leaves the one record it resent; no copy).
    let records = if unanswered {
        match &result {
            // A failed resend of a pending prompt leaves that one record; a failed resend of a
            // cut-short turn keeps its prompt pending with the turn it replaces.
            Err(e) if !(opened.kind == Kind::Retry && opened.from_pending) => {
                vec![pending::record(
                    prompt,
                    route,
                    e,
                    opened.supersedes,
                    opened.turn.records(),
                )]
            }
            _ => Vec::new(),
        }
    } else {
        let mut out = Vec::with_capacity(2);
        if rounds == 0 {
            out.push(user_record(prompt, opened, turn_no));
        }
        out.push(Record::Message(MessageRec {
            role: Role::Assistant,
            content: text,
            ts: record::now(),
            origin,
            turn: Some(turn_no),
            usage: if rounds == 0 {
                usage.clone()
            } else {
                last_usage
            },
            ms: Some(ms),
            history_tokens: Some(history_tokens),
            interrupted,
            sources: crate::kb::ground::refs(&prepared.sources),
            empty,
            replaces: None,
            attachments: Vec::new(),
        }));
        out
    };
    let id = chat.id.clone();
    let mut records = records;
    if let Err(e) = chat.append(&records, &ctx.ui) {
        // A chat this turn created holds nothing but its header: it goes (under its lock).
        if fresh {
            let _ = std::fs::remove_file(&chat.path);
        }
        drop(chat);
        let _ = sink.finish();
        let prompt = records.first().map_or("", |r| match r {
            Record::Message(m) => m.content.as_str(),
            Record::Pending(p) => p.content.as_str(),
            _ => "",
        });
        return Finished {
            result: Err(not_saved(ctx, prompt, partial, e)),
            chat: Some(id),
        };
    }
    // The reply, out of its record again, for whoever shows it whole (`--json`, `cmd`).
    let reply = match records.last_mut() {
        Some(Record::Message(m)) if m.role == Role::Assistant => std::mem::take(&mut m.content),
        _ => String::new(),
    };
    drop(records);
    let _ = write_atomic_unsynced(
        &ctx.home.dir.join("last_chat"),
        format!("{id}\n").as_bytes(),
    );
    drop(chat); // unlock before printing the rest

    let present = opened.turn.present;
    let footer = |ui: &output::Ui| {
        if present != Present::Collect {
            ui.notice(&format!("[chat: {id}]"));
        }
    };
    // A failure is reported here, before the footer, so stderr always ends with it.
    let reported = |e: Error| -> Error {
        if present == Present::Collect {
            return e;
        }
        output::print_error(&e);
        footer(&ctx.ui);
        Error::Exit(e.exit_code())
    };
    let result = match result {
        Ok(()) => match sink.finish() {
            Ok(()) => {
                if present != Present::Collect {
                    crate::kb::ground::show(&ctx.ui, &prepared.sources);
                }
                footer(&ctx.ui);
                if signal::interrupted() {
                    Err(Error::Interrupted)
                } else {
                    Ok(Some(Done {
                        route: route.clone(),
                        chat: Some(id.clone()),
                        reply,
                        usage,
                        ms: u128::from(ms),
                        sources: std::mem::take(&mut prepared.sources),
                        tool_calls: calls,
                    }))
                }
            }
            Err(e) => Err(e),
        },
        Err(Error::Interrupted) => {
            let _ = sink.finish();
            if present != Present::Collect {
                ctx.ui
                    .notice("ai: interrupted; the prompt and the partial reply are saved");
            }
            footer(&ctx.ui);
            Err(Error::Interrupted)
        }
        Err(Error::BrokenPipe) => Err(Error::BrokenPipe),
        Err(e) if empty => {
            let _ = sink.finish();
            ctx.ui.notice(&format!(
                "ai: nothing came back; the prompt is saved with an empty reply; resend it with: ai chat retry {id}"
            ));
            Err(reported(e))
        }
        Err(e) if partial && stopped.is_some() => {
            let _ = sink.finish();
            if let Some(s) = stopped {
                ctx.ui.notice(&stopped_notice(&id, s));
            }
            Err(reported(e))
        }
        Err(e) if partial && unfit => {
            let _ = sink.finish();
            ctx.ui.notice(&format!(
                "ai: the reply that does not fit is saved in chat {id}, marked interrupted; ask again with: ai chat retry {id}"
            ));
            Err(reported(e))
        }
        Err(e) if partial => {
            let _ = sink.finish();
            ctx.ui.notice(&format!(
                "ai: the reply was cut short; what arrived is saved, marked interrupted; resend the prompt with: ai chat retry {id}"
            ));
            Err(reported(e))
        }
        Err(e) => {
            ctx.ui.notice(&format!(
                "ai: the prompt is kept in chat {id}; resend it with: ai chat retry {id}"
            ));
            Err(reported(e))
        }
    };
    Finished {
        result,
        chat: Some(id),
    }
}

/// What a turn stopped at the tool-round limit left, and how to run it again with more.
fn stopped_notice(id: &str, s: Stopped) -> String {
    let saved = if s.rounds == 1 {
        "the tool round is".to_owned()
    } else {
        format!("the {} tool rounds are", s.rounds)
    };
    format!(
        "ai: {saved} saved in chat {id}; the calls the model asked for after that were not run; run the turn again with a higher limit: ai chat retry {id} --max-tool-rounds {}{}",
        s.rounds.saturating_mul(2).max(2),
        if s.data {
            " (with the same --data and --tools-file)"
        } else {
            ""
        }
    )
}

/// The turn could not be written (a full disk, a read-only folder): the store cut the file
/// back, so nothing partial stays; what exists nowhere else now is said, and the prompt shown
/// when it is short enough to copy back.
fn not_saved(ctx: &Ctx, prompt: &str, replied: bool, u: Unsaved) -> Error {
    if replied {
        ctx.ui
            .warn("the reply above is the only copy: it could not be saved");
    }
    if prompt.chars().count() <= 4000 {
        ctx.ui.warn(&format!("your prompt was:\n{prompt}"));
    } else {
        ctx.ui.warn(&format!(
            "your prompt ({} characters) could not be saved either",
            prompt.chars().count()
        ));
    }
    u.into()
}

/// A turn saved nowhere: the reply, or what went wrong.
pub(super) fn unsaved(
    ctx: &Ctx,
    opened: &Opened,
    prepared: Prepared,
    sent: Sent,
) -> Result<Option<Done>> {
    let Sent {
        text,
        end,
        usage,
        ms,
        sink,
        calls,
        ..
    } = sent;
    match end {
        End::Complete if text.trim().is_empty() => {
            let _ = sink.finish();
            Err(Error::backend(format!(
                "{} returned an empty reply",
                opened.route.label
            )))
        }
        End::Complete => {
            sink.finish()?;
            if opened.turn.present != Present::Collect {
                crate::kb::ground::show(&ctx.ui, &prepared.sources);
            }
            Ok(Some(Done {
                route: opened.route.clone(),
                chat: None,
                reply: text,
                usage,
                ms: u128::from(ms),
                sources: prepared.sources,
                tool_calls: calls,
            }))
        }
        End::Interrupted => Err(Error::Interrupted),
        End::Failed(e) => Err(e),
    }
}
