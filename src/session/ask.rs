//! Tools that act, asked for in the session: the question shown on the terminal through the
//! session's own line editor, the answer read there (`y` or `yes` runs it; anything else,
//! Ctrl+C and Ctrl+D do not). Lines typed while the reply streamed, or pasted in the burst
//! whose first line began the turn, are kept for after the turn, never taken as the answer.

use crate::output::Ui;
use crate::tools::approve::{self, Approver, Ask};

use super::{Shared, lock};

pub(super) struct InSession {
    pub(super) editor: Shared,
    pub(super) ui: Ui,
}

impl Approver for InSession {
    fn approve(&self, ask: &Ask<'_>) -> std::result::Result<(), String> {
        let question = approve::question(ask)?;
        let mut editor = lock(&self.editor);
        // Long arguments have lines of their own; the editor's prompt is the last line.
        let (head, last) = match question.rsplit_once('\n') {
            Some((head, last)) => (Some(head), last),
            None => (None, question.as_str()),
        };
        if let Some(head) = head {
            self.ui.say(head);
        }
        match editor.ask(last, &self.ui) {
            Ok(Some(answer)) if approve::yes_word(&answer) => Ok(()),
            _ => Err(ask.declined()),
        }
    }
}
