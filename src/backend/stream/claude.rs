//! claude `--output-format stream-json --verbose --include-partial-messages`, and qwen
//! `-o stream-json --include-partial-messages`, whose events are shaped like claude's:
//! `stream_event` (text deltas), `assistant`, `result` (`is_error`, usage, cost).

use serde::Deserialize;
use serde_json::Value;

use super::{ErrorBody, State, typed};
use crate::chat::record::Usage;
use crate::error::Result;

/// How qwen begins an API error that it streams as reply text.
const QWEN_API_ERROR: &str = "[API Error";

#[derive(Debug, Default)]
pub(super) struct Claude {
    /// qwen: text blocks that may be an API error are held until it is clear they are not.
    qwen: bool,
    /// Text of the current block, held (qwen).
    held: String,
    holding: bool,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    parent_tool_use_id: Option<Value>,
}

#[derive(Deserialize)]
struct StreamEvent {
    event: Inner,
}

#[derive(Deserialize)]
struct Inner {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    content_block: Option<Block>,
    #[serde(default)]
    delta: Option<Delta>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct ResultEvent<'a> {
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    subtype: Option<String>,
    /// The whole reply again: decoded only when it is needed (no deltas came, or it is the
    /// error message).
    #[serde(default, borrow)]
    result: Option<&'a serde_json::value::RawValue>,
    /// qwen puts its error message here.
    #[serde(default)]
    error: Option<ErrorBody>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default, deserialize_with = "crate::chat::record::lenient::cost")]
    total_cost_usd: Option<f64>,
    /// `--json-schema`: the reply as JSON (its `result` text is then empty, or words).
    #[serde(default, borrow)]
    structured_output: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    cache_read_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::chat::record::lenient::count")]
    output_tokens: Option<u64>,
}

/// A `result` that is a string (it can be missing, or null).
fn text_of(raw: Option<&serde_json::value::RawValue>) -> Option<String> {
    serde_json::from_str::<Option<String>>(raw?.get())
        .ok()
        .flatten()
}

impl Claude {
    pub(super) fn new(qwen: bool) -> Claude {
        Claude {
            qwen,
            ..Claude::default()
        }
    }

    pub(super) fn event(
        &mut self,
        v: &str,
        st: &mut State,
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        let Some(env) = typed::<Envelope>(v) else {
            return Ok(());
        };
        // Events of a subagent (a tool call's own conversation) are not the reply.
        if env
            .parent_tool_use_id
            .as_ref()
            .is_some_and(|p| !p.is_null())
        {
            return Ok(());
        }
        match env.kind.as_str() {
            "stream_event" => {
                let Some(ev) = typed::<StreamEvent>(v) else {
                    return Ok(());
                };
                self.stream_event(ev.event, st, out)
            }
            "result" => {
                let Some(r) = typed::<ResultEvent>(v) else {
                    return Ok(());
                };
                self.result(r, st, out)
            }
            _ => Ok(()),
        }
    }

    fn stream_event(
        &mut self,
        ev: Inner,
        st: &mut State,
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        match ev.kind.as_str() {
            "content_block_start" if ev.content_block.is_some_and(|b| b.kind == "text") => {
                self.release(st, out)?;
                st.new_block(out)?;
                self.holding = self.qwen;
                Ok(())
            }
            "content_block_delta" => match ev.delta {
                Some(Delta {
                    kind,
                    text: Some(text),
                }) if kind == "text_delta" => {
                    if !self.holding {
                        return st.emit(&text, out);
                    }
                    self.held.push_str(&text);
                    if !QWEN_API_ERROR.starts_with(self.held.as_str())
                        && !self.held.starts_with(QWEN_API_ERROR)
                    {
                        self.holding = false;
                        let held = std::mem::take(&mut self.held);
                        st.emit(&held, out)?;
                    }
                    Ok(())
                }
                _ => Ok(()),
            },
            "content_block_stop" => self.release(st, out),
            _ => Ok(()),
        }
    }

    /// A held block that is not an API error is reply text after all.
    fn release(&mut self, st: &mut State, out: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        if self.held.starts_with(QWEN_API_ERROR) {
            return Ok(());
        }
        self.holding = false;
        let held = std::mem::take(&mut self.held);
        st.emit(&held, out)
    }

    fn result(
        &mut self,
        r: ResultEvent<'_>,
        st: &mut State,
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        st.finished = true;
        if let Some(u) = r.usage {
            st.usage = Some(Usage {
                input: u.input_tokens.map(|i| {
                    i.saturating_add(u.cache_creation_input_tokens.unwrap_or(0))
                        .saturating_add(u.cache_read_input_tokens.unwrap_or(0))
                }),
                output: u.output_tokens,
                cost_usd: r.total_cost_usd,
            });
        } else if r.total_cost_usd.is_some() {
            st.usage = Some(Usage {
                cost_usd: r.total_cost_usd,
                ..Usage::default()
            });
        }
        if r.is_error {
            let own = r
                .error
                .and_then(|e| e.message)
                .or_else(|| text_of(r.result))
                .filter(|m| !m.trim().is_empty());
            st.error = Some(own.unwrap_or_else(|| {
                format!(
                    "it reported an error ({})",
                    r.subtype.as_deref().unwrap_or("no message")
                )
            }));
            self.held.clear();
            self.holding = false;
            return Ok(());
        }
        if let Some(raw) = r.structured_output.filter(|raw| raw.get() != "null") {
            st.structured = Some(raw.get().to_owned());
        }
        // Text held as a possible API error was the reply after all.
        self.holding = false;
        let held = std::mem::take(&mut self.held);
        st.emit(&held, out)?;
        // Nothing streamed (no partial messages): the result is the reply.
        if st.text.is_empty()
            && let Some(text) = text_of(r.result)
        {
            st.emit(&text, out)?;
        }
        Ok(())
    }

    /// The stream ended: text held as a possible API error is dropped if it is one.
    pub(super) fn finish(
        &mut self,
        st: &mut State,
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        self.release(st, out)
    }
}
