//! AWS event-stream framing (`application/vnd.amazon.eventstream`), as Bedrock's
//! ConverseStream sends it. Each message is
//!
//! ```text
//! total length (u32 BE) | headers length (u32 BE) | CRC32 of the 8 bytes before
//! headers | payload | CRC32 of everything before it
//! ```
//!
//! and each header is `name length (u8) | name | type (u8) | value`, the value's size given by
//! its type. Both checksums are checked; a message is bounded by [`MAX_MESSAGE`].

use std::io::{self, Read};

/// The longest message accepted. Real events are a few hundred bytes.
pub(crate) const MAX_MESSAGE: usize = 4 * 1024 * 1024;

const PRELUDE: usize = 12;
/// Prelude plus the message checksum: the smallest message there is.
const OVERHEAD: usize = PRELUDE + 4;

/// One message: the string headers (other header types are skipped) and the payload.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) payload: Vec<u8>,
}

impl Message {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// CRC-32 (IEEE, as zlib), bitwise: messages are small and few.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    crc32_update(0, data)
}

fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

pub(crate) struct Reader<R> {
    inner: R,
}

impl<R: Read> Reader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Reader { inner }
    }

    /// Fill `buf`; `Ok(false)` when the body ended before its first byte, an `UnexpectedEof`
    /// error when it ended part way.
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the stream ended inside a message",
                    ));
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// The next message, `Ok(None)` at the end of the body. A body cut inside a message is an
    /// `UnexpectedEof` error; a bad checksum, length or header is `InvalidData`.
    pub(crate) fn next_message(&mut self) -> io::Result<Option<Message>> {
        let mut prelude = [0u8; PRELUDE];
        if !self.fill(&mut prelude)? {
            return Ok(None);
        }
        let total = be32(&prelude[0..4]) as usize;
        let headers_len = be32(&prelude[4..8]) as usize;
        if crc32(&prelude[0..8]) != be32(&prelude[8..12]) {
            return Err(invalid(
                "a message of the event stream has a bad prelude checksum".into(),
            ));
        }
        if total > MAX_MESSAGE {
            return Err(invalid(format!(
                "a message of the event stream is {total} bytes, more than the 4 MiB ai accepts"
            )));
        }
        if total < OVERHEAD || headers_len > total - OVERHEAD {
            return Err(invalid(format!(
                "a message of the event stream has impossible lengths ({total}, headers {headers_len})"
            )));
        }
        let mut rest = vec![0u8; total - PRELUDE];
        if !self.fill(&mut rest)? {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the stream ended inside a message",
            ));
        }
        let (body, crc) = rest.split_at(rest.len() - 4);
        if crc32_update(crc32(&prelude), body) != be32(crc) {
            return Err(invalid(
                "a message of the event stream has a bad checksum".into(),
            ));
        }
        let headers = parse_headers(&body[..headers_len])?;
        let payload = body[headers_len..].to_vec();
        Ok(Some(Message { headers, payload }))
    }
}

/// The headers block: string headers kept, the others checked for size and skipped.
fn parse_headers(mut b: &[u8]) -> io::Result<Vec<(String, String)>> {
    let bad = || invalid("a message of the event stream has a malformed header".into());
    let mut out = Vec::new();
    while let Some((&name_len, rest)) = b.split_first() {
        let name_len = usize::from(name_len);
        if rest.len() < name_len + 1 {
            return Err(bad());
        }
        let name = String::from_utf8_lossy(&rest[..name_len]).into_owned();
        let kind = rest[name_len];
        let rest = &rest[name_len + 1..];
        let fixed = match kind {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | 7 => None,
            _ => return Err(bad()),
        };
        b = match fixed {
            Some(n) => rest.get(n..).ok_or_else(bad)?,
            None => {
                if rest.len() < 2 {
                    return Err(bad());
                }
                let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
                let value = rest.get(2..2 + len).ok_or_else(bad)?;
                if kind == 7 {
                    out.push((name, String::from_utf8_lossy(value).into_owned()));
                }
                &rest[2 + len..]
            }
        };
    }
    Ok(out)
}

/// A message with string headers, framed as a server sends it.
#[cfg(test)]
pub(crate) fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (k, v) in headers {
        h.push(k.len() as u8);
        h.extend_from_slice(k.as_bytes());
        h.push(7);
        h.extend_from_slice(&(v.len() as u16).to_be_bytes());
        h.extend_from_slice(v.as_bytes());
    }
    let total = (OVERHEAD + h.len() + payload.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    let c = crc32(&out);
    out.extend_from_slice(&c.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(bytes: &[u8]) -> io::Result<Vec<Message>> {
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while let Some(m) = r.next_message()? {
            out.push(m);
        }
        Ok(out)
    }

    #[test]
    fn crc_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    /// The `int32_header` encoded vector of AWS's event-stream test suite: one int32 header
    /// (skipped: only string headers are kept) and the payload `{'foo':'bar'}`.
    #[test]
    fn aws_int32_header_vector() {
        let bytes: [u8; 45] = [
            0x00, 0x00, 0x00, 0x2D, 0x00, 0x00, 0x00, 0x10, 0x41, 0xC4, 0x24, 0xB8, 0x0A, 0x65,
            0x76, 0x65, 0x6E, 0x74, 0x2D, 0x74, 0x79, 0x70, 0x65, 0x04, 0x00, 0x00, 0xA0, 0x0C,
            0x7B, 0x27, 0x66, 0x6F, 0x6F, 0x27, 0x3A, 0x27, 0x62, 0x61, 0x72, 0x27, 0x7D, 0x36,
            0xF4, 0x80, 0xA0,
        ];
        let m = all(&bytes).unwrap();
        assert_eq!(m.len(), 1);
        assert!(m[0].headers.is_empty());
        assert_eq!(m[0].payload, b"{'foo':'bar'}");
    }

    #[test]
    fn round_trip_and_damage() {
        let one = frame(
            &[(":event-type", "messageStart")],
            br#"{"role":"assistant"}"#,
        );
        let two = frame(&[(":message-type", "event")], b"");
        let both = [one.clone(), two.clone()].concat();
        let m = all(&both).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].header(":event-type"), Some("messageStart"));
        assert_eq!(m[0].payload, br#"{"role":"assistant"}"#);
        assert_eq!(m[1].header(":message-type"), Some("event"));
        // A flipped payload byte breaks the message checksum.
        let mut bad = one.clone();
        let at = bad.len() - 6;
        bad[at] ^= 1;
        assert_eq!(all(&bad).unwrap_err().kind(), io::ErrorKind::InvalidData);
        // A flipped length breaks the prelude checksum.
        let mut bad = one.clone();
        bad[3] ^= 1;
        assert_eq!(all(&bad).unwrap_err().kind(), io::ErrorKind::InvalidData);
        // Cut anywhere inside: an early end, never a message.
        for cut in 1..one.len() {
            assert_eq!(
                all(&one[..cut]).unwrap_err().kind(),
                io::ErrorKind::UnexpectedEof,
                "cut at {cut}"
            );
        }
        assert!(all(b"").unwrap().is_empty());
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = all(&bytes);
        }

        /// Random bytes almost never pass the prelude checksum; these do, so the header and
        /// payload readers (and Bedrock's interpreter) see arbitrary input.
        #[test]
        fn checksummed_garbage_never_panics(
            headers in proptest::collection::vec(any::<u8>(), 0..128),
            payload in proptest::collection::vec(any::<u8>(), 0..128),
        ) {
            let total = (OVERHEAD + headers.len() + payload.len()) as u32;
            let mut bytes = total.to_be_bytes().to_vec();
            bytes.extend_from_slice(&(headers.len() as u32).to_be_bytes());
            let c = crc32(&bytes);
            bytes.extend_from_slice(&c.to_be_bytes());
            bytes.extend_from_slice(&headers);
            bytes.extend_from_slice(&payload);
            let c = crc32(&bytes);
            bytes.extend_from_slice(&c.to_be_bytes());
            if let Ok(messages) = all(&bytes) {
                let mut out = Vec::new();
                for m in &messages {
                    let _ = crate::backend::http::bedrock::event(m, &mut out);
                }
            }
        }

        #[test]
        fn framed_headers_survive(name in "[a-z:-]{1,20}", value in ".{0,40}", payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let m = all(&frame(&[(&name, &value)], &payload)).unwrap();
            prop_assert_eq!(m[0].header(&name), Some(value.as_str()));
            prop_assert_eq!(&m[0].payload, &payload);
        }
    }
}
