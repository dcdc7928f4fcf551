//! Compaction: the chat's own model summarizes all but the newest exchanges; the summary is kept
//! in the chat and sent in their place from then on. The original messages stay on disk.

use std::time::Duration;

use crate::alias::Route;
use crate::backend::{self, Message, Request, Role};
use crate::call::Ctx;
use crate::chat::record::{self, MessageRec, Record, SummaryRec};
use crate::chat::store::{Chat, Wait};
use crate::chat::window;
use crate::cli::Modes;
use crate::error::{Error, Result};
use crate::output::{self, Sink};

/// Exchanges kept out of the summary by default.
pub(crate) const DEFAULT_KEEP: u64 = 4;

const SUMMARIZER: &str = "You condense conversations into summaries that let them continue \
    without the original. You write only the summary.";

const ASK: &str = "Summarize the conversation below so that it can continue from your summary \
    alone. Keep every fact, decision, name, number, file name and code identifier, what was \
    tried and how it went, and each open question; drop pleasantries. Write short paragraphs or \
    lists, with no preamble.";

/// The system prompt as sent: the chat's own, then the latest summary.
pub(crate) fn with_summary(system: Option<&str>, summary: Option<&SummaryRec>) -> Option<String> {
    let Some(s) = summary else {
        return system.map(str::to_owned);
    };
    let part = format!(
        "Summary of the earlier part of this conversation (turns 1–{}):\n{}",
        s.through_turn, s.content
    );
    Some(match system {
        Some(sys) if !sys.trim().is_empty() => format!("{sys}\n\n{part}"),
        _ => part,
    })
}

/// `ai chat compact ID [--keep N]`.
pub(crate) fn command(
    ctx: &Ctx,
    id: &str,
    keep: u64,
    timeout: Option<Duration>,
    no_wait: bool,
) -> Result<()> {
    crate::chat::store::check_id(id)?;
    let Some(id) = ctx.store.find(id) else {
        return Err(
            Error::not_found(format!("no chat '{id}'")).hint("`ai chat list` shows your chats")
        );
    };
    let wait = if no_wait {
        Wait::No
    } else {
        Wait::UpTo(timeout.unwrap_or(ctx.config.timeout))
    };
    let mut chat = ctx.store.open(&id, wait, None, &ctx.ui)?;
    let route = crate::call::chat_route(&chat, &ctx.config)?;
    match run(ctx, &mut chat, &route, keep, timeout)? {
        Some(summary) => output::print_stdout(&format!("{}\n", summary.content.trim_end())),
        None => Ok(()),
    }
}

/// Summarize the exchanges of `chat` before its newest `keep` ones (and after its latest
/// summary) with `route`, and record the summary. `None` when there is nothing to summarize.
pub(crate) fn run(
    ctx: &Ctx,
    chat: &mut Chat,
    route: &Route,
    keep: u64,
    timeout: Option<Duration>,
) -> Result<Option<SummaryRec>> {
    chat.load_all()?;
    let previous = chat.header.summary.clone();
    let from = previous.as_ref().map_or(0, |s| s.through_turn);
    let through = chat.turns.saturating_sub(keep);
    if through <= from {
        ctx.ui.notice(&format!(
            "ai: chat {}: nothing to summarize (it has {} exchange{} after its last summary; --keep {keep})",
            chat.id,
            chat.turns - from.min(chat.turns),
            if chat.turns - from.min(chat.turns) == 1 { "" } else { "s" },
        ));
        return Ok(None);
    }
    let old: Vec<&MessageRec> = chat
        .messages()
        .filter(|m| m.turn.is_some_and(|t| t > from && t <= through))
        .collect();
    let before: u64 = old
        .iter()
        .map(|m| window::estimate(&m.content) as u64)
        .sum();
    let mut text = format!("{ASK}\n\n");
    if let Some(p) = &previous {
        text.push_str(&format!(
            "[summary of turns 1–{}]\n{}\n\n",
            p.through_turn, p.content
        ));
    }
    for m in &old {
        let who = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        text.push_str(&format!(
            "[{who}, turn {}]\n{}\n\n",
            m.turn.unwrap_or(0),
            m.content
        ));
    }
    let messages = [Message {
        role: Role::User,
        content: text,
    }];
    let req = Request {
        route,
        system: Some(SUMMARIZER),
        messages: &messages,
        modes: Modes::default(),
        timeout: timeout.unwrap_or(ctx.config.timeout),
        timeout_given: timeout.is_some(),
        no_wait: false,
    };
    ctx.ui.notice(&format!(
        "ai: summarizing turns {}–{through} of chat {} with {}…",
        from + 1,
        chat.id,
        route.label
    ));
    let mut sink = Quiet;
    let content = backend::send(&req, &ctx.config, &mut sink, &ctx.ui)?.into_result()?;
    let content = content.trim().to_owned();
    if content.is_empty() {
        return Err(Error::backend(format!(
            "{} returned an empty summary; nothing was changed",
            route.label
        )));
    }
    let after = window::estimate(&content) as u64;
    let summary = SummaryRec {
        content,
        ts: record::now(),
        through_turn: through,
    };
    chat.add_summary(summary.clone())?;
    ctx.ui.notice(&format!(
        "ai: chat {}: turns 1–{through} are now one summary (about {before} estimated tokens into {after}); the messages stay on disk",
        chat.id
    ));
    Ok(Some(summary))
}

/// Keeps a reply off stdout (the caller gets it from the outcome).
struct Quiet;

impl Sink for Quiet {
    fn chunk(&mut self, _: &[u8]) -> Result<()> {
        Ok(())
    }
}

/// Estimated tokens of the conversation since its latest summary, before this turn: the count
/// kept on the newest reply written after that summary, plus any later messages.
pub(crate) fn prior_tokens(chat: &Chat) -> u64 {
    let summary = chat.header.summary.as_ref();
    let through = summary.map_or(0, |s| s.through_turn);
    let mut extra = 0u64;
    for r in chat.records.iter().rev() {
        let Record::Message(m) = r else { continue };
        if m.turn.is_some_and(|t| t <= through) {
            return extra;
        }
        // A count written before the latest summary still includes what it replaced.
        let current = summary.is_none_or(|s| m.ts >= s.ts);
        if let (Role::Assistant, Some(n), true) = (m.role, m.history_tokens, current) {
            return n + extra;
        }
        extra += window::estimate(&m.content) as u64;
    }
    // Nothing counted in what was read: guess the rest from its size (JSON adds about a fifth).
    extra
        + if chat.complete {
            0
        } else {
            chat.unread_bytes / 5
        }
}

/// Estimated tokens a turn with everything since the summary would send.
pub(crate) fn weigh(chat: &Chat, system: Option<&str>, prompt: &str) -> u64 {
    let summary = chat.header.summary.as_ref();
    let system = with_summary(system, summary);
    prior_tokens(chat)
        + system.as_deref().map_or(0, window::estimate) as u64
        + window::estimate(prompt) as u64
}

pub(crate) fn overflow_warning(chat: &Chat, route: &Route, weight: u64, context: u64) -> String {
    let id = &chat.id;
    format!(
        "chat {id} is about {weight} estimated tokens, {}% of the {context} that {model} accepts. Your choices:\n  \
         continue as is (older messages are left out of what is sent): nothing to do\n  \
         summarize older turns into one message: ai chat compact {id}\n  \
         start a new chat (this one is kept): ai {model} chat \"…\"",
        weight * 100 / context.max(1),
        model = route.label,
    )
}
