//! Tool calls put together from a stream. Each protocol's interpreter turns its frames into
//! [`CallPart`]s: OpenAI sends a call in fragments keyed by `index` (ID and name once, the
//! arguments as a JSON string in pieces), Anthropic per content-block index (`input_json_delta`),
//! Gemini and Ollama whole calls. The [`Assembler`] joins them; once the stream is complete,
//! [`Assembler::finish`] gives the calls in order, each with an ID unique in its reply.
//!
//! Nothing a server sends can make it panic or grow without bound: at most [`MAX_CALLS`]
//! calls, [`MAX_ARGS`] bytes of arguments each and [`MAX_ROUND_ARGS`] in all; past any, the
//! reply is refused.
//!
//! A key names one call only while nothing says otherwise: Ollama's `/v1` labels every parallel
//! call `index: 0`, and servers that leave `index` out send each call whole. A fragment that
//! brings a different ID or name than the call open under its key, or a name after that call's
//! arguments are complete, starts a new call.

use crate::conversation::ToolCall;

/// Calls in one reply, at most.
pub(crate) const MAX_CALLS: usize = 128;
/// Bytes of one call's arguments, at most.
pub(crate) const MAX_ARGS: usize = 1 << 20;
/// Bytes of the arguments of all the calls of one reply, at most: a round is saved in the chat
/// and sent back with every later request of the turn.
pub(crate) const MAX_ROUND_ARGS: usize = 2 << 20;

/// A piece of a tool call, as an interpreter read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CallPart {
    /// The fragment's key (OpenAI `index`, Anthropic block index); `None`: a whole new call.
    pub(crate) index: Option<u64>,
    pub(crate) id: Option<String>,
    pub(crate) name: Option<String>,
    /// A piece of the arguments' JSON text (whole for Gemini and Ollama).
    pub(crate) arguments: Option<String>,
    /// Gemini's `thoughtSignature`.
    pub(crate) signature: Option<String>,
}

#[derive(Debug, Default)]
struct Partial {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
    signature: Option<String>,
}

/// The calls of one reply, as they are put together.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    open: Vec<Partial>,
    /// Bytes of arguments so far, over every call.
    total: usize,
}

impl Partial {
    /// Does `part`, sent under this call's key, begin another call?
    fn is_another(&self, part: &CallPart) -> bool {
        let differs = |new: &Option<String>, old: &str| {
            new.as_deref()
                .is_some_and(|n| !n.is_empty() && !old.is_empty() && n != old)
        };
        if differs(&part.id, &self.id) || differs(&part.name, &self.name) {
            return true;
        }
        // The same name again with arguments of its own, after this call's are complete.
        part.id.as_deref().is_none_or(str::is_empty)
            && part.name.as_deref().is_some_and(|n| n == self.name)
            && part
                .arguments
                .as_deref()
                .is_some_and(|a| !a.trim().is_empty())
            && !self.arguments.trim().is_empty()
            && serde_json::from_str::<serde::de::IgnoredAny>(&self.arguments).is_ok()
    }
}

impl Assembler {
    /// Add a piece. An error says why the reply cannot be used.
    pub(crate) fn add(&mut self, part: CallPart) -> Result<(), String> {
        let at = match part.index {
            Some(i) => self
                .open
                .iter()
                .rposition(|p| p.index == Some(i))
                .filter(|&at| !self.open[at].is_another(&part)),
            None => None,
        };
        let at = match at {
            Some(at) => at,
            None => {
                if self.open.len() >= MAX_CALLS {
                    return Err(format!(
                        "the reply asks for more than {MAX_CALLS} tool calls at once"
                    ));
                }
                self.open.push(Partial {
                    index: part.index,
                    ..Partial::default()
                });
                self.open.len() - 1
            }
        };
        let p = &mut self.open[at];
        // The ID and the name come once; a later copy of either must not double them.
        if let Some(id) = part.id.filter(|s| !s.is_empty())
            && p.id.is_empty()
        {
            p.id = id;
        }
        if let Some(name) = part.name.filter(|s| !s.is_empty())
            && p.name.is_empty()
        {
            p.name = name;
        }
        if let Some(args) = part.arguments {
            if p.arguments.len() + args.len() > MAX_ARGS {
                return Err(format!(
                    "a tool call's arguments are longer than {} KiB",
                    MAX_ARGS >> 10
                ));
            }
            if self.total + args.len() > MAX_ROUND_ARGS {
                return Err(format!(
                    "the tool calls' arguments are longer than {} MiB in all",
                    MAX_ROUND_ARGS >> 20
                ));
            }
            self.total += args.len();
            p.arguments.push_str(&args);
        }
        if part.signature.is_some() {
            p.signature = part.signature;
        }
        Ok(())
    }

    /// The calls, in the order they began. A call without an ID gets one (`call_N`); an ID
    /// seen before gets a suffix, so every result finds its call. Arguments left empty are `{}`.
    pub(crate) fn finish(&mut self) -> Vec<ToolCall> {
        let mut out: Vec<ToolCall> = Vec::with_capacity(self.open.len());
        for (n, p) in self.open.drain(..).enumerate() {
            let mut id = if p.id.is_empty() {
                format!("call_{}", n + 1)
            } else {
                p.id
            };
            let mut k = 2;
            while out.iter().any(|c| c.id == id) {
                id = format!("{id}_{k}");
                k += 1;
            }
            let arguments = if p.arguments.trim().is_empty() {
                "{}".to_owned()
            } else {
                p.arguments
            };
            out.push(ToolCall {
                id,
                name: p.name,
                arguments,
                signature: p.signature,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(index: Option<u64>, id: &str, name: &str, args: &str) -> CallPart {
        CallPart {
            index,
            id: (!id.is_empty()).then(|| id.to_owned()),
            name: (!name.is_empty()).then(|| name.to_owned()),
            arguments: (!args.is_empty()).then(|| args.to_owned()),
            signature: None,
        }
    }

    #[test]
    fn fragments_by_index_interleaved() {
        let mut a = Assembler::default();
        a.add(part(Some(0), "call_a", "get", "")).unwrap();
        a.add(part(Some(1), "call_b", "keys", "{\"pa")).unwrap();
        a.add(part(Some(0), "", "", "{\"x\":")).unwrap();
        a.add(part(Some(1), "", "", "th\":\"/\"}")).unwrap();
        a.add(part(Some(0), "", "", "1}")).unwrap();
        let calls = a.finish();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("call_a", "get")
        );
        assert_eq!(calls[0].arguments, "{\"x\":1}");
        assert_eq!(calls[1].arguments, "{\"path\":\"/\"}");
    }

    #[test]
    fn whole_calls_get_ids_and_duplicates_are_told_apart() {
        let mut a = Assembler::default();
        a.add(part(None, "", "f", "")).unwrap();
        a.add(part(None, "same", "g", "{}")).unwrap();
        a.add(part(None, "same", "h", "{}")).unwrap();
        let calls = a.finish();
        assert_eq!(calls[0].id, "call_1");
        assert_eq!(calls[0].arguments, "{}");
        assert_eq!(calls[1].id, "same");
        assert_eq!(calls[2].id, "same_2");
    }

    #[test]
    fn bounded() {
        let mut a = Assembler::default();
        for i in 0..MAX_CALLS as u64 {
            a.add(part(Some(i), "", "f", "")).unwrap();
        }
        assert!(a.add(part(Some(9999), "", "f", "")).is_err());
        let mut b = Assembler::default();
        b.add(part(Some(0), "", "f", &"x".repeat(MAX_ARGS)))
            .unwrap();
        assert!(b.add(part(Some(0), "", "", "y")).is_err());
        // H2-3: every call within its own bound, too much together.
        let mut c = Assembler::default();
        let big = "x".repeat(MAX_ARGS - 16);
        for i in 0..(MAX_ROUND_ARGS / big.len()) as u64 {
            c.add(part(Some(i), "", "f", &big)).unwrap();
        }
        let e = c.add(part(Some(99), "", "f", &big)).unwrap_err();
        assert!(e.contains("in all"), "{e}");
    }

    #[test]
    fn a_reused_key_with_another_id_or_name_is_another_call() {
        // H2-5: Ollama's /v1 sends every parallel call as index 0.
        let mut a = Assembler::default();
        a.add(part(Some(0), "a1", "json_keys", "{\"path\": \"/\"}"))
            .unwrap();
        a.add(part(Some(0), "b2", "json_value", "{\"pointer\": "))
            .unwrap();
        a.add(part(Some(0), "", "", "\"/k0\"}")).unwrap();
        let calls = a.finish();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("a1", "json_keys")
        );
        assert_eq!(calls[0].arguments, "{\"path\": \"/\"}");
        assert_eq!(
            (calls[1].id.as_str(), calls[1].name.as_str()),
            ("b2", "json_value")
        );
        assert_eq!(calls[1].arguments, "{\"pointer\": \"/k0\"}");
        // No IDs: a second call of the same tool after the first one's arguments are whole.
        let mut a = Assembler::default();
        a.add(part(Some(0), "", "f", "{\"x\":")).unwrap();
        a.add(part(Some(0), "", "f", "1}")).unwrap();
        a.add(part(Some(0), "", "f", "{\"x\":2}")).unwrap();
        a.add(part(Some(0), "", "f", "")).unwrap();
        let calls = a.finish();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0].arguments, "{\"x\":1}");
        assert_eq!(calls[1].arguments, "{\"x\":2}");
        // The ID and name repeated in every fragment stay one call.
        let mut a = Assembler::default();
        a.add(part(Some(3), "c", "f", "{\"x\"")).unwrap();
        a.add(part(Some(3), "c", "f", ":1}")).unwrap();
        assert_eq!(a.finish().len(), 1);
    }
}
