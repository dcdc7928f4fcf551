//! All printing goes through here: the reply on stdout, everything else on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::error::Error;
pub(crate) use crate::sanitize::sanitize;
use crate::sanitize::{self as clean, Cleaner};

/// How to talk on stderr, settled once per call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ui {
    pub(crate) quiet: bool,
    pub(crate) color: bool,
    /// stderr is a terminal (where a spinner may be on the current line).
    tty: bool,
}

impl Ui {
    pub(crate) fn new(quiet: bool) -> Ui {
        Ui {
            quiet,
            color: stderr_color(),
            tty: io::stderr().is_terminal(),
        }
    }

    /// On a terminal, start from a clean line (a spinner may be showing).
    fn line_start(&self) -> &'static str {
        if self.tty { "\r\x1b[K" } else { "" }
    }

    /// A notice (`ai: …`), silenced by `-q`. Cleaned: notices quote file names, titles and
    /// backends.
    pub(crate) fn notice(&self, msg: &str) {
        if !self.quiet {
            let _ = writeln!(
                io::stderr().lock(),
                "{}{}",
                self.line_start(),
                self.paint("2", &sanitize(msg))
            );
        }
    }

    /// Text the user asked for (the session's `/help` and answers to its commands): shown even
    /// with `-q`, cleaned like a notice.
    pub(crate) fn say(&self, msg: &str) {
        let _ = writeln!(
            io::stderr().lock(),
            "{}{}",
            self.line_start(),
            sanitize(msg)
        );
    }

    /// A warning, silenced by `-q`; cleaned like a notice.
    pub(crate) fn warn(&self, msg: &str) {
        if !self.quiet {
            let label = self.paint("33", "warning:");
            let msg = sanitize(msg);
            let _ = writeln!(io::stderr().lock(), "{}{label} {msg}", self.line_start());
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

/// Colour on stderr: only on a terminal, never with a non-empty `NO_COLOR`.
fn stderr_color() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && io::stderr().is_terminal()
}

/// `--json-stream`: stdout carries JSON lines (the reply's pieces, then the outcome) for a
/// program such as `ai serve`. Set once at the start of a call, before anything is printed; it
/// is a property of the process's stdout, like the terminal test, so it is kept beside it.
static JSON_STREAM: AtomicBool = AtomicBool::new(false);

/// `ai -i` on a terminal: replies shown with their markdown styled ([`crate::mdterm`]).
static MARKDOWN: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_markdown() {
    MARKDOWN.store(true, Ordering::SeqCst);
}

pub(crate) fn set_json_stream() {
    JSON_STREAM.store(true, Ordering::SeqCst);
}

pub(crate) fn json_stream() -> bool {
    JSON_STREAM.load(Ordering::SeqCst)
}

/// One line of `--json-stream` output (the `done` line is built by `present`).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum StreamLine<'a> {
    Delta {
        text: &'a str,
    },
    /// A tool call that ran (`line` is what stderr shows for it).
    Tool {
        name: &'a str,
        arguments: &'a str,
        status: &'a str,
        ms: u64,
        line: &'a str,
    },
    Error {
        error: &'a str,
        hint: Option<&'a str>,
        exit_code: i32,
        /// The chat the call wrote to (it holds the prompt as pending, or a partial reply), so
        /// a client continues it rather than starting another.
        #[serde(skip_serializing_if = "Option::is_none")]
        chat: Option<&'a str>,
    },
}

/// The chat of the call under way, once it has one: named by its `--json-stream` error line.
static CALL_CHAT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The call writes to chat `id` (created or continued). Process-wide: under `ai a b c` each
/// turn sets it and the last wins, harmless only while `--json-stream` (its one reader) takes
/// one model; see the crate's `//!` (R2-2).
pub(crate) fn set_call_chat(id: &str) {
    if let Ok(mut chat) = CALL_CHAT.lock() {
        *chat = Some(id.to_owned());
    }
}

/// Write one JSON line to stdout, flushed.
pub(crate) fn print_line(line: &impl Serialize) -> Result<(), Error> {
    let mut text = serde_json::to_string(line)
        .map_err(|e| Error::backend(format!("cannot encode JSON: {e}")))?;
    text.push('\n');
    write_stdout(text.as_bytes())
}

/// With `--json-stream`, the error line on stdout for a failure that ends the call (the usual
/// `error:` line is on stderr as well). A program reading stdout then always sees how it ended.
pub(crate) fn print_error_line(err: &Error) {
    if json_stream() {
        let message = err.to_string();
        let chat = CALL_CHAT.lock().ok().and_then(|c| c.clone());
        let _ = print_line(&StreamLine::Error {
            error: &message,
            hint: err.hint_text(),
            exit_code: err.exit_code(),
            chat: chat.as_deref(),
        });
    }
}

/// `error: …` then `hint: …`, always shown (also with `-q`); with `--json-stream` also as the
/// error line on stdout.
pub(crate) fn print_error(err: &Error) {
    print_error_line(err);
    let color = stderr_color();
    let paint = |code: &str, t: &str| {
        if color {
            format!("\x1b[{code}m{t}\x1b[0m")
        } else {
            t.to_owned()
        }
    };
    // Errors quote backends, servers and files: never let them drive the terminal.
    let mut e = io::stderr().lock();
    let _ = writeln!(
        e,
        "{} {}",
        paint("1;31", "error:"),
        sanitize(&err.to_string())
    );
    if let Some(hint) = err.hint_text() {
        let _ = writeln!(e, "{} {}", paint("1;36", "hint:"), sanitize(hint));
    }
}

/// Write a whole product (a table, JSON, an ID) to stdout.
pub(crate) fn print_stdout(text: &str) -> Result<(), Error> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Write model or file text (an export, a reply shown whole) to stdout: made safe on a terminal
/// ([`sanitize`]), byte-exact into a pipe or a file.
pub(crate) fn print_foreign(text: &str) -> Result<(), Error> {
    if io::stdout().is_terminal() {
        print_stdout(&sanitize(text))
    } else {
        print_stdout(text)
    }
}

/// A shell command from a model, before it is printed (`cmd`) or shown and run (`run`): refused
/// when it holds a control or invisible character, since what is pasted or run would then differ
/// from what the terminal shows. Pipes too: `cmd` output is meant to be run.
pub(crate) fn check_command(command: &str) -> Result<(), Error> {
    if !clean::has_hidden(command) {
        return Ok(());
    }
    Err(Error::backend(format!(
        "the model's command holds control or invisible characters, so it is not used: {}",
        clean::spell_out(command)
    ))
    .hint("nothing was printed or run; ask again, or read the whole reply with `ai chat show`"))
}

fn stdout_error(e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Error::BrokenPipe
    } else {
        Error::Backend {
            msg: format!("cannot write to standard output: {e}"),
            hint: None,
        }
    }
}

/// Where a reply goes as it arrives (stdout, flushed per chunk). The backend keeps the text.
pub(crate) trait Sink {
    fn chunk(&mut self, bytes: &[u8]) -> Result<(), Error>;
}

/// The longest reply kept (HTTP streams, a backend CLI's stdout, anything a sink captures): a
/// reply is held whole to be saved in the chat, so it needs a bound. Real replies are well
/// under 1 MiB (128k tokens is about 0.5 MiB).
pub(crate) const MAX_REPLY: usize = 8 * 1024 * 1024;

/// Streams to stdout (or not, for `--json`, `cmd` and several models) and counts what it saw.
/// It keeps no copy: the backend's outcome holds the text, once.
pub(crate) struct ReplySink {
    /// Bytes of reply so far.
    received: usize,
    /// The last byte of the reply was a newline.
    ends_in_newline: bool,
    to_stdout: bool,
    spinner: Option<Spinner>,
    /// Cleans the stream when stdout is a terminal (a pipe gets the bytes exactly).
    terminal: Option<Cleaner>,
    /// `--json-stream`: each piece becomes a delta line; this holds the start of a UTF-8
    /// character cut between two pieces.
    lines: Option<Vec<u8>>,
    /// Markdown styled line by line (`ai -i` on a terminal), after cleaning.
    styler: Option<crate::mdterm::Styler>,
}

impl ReplySink {
    pub(crate) fn new(to_stdout: bool) -> ReplySink {
        let lines = to_stdout && json_stream();
        ReplySink {
            received: 0,
            ends_in_newline: false,
            to_stdout,
            spinner: None,
            // JSON escapes every control character: no cleaning needed (or wanted) there.
            terminal: (to_stdout && !lines && io::stdout().is_terminal()).then(Cleaner::new),
            lines: lines.then(Vec::new),
            // Only where the stream is cleaned for a terminal.
            styler: (to_stdout
                && !lines
                && MARKDOWN.load(Ordering::SeqCst)
                && io::stdout().is_terminal())
            .then(crate::mdterm::Styler::new),
        }
    }

    /// Show a spinner on stderr (terminals only, not with `-q`) until the first byte of reply.
    pub(crate) fn spinning(mut self, ui: &Ui, label: &str) -> ReplySink {
        self.spinner = Spinner::start(ui, label);
        self
    }

    /// Stop and clear the spinner (before anything else is printed).
    pub(crate) fn stop_spinner(&mut self) {
        self.spinner.take();
    }

    /// End the streamed reply with a newline if it lacks one.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        self.spinner.take();
        if let Some(carry) = self.lines.take() {
            // A reply that ended inside a character: what is left, replaced, as a last piece.
            if !carry.is_empty() {
                let text = String::from_utf8_lossy(&carry);
                print_line(&StreamLine::Delta { text: &text })?;
            }
            return Ok(());
        }
        if let Some(cleaner) = &mut self.terminal {
            let mut tail = String::new();
            cleaner.finish(&mut tail);
            if let Some(styler) = &mut self.styler {
                let mut styled = String::new();
                styler.push(&tail, &mut styled);
                styler.finish(&mut styled);
                tail = styled;
            }
            write_stdout(tail.as_bytes())?;
        }
        if self.to_stdout && self.received > 0 && !self.ends_in_newline {
            let mut out = io::stdout().lock();
            out.write_all(b"\n")
                .and_then(|()| out.flush())
                .map_err(stdout_error)?;
        }
        Ok(())
    }
}

impl Sink for ReplySink {
    fn chunk(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.to_stdout {
            // The spinner's line is cleared before the reply starts on the same terminal.
            self.spinner.take();
        }
        if self.received + bytes.len() > MAX_REPLY {
            return Err(Error::Backend {
                msg: format!(
                    "the reply is longer than {} MiB, the most ai keeps; the rest was not read",
                    MAX_REPLY >> 20
                ),
                hint: Some("ask for a shorter answer, or for it in parts".into()),
            });
        }
        self.received += bytes.len();
        if let Some(&last) = bytes.last() {
            self.ends_in_newline = last == b'\n';
        }
        if let Some(carry) = &mut self.lines {
            let text = whole_chars(carry, bytes);
            if !text.is_empty() {
                print_line(&StreamLine::Delta { text: &text })?;
            }
        } else if let Some(cleaner) = &mut self.terminal {
            let mut shown = String::with_capacity(bytes.len());
            cleaner.push_bytes(bytes, &mut shown);
            if let Some(styler) = &mut self.styler {
                let mut styled = String::with_capacity(shown.len() + 16);
                styler.push(&shown, &mut styled);
                shown = styled;
            }
            write_stdout(shown.as_bytes())?;
        } else if self.to_stdout {
            write_stdout(bytes)?;
        }
        Ok(())
    }
}

/// The text of `carry` + `bytes` up to the last whole character (invalid bytes replaced by
/// U+FFFD); the start of a character cut off at the end stays in `carry` for the next piece.
fn whole_chars(carry: &mut Vec<u8>, bytes: &[u8]) -> String {
    carry.extend_from_slice(bytes);
    let mut text = String::with_capacity(carry.len());
    let mut rest: &[u8] = carry;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                text.push_str(s);
                rest = &[];
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                text.push_str(std::str::from_utf8(good).unwrap_or_default());
                match e.error_len() {
                    Some(n) => {
                        text.push('\u{FFFD}');
                        rest = &bad[n..];
                    }
                    None => {
                        rest = bad;
                        break;
                    }
                }
            }
        }
    }
    let keep = rest.to_vec();
    *carry = keep;
    text
}

/// Write and flush a piece of the streamed reply.
fn write_stdout(bytes: &[u8]) -> Result<(), Error> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// A spinner on stderr while a backend thinks: only on a terminal, never with `-q`; it appears
/// after a moment (instant replies never flash it) and clears its line when dropped.
pub(crate) struct Spinner {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    pub(crate) fn start(ui: &Ui, label: &str) -> Option<Spinner> {
        use std::sync::atomic::{AtomicBool, Ordering};
        if ui.quiet || !io::stderr().is_terminal() {
            return None;
        }
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let label = sanitize(label);
        let thread = std::thread::spawn(move || {
            const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
            let started = std::time::Instant::now();
            std::thread::park_timeout(std::time::Duration::from_millis(200));
            let mut shown = false;
            let mut i = 0;
            while !flag.load(Ordering::SeqCst) {
                let secs = started.elapsed().as_secs();
                let _ = write!(
                    io::stderr().lock(),
                    "\r{} {label} {secs}s",
                    FRAMES[i % FRAMES.len()]
                );
                shown = true;
                i += 1;
                std::thread::park_timeout(std::time::Duration::from_millis(100));
            }
            if shown {
                let _ = write!(io::stderr().lock(), "\r\x1b[K");
            }
        });
        Some(Spinner {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Trim the padding comfy-table leaves at line ends (and the one-space left margin).
pub(crate) fn trim_lines(table: &str) -> String {
    table
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn strips_escapes() {
        assert_eq!(sanitize("a\x1b[31mred\x1b[0m b"), "ared b");
        assert_eq!(sanitize("x\x1b]0;title\x07y"), "xy");
        assert_eq!(sanitize("x\x1b]8;;http://e\x1b\\y"), "xy");
        assert_eq!(sanitize("tab\tline\n\r\x08"), "tab\tline\n");
        assert_eq!(sanitize("\u{9b}ok"), "ok");
    }
}

#[cfg(test)]
mod sink_tests {
    use super::{MAX_REPLY, ReplySink, Sink, whole_chars};

    #[test]
    fn characters_cut_between_pieces_are_joined() {
        let text = "aé中🙂z".as_bytes();
        for cut in 0..=text.len() {
            let mut carry = Vec::new();
            let mut got = whole_chars(&mut carry, &text[..cut]);
            got.push_str(&whole_chars(&mut carry, &text[cut..]));
            assert_eq!(got, "aé中🙂z", "cut at {cut}");
            assert!(carry.is_empty());
        }
        let mut carry = Vec::new();
        assert_eq!(whole_chars(&mut carry, b"a\xffb\xe4"), "a\u{FFFD}b");
        assert_eq!(carry, b"\xe4");
    }

    #[test]
    fn the_reply_is_bounded() {
        let mut sink = ReplySink::new(false);
        assert!(sink.chunk(&vec![b'a'; MAX_REPLY]).is_ok());
        let err = sink.chunk(b"b").unwrap_err();
        assert!(err.to_string().contains("8 MiB"), "{err}");
        assert!(sink.finish().is_ok());
    }
}
