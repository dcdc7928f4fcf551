//! Just enough HTTP/1.1 for `ai serve`, on std's `TcpStream`: one request per connection (every
//! answer says `Connection: close`), a bounded head, a body only by `Content-Length`, and one
//! deadline for the whole request, so a client that sends slowly or nothing at all cannot hold
//! a connection. Answers are JSON, or server-sent events for a streamed call.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use serde::Serialize;

/// The longest request head (request line and headers) read.
const MAX_HEAD: usize = 16 * 1024;

/// A request line and its headers; the body is read on demand ([`Conn::read_body`]).
#[derive(Debug)]
pub(super) struct Head {
    pub(super) method: String,
    /// The path, without the query.
    pub(super) path: String,
    /// The query, without its `?` (empty when there is none).
    pub(super) query: String,
    headers: Vec<(String, String)>,
}

impl Head {
    /// The first header of this name (names compare case-insensitively).
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The header when it is given exactly once.
    pub(super) fn single(&self, name: &str) -> Option<&str> {
        let mut all = self
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name));
        match (all.next(), all.next()) {
            (Some((_, v)), None) => Some(v.as_str()),
            _ => None,
        }
    }
}

/// Why a request could not be read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ReadError {
    /// The client closed, or sent nothing before the deadline: there is no one to answer.
    Silent,
    /// Part of a request came, then the deadline passed (408).
    TimedOut,
    /// The head is larger than [`MAX_HEAD`] (431).
    TooLarge,
    /// Not an HTTP/1.x request this server can read (400).
    Bad(&'static str),
}

impl ReadError {
    pub(super) fn status(&self) -> u16 {
        match self {
            ReadError::Silent | ReadError::Bad(_) => 400,
            ReadError::TimedOut => 408,
            ReadError::TooLarge => 431,
        }
    }

    pub(super) fn message(&self) -> &'static str {
        match self {
            ReadError::Silent => "no request",
            ReadError::TimedOut => "the request did not arrive in time",
            ReadError::TooLarge => "the request head is larger than 16 KiB",
            ReadError::Bad(why) => why,
        }
    }
}

/// One connection: the stream, the bytes read past the head, and the request's deadline.
pub(super) struct Conn {
    pub(super) stream: TcpStream,
    buf: Vec<u8>,
    deadline: Instant,
    /// How much of the client's input [`Conn::close`] reads and drops, at most.
    drain: usize,
}

/// What closing reads and drops of input nobody asked for (a body never read), at most.
const DRAIN: usize = 16 * 1024 * 1024;
/// What closing reads of a body refused for its size (413), at most: all of it below this,
/// so that a client that sends the whole body before it reads (Python's urllib and requests)
/// gets to read the answer rather than a broken pipe.
const DRAIN_REFUSED: usize = 1024 * 1024 * 1024;

impl Conn {
    pub(super) fn new(stream: TcpStream, idle: Duration) -> Conn {
        Conn {
            stream,
            buf: Vec::new(),
            deadline: Instant::now() + idle,
            drain: DRAIN,
        }
    }

    /// Read more bytes into the buffer before the deadline; Ok(0) at the end of the stream.
    fn fill(&mut self) -> Result<usize, ReadError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.late());
        }
        // A zero timeout would mean "none"; `left` is not zero here.
        let _ = self.stream.set_read_timeout(Some(left));
        let mut chunk = [0u8; 8192];
        loop {
            return match self.stream.read(&mut chunk) {
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    Ok(n)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    Err(self.late())
                }
                Err(_) => Err(ReadError::Silent),
            };
        }
    }

    fn late(&self) -> ReadError {
        if self.buf.is_empty() {
            ReadError::Silent
        } else {
            ReadError::TimedOut
        }
    }

    /// Read the request line and headers.
    pub(super) fn read_head(&mut self) -> Result<Head, ReadError> {
        let end = loop {
            if let Some(end) = head_end(&self.buf) {
                break end;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(ReadError::TooLarge);
            }
            if self.fill()? == 0 {
                return Err(if self.buf.is_empty() {
                    ReadError::Silent
                } else {
                    ReadError::Bad("the request ended inside its head")
                });
            }
        };
        if end.0 > MAX_HEAD {
            return Err(ReadError::TooLarge);
        }
        let head = parse_head(&self.buf[..end.0])?;
        self.buf.drain(..end.1);
        Ok(head)
    }

    /// Read a body of `len` bytes (its size already checked by the caller).
    pub(super) fn read_body(&mut self, len: usize) -> Result<Vec<u8>, ReadError> {
        while self.buf.len() < len {
            if self.fill()? == 0 {
                return Err(ReadError::Bad(
                    "the request body is shorter than its Content-Length",
                ));
            }
        }
        let mut body = std::mem::take(&mut self.buf);
        body.truncate(len);
        Ok(body)
    }

    /// Tell a client that waits for it (`Expect: 100-continue`, as curl does for larger
    /// bodies) to send the body.
    pub(super) fn continue_100(&mut self) {
        let _ = self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    /// Answer with one JSON value and close.
    pub(super) fn json(self, status: u16, body: &impl Serialize, extra: &[(&str, &str)]) {
        let mut text = serde_json::to_vec(body).unwrap_or_else(|_| b"{}".to_vec());
        text.push(b'\n');
        self.send(status, "application/json", &text, extra);
    }

    /// Answer with a body of this type (the page, its script and style, a note) and close.
    pub(super) fn send(
        mut self,
        status: u16,
        content_type: &str,
        body: &[u8],
        extra: &[(&str, &str)],
    ) {
        let mut head = status_line(status);
        head.push_str(&format!(
            "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
            body.len()
        ));
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let sent = self
            .stream
            .write_all(head.as_bytes())
            .and_then(|()| self.stream.write_all(body))
            .and_then(|()| self.stream.flush());
        if sent.is_ok() {
            self.close();
        }
    }

    /// Start an event stream (200); the events follow with [`Conn::event`].
    pub(super) fn start_events(&mut self) -> io::Result<()> {
        let mut head = status_line(200);
        head.push_str("Content-Type: text/event-stream\r\nX-Accel-Buffering: no\r\n\r\n");
        self.stream.write_all(head.as_bytes())?;
        self.stream.flush()
    }

    /// One server-sent event (JSON data, one line), flushed.
    pub(super) fn event(&mut self, name: &str, data: &impl Serialize) -> io::Result<()> {
        write_event(&mut self.stream, name, data)
    }

    /// A body of `len` bytes is refused unread: closing reads it whole (up to a bound), so
    /// that the client, still sending, sees the answer and not a reset connection.
    pub(super) fn refuse_body(&mut self, len: usize) {
        self.drain = len.saturating_add(DRAIN).min(DRAIN_REFUSED);
    }

    /// Close politely: end our side, then read what the client still sends for a moment, so
    /// that closing with unread input (a body never read) does not reset the connection and
    /// lose the answer on the way.
    pub(super) fn close(self) {
        let Conn {
            mut stream, drain, ..
        } = self;
        let _ = stream.shutdown(Shutdown::Write);
        // Two seconds, and one more for each 32 MiB of a large refused body.
        let until = Instant::now() + Duration::from_secs(2 + (drain >> 25) as u64);
        let mut drained = 0usize;
        let mut sink = [0u8; 64 * 1024];
        while drained < drain {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
                break;
            }
            match stream.read(&mut sink) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    }
}

/// Write one server-sent event (JSON data on one line) and flush it.
pub(super) fn write_event(w: &mut impl Write, name: &str, data: &impl Serialize) -> io::Result<()> {
    let data = serde_json::to_string(data).map_err(io::Error::other)?;
    w.write_all(format!("event: {name}\ndata: {data}\n\n").as_bytes())?;
    w.flush()
}

/// The Content-Security-Policy of every answer: the page's own script and style only (no
/// inline script or style, nothing from elsewhere), requests only to this server, no framing.
pub(super) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// Headers every answer carries.
fn status_line(status: u16) -> String {
    format!(
        "HTTP/1.1 {status} {}\r\nConnection: close\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nContent-Security-Policy: {CSP}\r\n\
         Referrer-Policy: no-referrer\r\nX-Frame-Options: DENY\r\n",
        reason(status)
    )
}

/// `%XX` escapes decoded (and `+` as a space when `plus` is set, as in a query); bytes that
/// are not UTF-8 are replaced.
pub(super) fn percent_decode(text: &str, plus: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first value of `name` in a query (`a=1&b=2`), decoded.
pub(super) fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(k, true) == name).then(|| percent_decode(v, true))
    })
}

/// Where the head ends: (length of the head, length with its blank line).
fn head_end(buf: &[u8]) -> Option<(usize, usize)> {
    let crlf = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4));
    let lf = buf
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| (i, i + 2));
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn parse_head(bytes: &[u8]) -> Result<Head, ReadError> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let request = lines.next().unwrap_or_default();
    let mut parts = request.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Bad(
            "the request line is not METHOD PATH HTTP/1.1",
        ));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() {
        return Err(ReadError::Bad("only HTTP/1.x is served"));
    }
    let mut headers = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            return Err(ReadError::Bad("folded header lines are not accepted"));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(ReadError::Bad("a header line has no colon"));
        };
        if name.is_empty() || name.contains([' ', '\t']) {
            return Err(ReadError::Bad("a header name is not valid"));
        }
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let target = target.split('#').next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(Head {
        method: method.to_owned(),
        path: path.to_owned(),
        query: query.to_owned(),
        headers,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        421 => "Misdirected Request",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A 503 for a connection over the cap, written without waiting (the accept loop sends it):
/// what does not fit in the socket's buffer at once is not sent.
pub(super) fn refuse_busy(stream: &mut TcpStream) {
    let body = br#"{"error":{"message":"too many connections","hint":"try again in a moment"}}"#;
    let mut text = status_line(503);
    text.push_str(&format!(
        "Content-Type: application/json\r\nRetry-After: 1\r\nContent-Length: {}\r\n\r\n",
        body.len() + 1
    ));
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(body);
    bytes.push(b'\n');
    let _ = stream.set_nonblocking(true);
    let _ = stream.write_all(&bytes);
    let _ = stream.shutdown(Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_parsed_or_refused() {
        let h =
            parse_head(b"POST /chats/K7Q/rename?x=1 HTTP/1.1\r\nHost: a:1\r\nX-A:  b \r\nhost: c")
                .unwrap();
        assert_eq!(
            (h.method.as_str(), h.path.as_str()),
            ("POST", "/chats/K7Q/rename")
        );
        assert_eq!(h.header("x-a"), Some("b"));
        assert_eq!(h.header("HOST"), Some("a:1"));
        assert_eq!(h.single("host"), None, "two Host headers");
        for bad in [
            &b"GET /\r\n"[..],
            b"GET / HTTP/2.0",
            b"GET  / HTTP/1.1",
            b"GET / HTTP/1.1\r\n folded",
            b"GET / HTTP/1.1\r\nno colon",
            b"GET / HTTP/1.1\r\nbad name: x",
        ] {
            assert!(parse_head(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn queries_and_escapes_are_decoded() {
        let h = parse_head(b"GET /kb/notes/search?q=a+b%20c&k=3#frag HTTP/1.1").unwrap();
        assert_eq!(
            (h.path.as_str(), h.query.as_str()),
            ("/kb/notes/search", "q=a+b%20c&k=3")
        );
        assert_eq!(query_param(&h.query, "q").as_deref(), Some("a b c"));
        assert_eq!(query_param(&h.query, "k").as_deref(), Some("3"));
        assert_eq!(query_param(&h.query, "x"), None);
        assert_eq!(query_param("flag", "flag").as_deref(), Some(""));
        assert_eq!(percent_decode("%C3%BCber%2Fx+y", false), "über/x+y");
        for odd in ["%", "%4", "%zz", "a%", "%%41", "%ff"] {
            let _ = percent_decode(odd, true);
        }
        assert_eq!(percent_decode("%zz%4", true), "%zz%4");
        assert_eq!(percent_decode("%%41", true), "%A");
    }

    #[test]
    fn the_head_ends_at_the_first_blank_line() {
        assert_eq!(
            head_end(b"GET / HTTP/1.1\r\nA: b\r\n\r\nbody"),
            Some((20, 24))
        );
        assert_eq!(head_end(b"GET / HTTP/1.1\nA: b\n\nbody"), Some((19, 21)));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n"), None);
    }
}
