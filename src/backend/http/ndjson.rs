//! Newline-delimited JSON (Ollama's stream): one JSON value per line, blank lines skipped,
//! each line at most `sse::MAX_LINE` bytes.

use std::io::{self, BufRead};

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

    /// The next non-blank line (without its line ending), `Ok(None)` at the end of the body.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            self.line.clear();
            if super::sse::read_line(&mut self.inner, &mut self.line)? == 0 {
                return Ok(None);
            }
            while matches!(self.line.last(), Some(b'\n' | b'\r')) {
                self.line.pop();
            }
            if !self.line.iter().all(u8::is_ascii_whitespace) {
                return Ok(Some(&self.line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(input: &[u8]) -> Vec<Vec<u8>> {
        let mut r = Reader::new(input);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l.to_vec());
        }
        out
    }

    #[test]
    fn lines_and_endings() {
        let got = lines(b"{\"a\":1}\r\n\n  \n{\"done\":true}");
        assert_eq!(
            got,
            vec![b"{\"a\":1}".to_vec(), b"{\"done\":true}".to_vec()]
        );
    }

    #[test]
    fn every_split_point() {
        let data = b"{\"message\":{\"content\":\"he\"}}\n{\"message\":{\"content\":\"llo\"}}\r\n{\"done\":true}\n";
        let whole = lines(data);
        for cut in 1..data.len() {
            let chained = io::Read::chain(&data[..cut], &data[cut..]);
            let mut r = Reader::new(io::BufReader::with_capacity(2, chained));
            let mut got = Vec::new();
            while let Some(l) = r.next_line().unwrap() {
                got.push(l.to_vec());
            }
            assert_eq!(got, whole);
        }
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = lines(&bytes);
        }
    }
}
