//! The structured output of the agent CLIs: one small interpreter per format, a state machine
//! over JSON lines. Text deltas go to the sink as they arrive; usage, cost and the CLI's own
//! error message are kept for the outcome. Unknown event types are ignored.
//!
//! Plain text where JSON was asked is caught before this (by `process.rs`, on the first byte
//! that is not white space) and read as plain text. A first line that starts like JSON but is
//! not switches the decoder to plain mode: the rest of stdout is held, not streamed, and becomes
//! the reply if the CLI exits 0.

mod claude;
mod codex;
mod gemini;

use crate::chat::record::Usage;
use crate::error::Result;
use crate::output::MAX_REPLY;

/// The longest line read from a CLI's JSON stream: a claude `result` line holds the whole
/// reply (and its `assistant` line holds it again), so a little more than the longest reply.
pub(crate) const MAX_LINE: usize = MAX_REPLY + 1024 * 1024;

pub(crate) use crate::config::providers::Format;

/// An `error` object of any of the CLIs: only its message is read.
#[derive(serde::Deserialize)]
pub(super) struct ErrorBody {
    #[serde(default)]
    pub(super) message: Option<String>,
}

/// What the interpreters share: the reply so far, usage, the CLI's error, whether the stream
/// reached its final event.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) text: String,
    pub(crate) usage: Option<Usage>,
    /// The CLI's own error message (a `result` with `is_error`, `turn.failed`, …).
    pub(crate) error: Option<String>,
    /// The final event (`result`, `turn.completed`/`turn.failed`) was seen.
    pub(crate) finished: bool,
    /// The CLI's own structured result, JSON (claude's `structured_output`, codex's last
    /// `agent_message`): the reply when the schema went through the CLI's own flag.
    pub(crate) structured: Option<String>,
}

impl State {
    /// Append reply text and send it on.
    fn emit(&mut self, piece: &str, out: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        self.text.push_str(piece);
        out(piece)
    }

    /// Start a new block of text: separated from earlier text by a blank line.
    fn new_block(&mut self, out: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        if !self.text.is_empty() && !self.text.ends_with("\n\n") {
            let sep = if self.text.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            self.emit(sep, out)?;
        }
        Ok(())
    }
}

enum Interp {
    Claude(claude::Claude),
    Codex(codex::Codex),
    Gemini(gemini::Gemini),
}

/// Reads one CLI's stdout, line by line.
pub(crate) struct Decoder {
    interp: Interp,
    state: State,
    /// The first non-blank line was not JSON: stdout is held as plain text.
    plain: Option<String>,
    /// A JSON event was seen.
    saw_json: bool,
    /// Plain lines inside the JSON stream (the end of them): not the reply, but what the CLI
    /// said when it fails, so they go into its error.
    stray: String,
}

/// The most of a stream's stray plain lines kept (the last of them).
const STRAY_KEEP: usize = 16 * 1024;

/// What a finished stream gave.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub(crate) text: String,
    pub(crate) usage: Option<Usage>,
    pub(crate) error: Option<String>,
    pub(crate) finished: bool,
    /// Stdout was plain text, not JSON: held here, not streamed.
    pub(crate) plain: Option<String>,
    /// At least one JSON event was read.
    pub(crate) saw_json: bool,
    /// Plain lines printed among the JSON events (empty when none), at most the last 16 KiB.
    pub(crate) stray: String,
    /// See [`State::structured`].
    pub(crate) structured: Option<String>,
}

impl Decoder {
    /// A decoder for a structured format (`None` for [`Format::Text`]).
    pub(crate) fn new(format: Format) -> Option<Decoder> {
        let interp = match format {
            Format::Text => return None,
            Format::ClaudeStream => Interp::Claude(claude::Claude::new(false)),
            Format::QwenStream => Interp::Claude(claude::Claude::new(true)),
            Format::CodexJson => Interp::Codex(codex::Codex::default()),
            Format::GeminiStream => Interp::Gemini(gemini::Gemini::default()),
        };
        Some(Decoder {
            interp,
            state: State::default(),
            plain: None,
            saw_json: false,
            stray: String::new(),
        })
    }

    /// One line of stdout (without its newline). Reply text goes to `out`.
    pub(crate) fn line(
        &mut self,
        line: &[u8],
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        let text = String::from_utf8_lossy(line);
        if let Some(plain) = &mut self.plain {
            plain.push_str(&text);
            plain.push('\n');
            return Ok(());
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(());
        }
        // Checked for JSON without building it: each interpreter reads the typed fields it
        // needs straight from the line (a long reply in a `result` is not copied for nothing).
        if !trimmed.starts_with('{')
            || serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_err()
        {
            if !self.saw_json {
                self.plain = Some(format!("{text}\n"));
            } else {
                // A plain line inside a JSON stream (a warning, or the CLI's error said in
                // words): not the reply, kept for the error should the CLI fail.
                self.keep_stray(trimmed);
            }
            return Ok(());
        }
        self.saw_json = true;
        // Nothing after the final event belongs to the reply.
        if self.state.finished {
            return Ok(());
        }
        match &mut self.interp {
            Interp::Claude(c) => c.event(trimmed, &mut self.state, out),
            Interp::Codex(c) => c.event(trimmed, &mut self.state, out),
            Interp::Gemini(g) => g.event(trimmed, &mut self.state, out),
        }
    }

    fn keep_stray(&mut self, line: &str) {
        self.stray.push_str(line);
        self.stray.push('\n');
        if self.stray.len() > 2 * STRAY_KEEP {
            let mut cut = self.stray.len() - STRAY_KEEP;
            while !self.stray.is_char_boundary(cut) {
                cut += 1;
            }
            self.stray.drain(..cut);
        }
    }

    /// Length of the reply so far.
    pub(crate) fn text_len(&self) -> usize {
        self.state.text.len() + self.plain.as_ref().map_or(0, String::len)
    }

    /// The end of stdout. A sink error while sending held text comes with what was decoded.
    pub(crate) fn finish(
        mut self,
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> (Decoded, Result<()>) {
        let r = match &mut self.interp {
            Interp::Claude(c) => c.finish(&mut self.state, out),
            _ => Ok(()),
        };
        let d = Decoded {
            text: self.state.text,
            usage: self.state.usage,
            error: self.state.error,
            finished: self.state.finished,
            plain: self.plain,
            saw_json: self.saw_json,
            stray: self.stray,
            structured: self.state.structured,
        };
        (d, r)
    }
}

/// Splits bytes into lines, failing on a line longer than `limit`.
#[derive(Debug)]
pub(crate) struct Lines {
    buf: Vec<u8>,
    limit: usize,
}

/// A line was longer than the limit.
#[derive(Debug)]
pub(crate) struct LineTooLong;

impl Lines {
    pub(crate) fn new(limit: usize) -> Lines {
        Lines {
            buf: Vec::new(),
            limit,
        }
    }

    /// Add bytes; call `each` for every complete line.
    pub(crate) fn push(
        &mut self,
        mut bytes: &[u8],
        each: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> std::result::Result<Result<()>, LineTooLong> {
        while let Some(i) = bytes.iter().position(|b| *b == b'\n') {
            if self.buf.len() + i > self.limit {
                return Err(LineTooLong);
            }
            let r = if self.buf.is_empty() {
                each(strip_cr(&bytes[..i]))
            } else {
                self.buf.extend_from_slice(&bytes[..i]);
                let line = std::mem::take(&mut self.buf);
                each(strip_cr(&line))
            };
            if r.is_err() {
                return Ok(r);
            }
            bytes = &bytes[i + 1..];
        }
        if self.buf.len() + bytes.len() > self.limit {
            return Err(LineTooLong);
        }
        self.buf.extend_from_slice(bytes);
        Ok(Ok(()))
    }

    /// The last line, if stdout did not end with a newline.
    pub(crate) fn rest(self) -> Vec<u8> {
        self.buf
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Deserialize a typed view of an event, ignoring one that does not fit.
fn typed<'a, T: serde::Deserialize<'a>>(line: &'a str) -> Option<T> {
    serde_json::from_str(line).ok()
}

#[cfg(test)]
mod tests;
