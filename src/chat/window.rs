//! What is sent: the system prompt, then the newest whole user/assistant exchanges that fit the
//! token budget, then the new prompt. The whole history stays on disk; only this is windowed.

use super::record::{MessageRec, Role};
use crate::backend::Message;

/// Per-message overhead in estimated tokens (role markers, separators).
const OVERHEAD: usize = 4;

/// Tokens are estimated at about 4 characters each.
pub(crate) fn estimate(text: &str) -> usize {
    text.chars().count().div_ceil(4) + OVERHEAD
}

#[derive(Debug)]
pub(crate) struct Window {
    /// Earlier messages to send (whole exchanges, oldest first), then the new prompt.
    pub(crate) messages: Vec<Message>,
    /// Older messages left out.
    pub(crate) left_out: usize,
}

/// Choose the newest whole exchanges of `history` (oldest first) that fit `budget` tokens
/// together with the system prompt and the new prompt. `unloaded` counts messages older than
/// `history` that were not even read (they are left out too).
pub(crate) fn select(
    history: &[&MessageRec],
    unloaded: usize,
    system: Option<&str>,
    prompt: &str,
    budget: usize,
) -> Window {
    let fixed = system.map_or(0, estimate) + estimate(prompt);
    let mut room = budget.saturating_sub(fixed);
    // Exchanges: a user message and the assistant messages that follow it.
    let mut starts: Vec<usize> = Vec::new();
    for (i, m) in history.iter().enumerate() {
        if m.role == Role::User || i == 0 {
            starts.push(i);
        }
    }
    let mut first = history.len();
    for (k, &start) in starts.iter().enumerate().rev() {
        let end = starts.get(k + 1).copied().unwrap_or(history.len());
        let cost: usize = history[start..end].iter().map(|m| cost_of(m)).sum();
        if cost > room {
            break;
        }
        room -= cost;
        first = start;
    }
    let mut messages: Vec<Message> = history[first..]
        .iter()
        .map(|m| Message {
            role: m.role,
            content: sendable(m),
        })
        .collect();
    messages.push(Message {
        role: Role::User,
        content: prompt.to_owned(),
    });
    Window {
        messages,
        left_out: first + unloaded,
    }
}

/// Estimated tokens of a message as sent.
fn cost_of(m: &MessageRec) -> usize {
    if m.content.trim().is_empty() {
        estimate(&sendable(m))
    } else {
        estimate(&m.content)
    }
}

/// A message as sent. Some APIs refuse empty messages (Anthropic, Gemini), and a reply cut off
/// before its first word is stored empty: say what happened instead.
fn sendable(m: &MessageRec) -> String {
    if !m.content.trim().is_empty() {
        return m.content.clone();
    }
    match (m.role, m.interrupted) {
        (Role::Assistant, true) => "(no reply: it was interrupted)".to_owned(),
        (Role::Assistant, false) => "(no reply)".to_owned(),
        (Role::User, _) => "(no message)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::record::Origin;
    use proptest::prelude::*;

    fn m(role: Role, content: String) -> MessageRec {
        MessageRec {
            role,
            content,
            ts: String::new(),
            origin: Origin::default(),
            turn: None,
            usage: None,
            ms: None,
            history_tokens: None,
            interrupted: false,
        }
    }

    #[test]
    fn keeps_newest_pairs() {
        let h: Vec<MessageRec> = (0..10)
            .flat_map(|i| {
                [
                    m(Role::User, format!("q{i} {}", "x".repeat(40))),
                    m(Role::Assistant, format!("a{i} {}", "y".repeat(40))),
                ]
            })
            .collect();
        let refs: Vec<&MessageRec> = h.iter().collect();
        let w = select(&refs, 0, Some("sys"), "new", 100);
        assert_eq!(w.messages.last().unwrap().content, "new");
        assert_eq!(w.messages[0].role, Role::User);
        assert!(w.messages.len() % 2 == 1);
        assert_eq!(w.left_out + w.messages.len() - 1, 20);
        assert!(w.messages[w.messages.len() - 2].content.starts_with("a9"));
    }

    proptest! {
        #[test]
        fn window_invariants(
            sizes in proptest::collection::vec((0usize..400, 0usize..400), 0..40),
            sys in 0usize..300,
            prompt in 0usize..300,
            budget in 0usize..3000,
        ) {
            let h: Vec<MessageRec> = sizes.iter().enumerate()
                .flat_map(|(i, (u, a))| [m(Role::User, format!("{i}{}", "u".repeat(*u))), m(Role::Assistant, "a".repeat(*a))])
                .collect();
            let refs: Vec<&MessageRec> = h.iter().collect();
            let system = "s".repeat(sys);
            let w = select(&refs, 0, Some(&system), &"p".repeat(prompt), budget);
            let sent = &w.messages[..w.messages.len() - 1];
            // The new prompt is always last; pairs stay whole and are the newest ones.
            prop_assert_eq!(w.messages.last().unwrap().content.len(), prompt);
            prop_assert!(sent.len().is_multiple_of(2));
            prop_assert_eq!(w.left_out + sent.len(), h.len());
            for (i, msg) in sent.iter().enumerate() {
                prop_assert_eq!(msg.role, if i % 2 == 0 { Role::User } else { Role::Assistant });
                prop_assert!(!msg.content.is_empty(), "nothing is sent empty");
                let stored = &h[w.left_out + i].content;
                prop_assert!(stored.is_empty() || &msg.content == stored);
            }
            // History is only sent within the budget (system and prompt always go).
            let cost: usize = sent.iter().map(|m| estimate(&m.content)).sum();
            let fixed = estimate(&system) + estimate(&"p".repeat(prompt));
            prop_assert!(sent.is_empty() || cost + fixed <= budget);
            // Greedy: the next older pair would not have fitted.
            if w.left_out >= 2 {
                let next: usize = h[w.left_out - 2..w.left_out].iter().map(cost_of).sum();
                prop_assert!(cost + fixed + next > budget);
            }
        }
    }
}
