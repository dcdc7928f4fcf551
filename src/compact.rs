//! Compaction: the chat's own model summarizes all but the newest exchanges; the summary is kept
//! in the chat and sent in their place from then on. The original messages stay on disk.

use std::time::Duration;

use crate::alias::Route;
use crate::backend::{self, Request, transcript};
use crate::chat::record::{self, Record, Role as DiskRole, SummaryRec};
use crate::chat::store::Chat;
use crate::chat::window;
use crate::conversation::{Message, Part, Role};
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::output::Sink;
use crate::target::Modes;

/// Exchanges kept out of the summary by default.
pub(crate) const DEFAULT_KEEP: u64 = 4;

const SUMMARIZER: &str = "You condense conversations into summaries that let them continue \
    without the original. You write only the summary.";

const ASK: &str = "Summarize the conversation below so that it can continue from your summary \
    alone. Keep every fact, decision, name, number, file name and code identifier, what was \
    tried and how it went, and each open question; drop pleasantries. Write short paragraphs or \
    lists, with no preamble.";

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
    // What is summarized: the previous summary and the turns after it, quoted between
    // markers their text cannot imitate, so nothing planted in an old message or file can pass
    // for an instruction (the summary itself is later sent as quoted data, never as system).
    let entries: Vec<_> = window::history(&chat.records, from)
        .into_iter()
        .filter(|e| e.turn().is_some_and(|t| t <= through))
        .collect();
    let mut old = window::select(&entries, 0, 0, usize::MAX).messages;
    let before: u64 = old.iter().map(|m| window::estimate_message(m) as u64).sum();
    if let Some(p) = &previous {
        old.insert(
            0,
            Message {
                role: Role::User,
                parts: vec![Part::Summary {
                    through_turn: p.through_turn,
                    text: p.content.clone(),
                }],
            },
        );
    }
    let text = format!("{ASK}\n\n{}", transcript::quote_conversation(&old));
    let messages = [Message::text(Role::User, text)];
    let req = Request {
        route,
        system: Some(SUMMARIZER),
        messages: &messages,
        modes: Modes::default(),
        timeout: timeout.unwrap_or(ctx.config.timeout),
        timeout_given: timeout.is_some(),
        no_wait: false,
        tools: &[],
        schema: None,
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
        let m = match r {
            Record::Message(m) => m,
            Record::Round(x) if x.turn <= through => return extra,
            Record::Round(x) => {
                let [calls, results] = window::round(x);
                extra +=
                    (window::estimate_message(&calls) + window::estimate_message(&results)) as u64;
                continue;
            }
            _ => continue,
        };
        if m.turn.is_some_and(|t| t <= through) {
            return extra;
        }
        // A count written before the latest summary still includes what it replaced.
        let current = summary.is_none_or(|s| m.ts >= s.ts);
        if let (DiskRole::Assistant, Some(n), true) = (m.role, m.history_tokens, current) {
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
    prior_tokens(chat)
        + fixed_tokens(system, chat.header.summary.as_ref())
        + window::estimate(prompt) as u64
}

/// Estimated tokens that every turn sends besides its history: the system prompt and the
/// latest summary (quoted).
pub(crate) fn fixed_tokens(system: Option<&str>, summary: Option<&SummaryRec>) -> u64 {
    let summary = summary.map(|s| Message {
        role: Role::User,
        parts: vec![Part::Summary {
            through_turn: s.through_turn,
            text: s.content.clone(),
        }],
    });
    (system.map_or(0, window::estimate) + summary.as_ref().map_or(0, window::estimate_message))
        as u64
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
