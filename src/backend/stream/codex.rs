//! codex `exec --json`: JSON lines of `thread.started`, `turn.started`, `item.*`,
//! `turn.completed` (usage), `turn.failed` and `error`. The answer is an `agent_message` item;
//! an `item.completed` of type `error` is a warning, even on success.

use serde::Deserialize;

use super::{ErrorBody, State, typed};
use crate::chat::record::Usage;
use crate::error::Result;

#[derive(Debug, Default)]
pub(super) struct Codex {}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    item: Option<Item>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<ErrorBody>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    output_tokens: Option<u64>,
}

impl Codex {
    pub(super) fn event(
        &mut self,
        v: &str,
        st: &mut State,
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        let Some(ev) = typed::<Event>(v) else {
            return Ok(());
        };
        match ev.kind.as_str() {
            "item.completed" => match ev.item {
                Some(Item {
                    kind,
                    text: Some(text),
                }) if kind == "agent_message" => {
                    // With `--output-schema` the last message is the JSON.
                    st.structured = Some(text.clone());
                    st.new_block(out)?;
                    st.emit(&text, out)
                }
                _ => Ok(()),
            },
            "turn.completed" => {
                st.finished = true;
                // An `error` before a completed turn was transient (codex reports its
                // "Reconnecting... 1/5" so, then carries on): the turn did complete.
                st.error = None;
                if let Some(u) = ev.usage {
                    st.usage = Some(Usage {
                        input: u.input_tokens,
                        output: u.output_tokens,
                        cost_usd: None,
                    });
                }
                Ok(())
            }
            "turn.failed" => {
                st.finished = true;
                let msg = ev.error.and_then(|e| e.message);
                if let Some(m) = msg.filter(|m| !m.trim().is_empty()) {
                    st.error = Some(m);
                } else if st.error.is_none() {
                    st.error = Some("the turn failed".into());
                }
                Ok(())
            }
            // Kept in case no `turn.failed` follows; a `turn.failed` message wins.
            "error" => {
                if let Some(m) = ev.message.filter(|m| !m.trim().is_empty()) {
                    st.error = Some(m);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
