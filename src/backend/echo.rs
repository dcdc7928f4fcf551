//! The built-in `echo` backend: no AI, it replies with an account of what it received.
//! Lets pipes, chats and scripts be tried with nothing else installed.

use super::{End, Outcome, Request};
use crate::conversation::Role;
use crate::output::Sink;

pub(crate) fn send(req: &Request<'_>, sink: &mut dyn Sink) -> Outcome {
    let text = reply(req);
    let end = match sink.chunk(text.as_bytes()) {
        Ok(()) => End::Complete,
        Err(e) => End::Failed(e),
    };
    Outcome {
        text,
        end,
        usage: None,
        calls: Vec::new(),
    }
}

fn reply(req: &Request<'_>) -> String {
    let earlier = req.messages.len().saturating_sub(1);
    let user_turns = req.messages.iter().filter(|m| m.role == Role::User).count();
    let prompt = req.prompt();
    let mut head = format!(
        "echo: model {}, {} characters, {} line{}",
        req.route.model,
        prompt.chars().count(),
        prompt.lines().count(),
        if prompt.lines().count() == 1 { "" } else { "s" },
    );
    if earlier > 0 {
        head.push_str(&format!(
            ", {earlier} earlier message{} ({} from you)",
            plural(earlier),
            user_turns - 1
        ));
    }
    if let Some(system) = req.system {
        head.push_str(&format!(
            ", system prompt of {} characters",
            system.chars().count()
        ));
    }
    let passages = req.messages.last().map_or(0, |m| {
        m.parts
            .iter()
            .map(|p| match p {
                crate::conversation::Part::Sources(s) => s.len(),
                _ => 0,
            })
            .sum()
    });
    if passages > 0 {
        head.push_str(&format!(
            ", {passages} passage{} from notes",
            plural(passages)
        ));
    }
    if req.modes.json {
        head.push_str(", json mode");
    }
    // What was attached this turn, and what earlier turns say was.
    let mut lines = String::new();
    for m in req.messages {
        for p in &m.parts {
            if let crate::conversation::Part::Attachment(a) = p {
                lines.push_str(&a.note(a.data.is_none()));
                lines.push('\n');
            }
        }
    }
    format!("{head}\n{lines}{prompt}\n")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
