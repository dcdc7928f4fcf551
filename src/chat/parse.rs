//! Reading chat files: the header line, then records read from the end, with torn tails
//! recognised and damaged lines reported by file and line.

use std::path::Path;

use super::record::{self, Header, MessageRec, Record, Role};
use crate::error::{Error, Result};

pub(crate) struct Parsed {
    pub(crate) header: Header,
    pub(crate) records: Vec<Record>,
    pub(crate) complete: bool,
    pub(crate) turns: u64,
    /// Bytes of records before the first one read.
    pub(crate) unread_bytes: u64,
    pub(crate) torn_at: Option<u64>,
    /// The last record lacks its newline (the next write adds it).
    pub(crate) unterminated: bool,
}

pub(crate) fn damaged(path: &Path, line_no: usize, why: String) -> Error {
    Error::config(format!(
        "chat file {} is damaged at line {line_no}: {why}",
        path.display()
    ))
    .hint("nothing was changed; fix or remove that line, or move the file aside")
}

pub(crate) fn parse_header(line: &[u8], path: &Path) -> Result<Header> {
    let header = match Record::parse(line) {
        Ok(Record::Chat(h)) => h,
        Ok(_) => {
            return Err(damaged(
                path,
                1,
                "the first line is not a chat header".into(),
            ));
        }
        Err(e) => return Err(damaged(path, 1, e.to_string())),
    };
    if header.v > record::VERSION {
        return Err(Error::config(format!(
            "chat file {} has format version {}, newer than this ai understands ({})",
            path.display(),
            header.v,
            record::VERSION
        ))
        .hint("upgrade ai"));
    }
    Ok(header)
}

/// Parse a whole chat file. With `need_chars`, records are read from the end until that much
/// content is loaded (a turn needs only what its window can hold); otherwise all of them.
pub(crate) fn parse(bytes: &[u8], need_chars: Option<usize>, path: &Path) -> Result<Parsed> {
    let Some(first_end) = bytes.iter().position(|&b| b == b'\n') else {
        return Err(damaged(
            path,
            1,
            "the header line is missing or incomplete".into(),
        ));
    };
    let header = parse_header(&bytes[..first_end], path)?;
    let body_start = first_end + 1;
    match parse_body(&bytes[body_start..], body_start as u64, true, need_chars) {
        Ok(b) => Ok(Parsed {
            header,
            records: b.records,
            complete: b.complete,
            turns: b.turns,
            unread_bytes: b.stopped_at as u64,
            torn_at: b.torn_at,
            unterminated: b.unterminated,
        }),
        Err((pos, why)) => {
            let line_no = bytes[..body_start + pos]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            Err(damaged(path, line_no, why))
        }
    }
}

pub(crate) struct Body {
    pub(crate) records: Vec<Record>,
    /// Every record of the file was read.
    pub(crate) complete: bool,
    /// `need_chars` of content was reached.
    pub(crate) enough: bool,
    pub(crate) turns: u64,
    /// Where in the buffer reading stopped (the start of the oldest record read).
    pub(crate) stopped_at: usize,
    pub(crate) torn_at: Option<u64>,
    /// The last record is whole but lacks its newline.
    pub(crate) unterminated: bool,
}

/// Parse records in `buf`, which holds the file from byte `offset` to its end. When `at_start`
/// is false the first line of `buf` may be cut and is skipped. Lines are read from the end.
///
/// A torn tail — a last line without its newline, or a user message whose reply never got
/// written (both are always written in one `write`) — is left out and reported in `torn_at`.
/// Any other line that does not parse is an error at its position in `buf`.
pub(crate) fn parse_body(
    buf: &[u8],
    offset: u64,
    at_start: bool,
    need_chars: Option<usize>,
) -> std::result::Result<Body, (usize, String)> {
    let floor = if at_start {
        0
    } else {
        buf.iter()
            .position(|&b| b == b'\n')
            .map_or(buf.len(), |p| p + 1)
    };
    let mut end = buf.len();
    let mut torn_at = None;
    let mut unterminated = false;
    let owned: Vec<u8>;
    let mut buf = buf;
    if end > floor && buf[end - 1] != b'\n' {
        let cut = buf[floor..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(floor, |p| floor + p + 1);
        if Record::parse(&buf[cut..end]).is_ok() {
            // Whole, only its newline is missing (an editor, a copy): keep it, as if the
            // newline were there; the next write adds it.
            unterminated = true;
            owned = [buf, b"\n"].concat();
            buf = &owned;
            end = buf.len();
        } else {
            // A last line cut short never finished being written.
            torn_at = Some(offset + cut as u64);
            end = cut;
        }
    }
    let mut rev: Vec<Record> = Vec::new();
    let mut chars = 0usize;
    let mut pos = end;
    let mut enough = false;
    let mut last_line = true;
    while pos > floor {
        let line_end = pos - 1; // the '\n'
        // The line before: memrchr scans a word at a time, the whole cost of finding lines.
        let start = memchr::memrchr(b'\n', &buf[floor..line_end]).map_or(floor, |p| floor + p + 1);
        let line = &buf[start..line_end];
        pos = start;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let rec = Record::parse(line).map_err(|e| (start, e.to_string()))?;
        if last_line {
            last_line = false;
            // A user message alone at the end is the first half of an interrupted write: it
            // goes down in one write with its reply or its first tool round. (A user message
            // followed by rounds is a turn cut short after those rounds: it is kept.)
            if matches!(&rec, Record::Message(m) if m.role == Role::User) {
                torn_at = Some(offset + start as u64);
                continue;
            }
        }
        match &rec {
            Record::Message(m) => chars += m.content.chars().count(),
            Record::Round(r) => {
                chars += r.text.chars().count()
                    + r.calls.iter().map(|c| c.arguments.len()).sum::<usize>()
                    + r.results.iter().map(|x| x.content.len()).sum::<usize>()
            }
            Record::Chat(_) => return Err((start, "a second chat header".into())),
            _ => {}
        }
        let user = matches!(
            &rec,
            Record::Message(MessageRec {
                role: Role::User,
                ..
            })
        );
        rev.push(rec);
        if let Some(need) = need_chars
            && chars > need
            && user
        {
            enough = true;
            break;
        }
    }
    rev.reverse();
    // The turn count is the newest message's: a round is numbered by its turn's user message.
    let turns = rev
        .iter()
        .rev()
        .find_map(|r| match r {
            Record::Message(m) => m.turn,
            _ => None,
        })
        .unwrap_or(0);
    let complete = at_start && pos <= floor;
    Ok(Body {
        records: rev,
        complete,
        enough,
        turns,
        stopped_at: pos,
        torn_at,
        unterminated,
    })
}
