//! Tool calls put together from a stream. Each protocol's interpreter turns its frames into
//! [`CallPart`]s: OpenAI sends a call in fragments keyed by `index` (ID and name once, the
//! arguments as a JSON string in pieces), Anthropic per content-block index (`input_json_delta`),
//! Gemini and Ollama whole calls. The [`Assembler`] joins them; once the stream is complete,
//! [`Assembler::finish`] gives the calls in order, each with an ID unique in its reply.
//!
//! Nothing a server sends can make it panic or grow without bound: at most [`MAX_CALLS`]
//! calls and [`MAX_ARGS`] bytes of arguments each; past either, the reply is refused.

use crate::conversation::ToolCall;

/// Calls in one reply, at most.
pub(crate) const MAX_CALLS: usize = 128;
/// Bytes of one call's arguments, at most.
pub(crate) const MAX_ARGS: usize = 1 << 20;

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
}

impl Assembler {
    /// Add a piece. An error says why the reply cannot be used.
    pub(crate) fn add(&mut self, part: CallPart) -> Result<(), String> {
        let at = match part.index {
            Some(i) => self.open.iter().position(|p| p.index == Some(i)),
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
    }
}
