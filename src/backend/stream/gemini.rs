//! gemini `-o stream-json`: `init`, `message` (the assistant's with `delta: true` carry the
//! text), tool events, and a final `result` with `status` and `stats`.

use serde::Deserialize;

use super::{ErrorBody, State, typed};
use crate::chat::record::Usage;
use crate::error::Result;

#[derive(Debug, Default)]
pub(super) struct Gemini {
    /// The last event was assistant text (a tool call in between starts a new block).
    in_text: bool,
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Option<String>,
    /// A piece of the message (`true`), or the whole of it.
    #[serde(default)]
    delta: bool,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    error: Option<ErrorBody>,
    #[serde(default)]
    stats: Option<Stats>,
}

#[derive(Deserialize)]
struct Stats {
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    output_tokens: Option<u64>,
}

impl Gemini {
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
            // The deltas; a whole message (no `delta`) only when none came, as it repeats them.
            "message"
                if ev.role.as_deref() == Some("assistant") && (ev.delta || st.text.is_empty()) =>
            {
                if !self.in_text {
                    st.new_block(out)?;
                    self.in_text = true;
                }
                st.emit(ev.content.as_deref().unwrap_or(""), out)
            }
            "message" => Ok(()),
            "result" => {
                st.finished = true;
                if let Some(s) = ev.stats {
                    st.usage = Some(Usage {
                        input: s.input_tokens,
                        output: s.output_tokens,
                        cost_usd: None,
                    });
                }
                if ev.status.as_deref() != Some("success") {
                    let msg = ev.error.and_then(|e| e.message);
                    st.error = Some(msg.filter(|m| !m.trim().is_empty()).unwrap_or_else(|| {
                        format!(
                            "it reported status '{}'",
                            ev.status.as_deref().unwrap_or("none")
                        )
                    }));
                }
                Ok(())
            }
            // A tool call or anything else ends a block of text.
            _ => {
                self.in_text = false;
                Ok(())
            }
        }
    }
}
