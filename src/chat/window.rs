//! What is sent: the system prompt, then the newest whole exchanges that fit the token budget,
//! then the new prompt. An exchange is a user message and everything its turn wrote after it:
//! tool rounds, then the reply. The whole history stays on disk; only this is windowed.

use super::record::{MessageRec, Record, Role as DiskRole, RoundRec};
use crate::conversation::{Message, Part, Role, ToolCall, ToolResult};

/// Per-message overhead in estimated tokens (role markers, separators).
const OVERHEAD: usize = 4;

/// Tokens are estimated at about 4 characters each.
pub(crate) fn estimate(text: &str) -> usize {
    text.chars().count().div_ceil(4) + OVERHEAD
}

/// Estimated tokens of a message as sent.
pub(crate) fn estimate_message(m: &Message) -> usize {
    let mut tokens = OVERHEAD;
    m.each_text(|t| tokens += t.chars().count().div_ceil(4));
    tokens
}

/// A record of the history that is sent: a message, or a tool round of a turn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Entry<'a> {
    Message(&'a MessageRec),
    Round(&'a RoundRec),
}

impl Entry<'_> {
    fn starts_exchange(&self) -> bool {
        matches!(self, Entry::Message(m) if m.role == DiskRole::User)
    }

    pub(crate) fn turn(&self) -> Option<u64> {
        match self {
            Entry::Message(m) => m.turn,
            Entry::Round(r) => Some(r.turn),
        }
    }
}

/// The records that make up the conversation, oldest first, after turn `after` (the latest
/// summary stands for those up to it), less the turns a retry resent. It starts at a user
/// message: anything before the first one (only an edited file has that) has no exchange to
/// belong to.
pub(crate) fn history(records: &[Record], after: u64) -> Vec<Entry<'_>> {
    // Turns that a retry resent: the resend stands for them.
    let replaced: Vec<u64> = records
        .iter()
        .filter_map(|r| match r {
            Record::Message(m) => m.replaces,
            _ => None,
        })
        .collect();
    let mut entries: Vec<Entry<'_>> = records
        .iter()
        .filter_map(|r| match r {
            Record::Message(m) => Some(Entry::Message(m)),
            Record::Round(x) => Some(Entry::Round(x)),
            _ => None,
        })
        .filter(|e| e.turn().is_none_or(|t| t > after && !replaced.contains(&t)))
        .collect();
    let first_user = entries
        .iter()
        .position(Entry::starts_exchange)
        .unwrap_or(entries.len());
    entries.drain(..first_user);
    entries
}

#[derive(Debug)]
pub(crate) struct Window {
    /// Earlier messages to send (whole exchanges, oldest first); the caller adds the new prompt.
    pub(crate) messages: Vec<Message>,
    /// Older records left out.
    pub(crate) left_out: usize,
}

/// Choose the newest whole exchanges of `history` (oldest first) that fit `budget` tokens
/// beside `fixed` tokens that always go (system prompt, summary, new prompt). `unloaded`
/// counts records older than `history` that were not even read (they are left out too).
pub(crate) fn select(
    history: &[Entry<'_>],
    unloaded: usize,
    fixed: usize,
    budget: usize,
) -> Window {
    let mut room = budget.saturating_sub(fixed);
    let mut starts: Vec<usize> = Vec::new();
    for (i, e) in history.iter().enumerate() {
        if e.starts_exchange() || i == 0 {
            starts.push(i);
        }
    }
    let mut first = history.len();
    let mut chosen: Vec<Vec<Message>> = Vec::new();
    for (k, &start) in starts.iter().enumerate().rev() {
        let end = starts.get(k + 1).copied().unwrap_or(history.len());
        let messages = exchange(&history[start..end]);
        let cost: usize = messages.iter().map(estimate_message).sum();
        if cost > room {
            break;
        }
        room -= cost;
        first = start;
        chosen.push(messages);
    }
    chosen.reverse();
    Window {
        messages: chosen.into_iter().flatten().collect(),
        left_out: first + unloaded,
    }
}

/// One exchange as messages. A turn whose reply never came (cut short after a tool round)
/// gets a stand-in reply, so the conversation stays well formed for every protocol.
fn exchange(entries: &[Entry<'_>]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for e in entries {
        match e {
            Entry::Message(m) => {
                let mut msg = Message::text(
                    match m.role {
                        DiskRole::User => Role::User,
                        DiskRole::Assistant => Role::Assistant,
                    },
                    sendable(m),
                );
                // What was attached is said, not sent again (a web page's text is in the
                // message already).
                let notes = m.attachments.iter().filter(|a| a.url.is_none()).map(|r| {
                    Part::Attachment(crate::media::Attachment {
                        name: r.name.clone(),
                        media_type: r.media_type.clone(),
                        size: r.size,
                        sha256: r.sha256.clone(),
                        data: None,
                        kept: r.kept.clone(),
                    })
                });
                msg.parts.splice(0..0, notes);
                out.push(msg);
            }
            // A round that asked for nothing has nothing to send (the protocols refuse empty
            // messages).
            Entry::Round(r) if r.calls.is_empty() => {}
            Entry::Round(r) => out.extend(round(r)),
        }
    }
    // A turn whose reply never came: after its rounds, or a prompt alone (a record of a newer
    // type after it kept it from counting as torn).
    match out.last() {
        Some(last) if last.role == Role::User => out.push(Message::text(
            Role::Assistant,
            if out.len() > 1 {
                "(no reply: it was interrupted)"
            } else {
                "(no reply)"
            },
        )),
        _ => {}
    }
    out
}

/// A tool round as the two messages every protocol expects: the model's calls, then their
/// results. A round whose call lacks its result (it cannot be written so, but a file can be
/// edited) gets an error result, so no call is ever sent unanswered.
pub(crate) fn round(r: &RoundRec) -> [Message; 2] {
    let mut calls = Vec::new();
    if !r.text.is_empty() {
        calls.push(Part::Text(r.text.clone()));
    }
    let mut results = Vec::new();
    for c in &r.calls {
        calls.push(Part::ToolCall(ToolCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.clone(),
            signature: c.signature.clone(),
        }));
        let result = r.results.iter().find(|x| x.id == c.id);
        results.push(Part::ToolResult(ToolResult {
            call_id: c.id.clone(),
            name: c.name.clone(),
            // A result cut to the size limit says so itself, with what to ask for instead
            // (every writer of `truncated` puts that note in the content): no second note.
            content: match result {
                Some(x) => x.content.clone(),
                None => "(no result: the call did not complete)".to_owned(),
            },
            is_error: result.is_none_or(|x| x.error),
        }));
    }
    [
        Message {
            role: Role::Assistant,
            parts: calls,
        },
        Message {
            role: Role::User,
            parts: results,
        },
    ]
}

/// A message as sent. Some APIs refuse empty messages (Anthropic, Gemini), and a reply cut off
/// before its first word is stored empty: say what happened instead.
fn sendable(m: &MessageRec) -> String {
    if !m.content.trim().is_empty() {
        return m.content.clone();
    }
    match (m.role, m.interrupted) {
        (DiskRole::Assistant, true) => "(no reply: it was interrupted)".to_owned(),
        (DiskRole::Assistant, false) => "(no reply)".to_owned(),
        (DiskRole::User, _) => "(no message)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::record::{CallRec, Origin, ResultRec};
    use proptest::prelude::*;

    fn m(role: DiskRole, content: String, turn: u64) -> Record {
        Record::Message(MessageRec {
            role,
            content,
            ts: String::new(),
            origin: Origin::default(),
            turn: Some(turn),
            usage: None,
            ms: None,
            history_tokens: None,
            interrupted: false,
            sources: Vec::new(),
            empty: false,
            replaces: None,
            attachments: Vec::new(),
        })
    }

    fn rnd(turn: u64, with_result: bool) -> Record {
        Record::Round(RoundRec {
            turn,
            round: 1,
            ts: String::new(),
            text: "let me look".into(),
            calls: vec![CallRec {
                id: "c1".into(),
                name: "search".into(),
                arguments: r#"{"q":"x"}"#.into(),
                signature: None,
            }],
            results: if with_result {
                vec![ResultRec {
                    id: "c1".into(),
                    name: "search".into(),
                    content: "3 hits".into(),
                    error: false,
                    truncated: false,
                }]
            } else {
                Vec::new()
            },
            origin: Origin::default(),
            usage: None,
            ms: None,
        })
    }

    fn text(msg: &Message) -> String {
        msg.plain_text().into_owned()
    }

    #[test]
    fn keeps_newest_pairs() {
        let h: Vec<Record> = (0..10)
            .flat_map(|i| {
                [
                    m(DiskRole::User, format!("q{i} {}", "x".repeat(40)), i + 1),
                    m(
                        DiskRole::Assistant,
                        format!("a{i} {}", "y".repeat(40)),
                        i + 1,
                    ),
                ]
            })
            .collect();
        let w = select(&history(&h, 0), 0, estimate("sys") + estimate("new"), 100);
        assert_eq!(w.messages[0].role, Role::User);
        assert!(w.messages.len().is_multiple_of(2));
        assert_eq!(w.left_out + w.messages.len(), 20);
        assert!(text(w.messages.last().unwrap()).starts_with("a9"));
    }

    #[test]
    fn a_turn_with_rounds_is_one_exchange() {
        let h = vec![
            m(DiskRole::User, "q1".into(), 1),
            m(DiskRole::Assistant, "a1".into(), 1),
            m(DiskRole::User, "q2".into(), 2),
            rnd(2, true),
            m(DiskRole::Assistant, "a2".into(), 2),
        ];
        let all = select(&history(&h, 0), 0, 0, 10_000);
        let roles: Vec<Role> = all.messages.iter().map(|m| m.role).collect();
        use Role::{Assistant as A, User as U};
        assert_eq!(roles, [U, A, U, A, U, A]);
        assert_eq!(all.messages[3].tool_calls().count(), 1);
        assert_eq!(
            all.messages[4].tool_results().next().unwrap().content,
            "3 hits"
        );
        // Too small for turn 2 with its round: the whole exchange goes, never half of it.
        let two = select(&history(&h, 0), 0, 0, estimate("q1") + estimate("a1") + 8);
        assert_eq!(two.left_out, 5);
        assert!(two.messages.is_empty());
        // After a summary through turn 1 only turn 2 is history.
        assert_eq!(history(&h, 1).len(), 3);
    }

    #[test]
    fn a_turn_cut_after_a_round_stays_well_formed() {
        let h = vec![m(DiskRole::User, "q".into(), 1), rnd(1, false)];
        let w = select(&history(&h, 0), 0, 0, 10_000);
        let roles: Vec<Role> = w.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::User, Role::Assistant]
        );
        let result = w.messages[2].tool_results().next().unwrap();
        assert!(result.is_error, "an unanswered call gets an error result");
        assert!(text(&w.messages[3]).contains("interrupted"));
    }

    proptest! {
        #[test]
        fn window_invariants(
            sizes in proptest::collection::vec((0usize..400, 0usize..400, any::<bool>()), 0..40),
            fixed in 0usize..300,
            budget in 0usize..3000,
        ) {
            let h: Vec<Record> = sizes.iter().enumerate()
                .flat_map(|(i, (u, a, r))| {
                    let t = i as u64 + 1;
                    let mut v = vec![m(DiskRole::User, format!("{i}{}", "u".repeat(*u)), t)];
                    if *r { v.push(rnd(t, true)); }
                    v.push(m(DiskRole::Assistant, "a".repeat(*a), t));
                    v
                })
                .collect();
            let entries = history(&h, 0);
            let w = select(&entries, 0, fixed, budget);
            // Whole exchanges, the newest ones: what is sent starts at a user message and
            // alternates user/assistant.
            let sent = &w.messages;
            prop_assert!(sent.len().is_multiple_of(2));
            prop_assert!(w.left_out == entries.len() || entries[w.left_out].starts_exchange());
            for (i, msg) in sent.iter().enumerate() {
                prop_assert_eq!(msg.role, if i % 2 == 0 { Role::User } else { Role::Assistant });
                prop_assert!(msg.texts().iter().any(|t| !t.is_empty()), "nothing is sent empty");
            }
            // History is only sent within the budget.
            let cost: usize = sent.iter().map(estimate_message).sum();
            prop_assert!(sent.is_empty() || cost + fixed <= budget);
            // Greedy: the next older exchange would not have fitted.
            if w.left_out > 0 {
                let start = (0..w.left_out).rev().find(|&i| entries[i].starts_exchange()).unwrap_or(0);
                let next: usize = exchange(&entries[start..w.left_out]).iter().map(estimate_message).sum();
                prop_assert!(cost + fixed + next > budget);
            }
        }
    }
}
