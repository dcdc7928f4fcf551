//! A prompt that was not answered is kept in its chat as a pending record, so nothing typed is
//! lost and `ai chat retry` can send it later.

use crate::alias::Route;
use crate::chat::record::{self, AttachmentRec, PendingRec, Record};
use crate::chat::store::Chat;
use crate::error::{Error, Result};
use crate::output::Ui;
use crate::route;

/// The pending record of `prompt` (with what was attached to it), failed with `e` (its first
/// line: never a secret).
pub(super) fn record(
    prompt: String,
    route: &Route,
    e: &Error,
    replaces: Option<u64>,
    attachments: Vec<AttachmentRec>,
) -> Record {
    Record::Pending(PendingRec {
        content: prompt,
        ts: record::now(),
        origin: route::origin(route),
        error: e.to_string().lines().next().unwrap_or("").to_owned(),
        replaces,
        attachments,
    })
}

/// Keep a prompt that was not sent (the overflow policy refused, or compaction failed).
pub(super) fn keep(
    chat: &mut Chat,
    prompt: &str,
    route: &Route,
    e: &Error,
    attachments: Vec<AttachmentRec>,
    ui: &Ui,
) -> Result<()> {
    chat.append(
        &[record(prompt.to_owned(), route, e, None, attachments)],
        ui,
    )?;
    ui.notice(&format!(
        "ai: the prompt is kept in chat {id}; resend it with: ai chat retry {id}",
        id = chat.id
    ));
    Ok(())
}
