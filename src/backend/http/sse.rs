//! Server-sent events over any `BufRead`: `event:`/`data:` fields, comment lines, LF or CRLF,
//! events split across reads (the reader buffers), several `data:` lines joined by newlines.

use std::io::{self, BufRead};

/// The longest line, and the longest event, a stream may send (SSE and NDJSON alike). Real
/// events are a few hundred bytes; without a bound, a server that never sends a newline
/// would fill the memory.
pub(crate) const MAX_LINE: usize = 4 * 1024 * 1024;

fn too_long(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{what} of the stream is longer than 4 MiB, the most ai accepts"),
    )
}

/// `read_until(b'\n')` into `buf`, failing past [`MAX_LINE`] bytes; the count read, 0 at the end.
pub(crate) fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut total = 0;
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(total);
        }
        let (used, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        buf.extend_from_slice(&available[..used]);
        r.consume(used);
        total += used;
        if buf.len() > MAX_LINE {
            return Err(too_long("a line"));
        }
        if done {
            return Ok(total);
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `event:` field, when given.
    pub(crate) name: Option<String>,
    pub(crate) data: String,
}

pub(crate) struct Reader<R> {
    inner: R,
    line: Vec<u8>,
}

impl<R: BufRead> Reader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Reader {
            inner,
            line: Vec::new(),
        }
    }

    /// The next complete event, `Ok(None)` at the end of the body. An event not closed by a
    /// blank line before the end is returned too (some servers omit the last blank line).
    pub(crate) fn next_event(&mut self) -> io::Result<Option<Event>> {
        let mut ev = Event::default();
        let mut has_data = false;
        loop {
            self.line.clear();
            let n = read_line(&mut self.inner, &mut self.line)?;
            if n == 0 {
                return Ok(if has_data || ev.name.is_some() {
                    Some(ev)
                } else {
                    None
                });
            }
            while matches!(self.line.last(), Some(b'\n' | b'\r')) {
                self.line.pop();
            }
            if self.line.is_empty() {
                if has_data || ev.name.is_some() {
                    return Ok(Some(ev));
                }
                continue;
            }
            if self.line[0] == b':' {
                continue; // comment / keep-alive
            }
            let text = String::from_utf8_lossy(&self.line);
            let (field, value) = match text.split_once(':') {
                Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
                None => (text.into_owned(), String::new()),
            };
            match field.as_str() {
                "data" => {
                    if has_data {
                        ev.data.push('\n');
                    }
                    ev.data.push_str(&value);
                    has_data = true;
                    if ev.data.len() > MAX_LINE {
                        return Err(too_long("an event"));
                    }
                }
                "event" => ev.name = Some(value),
                _ => {} // id, retry, unknown fields
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(input: &[u8]) -> Vec<Event> {
        let mut r = Reader::new(input);
        let mut out = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            out.push(e);
        }
        out
    }

    /// A reader that hands out its bytes in pieces of the given sizes.
    struct Pieces<'a> {
        data: &'a [u8],
        sizes: Vec<usize>,
        i: usize,
    }

    impl io::Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self
                .sizes
                .get(self.i)
                .copied()
                .unwrap_or(usize::MAX)
                .max(1)
                .min(self.data.len())
                .min(buf.len());
            self.i += 1;
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    const SAMPLE: &[u8] = b": OPENROUTER PROCESSING\r\n\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\ndata: line1\ndata: line2\n\ndata:[DONE]\n\n";

    #[test]
    fn fields_comments_crlf() {
        let ev = all(SAMPLE);
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[0].name.as_deref(), Some("message_start"));
        assert_eq!(ev[0].data, "{\"a\":1}");
        assert_eq!(ev[1].data, "line1\nline2");
        assert_eq!(ev[2].data, "[DONE]");
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let whole = all(SAMPLE);
        for cut in 1..SAMPLE.len() {
            let reader = io::BufReader::with_capacity(
                3,
                Pieces {
                    data: SAMPLE,
                    sizes: vec![cut, 1, 2],
                    i: 0,
                },
            );
            let mut r = Reader::new(reader);
            let mut got = Vec::new();
            while let Some(e) = r.next_event().unwrap() {
                got.push(e);
            }
            assert_eq!(got, whole, "split at {cut}");
        }
    }

    #[test]
    fn lines_and_events_are_bounded() {
        let long = vec![b'a'; MAX_LINE + 10];
        let mut r = Reader::new(&long[..]);
        assert_eq!(
            r.next_event().unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let half = format!("data: {}\n", "b".repeat(MAX_LINE / 2 + 1));
        let twice = format!("{half}{half}\n");
        let mut r = Reader::new(twice.as_bytes());
        assert_eq!(
            r.next_event().unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        let fits = format!("data: {}\n\n", "c".repeat(MAX_LINE - 7));
        assert_eq!(all(fits.as_bytes()).len(), 1);
    }

    #[test]
    fn unterminated_last_event_is_returned() {
        assert_eq!(all(b"data: x").len(), 1);
        assert!(all(b"").is_empty());
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = all(&bytes);
        }
    }
}
