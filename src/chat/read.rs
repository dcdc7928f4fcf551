//! Reading chats without their lock (opened through [`super::open`]): a whole chat for
//! `chat show` and `chat export`, and the row `chat list` shows.
//!
//! A row reads the header, the first record (for a title) and the last records, with a streaming
//! look at each record that never holds its content (a reply of a gigabyte costs a scan, not a
//! gigabyte). In a chat up to 1 MiB every line is also checked to be JSON, so a line damaged
//! anywhere marks the row; in a larger one only the lines read are.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::legacy;
use super::open::{Refused, kind_of, open_checked, open_regular};
use super::parse::{parse, parse_header};
use super::record::{Header, Record, Role};
use super::store::Store;
use crate::error::{Error, Result};

/// Read a whole chat (header and every record), checking every line.
pub(crate) fn read_all(store: &Store, id: &str) -> Result<(Header, Vec<Record>)> {
    let jsonl = store.path(id);
    if let Some(mut file) = open_regular(&jsonl, false)? {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| Error::io("read", &jsonl, e))?;
        let parsed = parse(&bytes, None, &jsonl)?;
        return Ok((parsed.header, parsed.records));
    }
    let path = legacy::path(&store.dir, id);
    let Some(mut file) = open_regular(&path, false)? else {
        return Err(
            Error::not_found(format!("no chat '{id}'")).hint("`ai chat list` shows your chats")
        );
    };
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| Error::io("read", &path, e))?;
    legacy::parse(id, &text, &path)
}

/// Read a whole chat for salvage (`chat export`): like [`read_all`], but a damaged line is
/// left out instead of failing the read. Returns the line numbers left out (a torn last line
/// is left out silently, as every reader does). The header must be readable.
pub(crate) fn read_salvage(store: &Store, id: &str) -> Result<(Header, Vec<Record>, Vec<usize>)> {
    let jsonl = store.path(id);
    let Some(mut file) = open_regular(&jsonl, false)? else {
        let (header, records) = read_all(store, id)?;
        return Ok((header, records, Vec::new()));
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io("read", &jsonl, e))?;
    let strict = match parse(&bytes, None, &jsonl) {
        Ok(p) => return Ok((p.header, p.records, Vec::new())),
        Err(e) => e,
    };
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let Some(first) = lines.first() else {
        return Err(strict);
    };
    let Ok(header) = parse_header(first, &jsonl) else {
        return Err(strict);
    };
    let mut records = Vec::new();
    let mut left_out = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(1) {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match Record::parse(line) {
            Ok(Record::Chat(_)) => left_out.push(i + 1),
            Ok(r) => records.push(r),
            // A last line without its newline that does not parse was cut short: torn.
            Err(_) if i + 1 == lines.len() => {}
            Err(_) => left_out.push(i + 1),
        }
    }
    Ok((header, records, left_out))
}

/// One row of `chat list`.
#[derive(Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) id: String,
    /// The model of the newest reply (or failed prompt); the chat's first model before any.
    pub(crate) model: Option<String>,
    pub(crate) turns: u64,
    /// Seconds since the Unix epoch.
    pub(crate) last_used: u64,
    pub(crate) title: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) legacy: bool,
    /// The entry cannot be read as a chat (the title says why).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) damaged: bool,
}

/// In a chat this size or smaller every line is checked for its row.
const WHOLE: u64 = 1024 * 1024;
/// How much of a large chat's first record is read for its title.
const TITLE_PART: u64 = 64 * 1024;
/// How many of a large chat's last records are looked at for its turn count and model.
const TAIL_RECORDS: usize = 64;

/// The list row of the entry `id` at `path` (never an error: a bad entry is a damaged row).
pub(crate) fn row(id: &str, path: &Path, is_legacy: bool, mtime: SystemTime) -> Row {
    let last_used = mtime
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let damaged = |why: String| Row {
        id: id.to_owned(),
        model: None,
        turns: 0,
        last_used,
        title: why,
        legacy: is_legacy,
        damaged: true,
    };
    let file = match open_checked(path, false) {
        Ok(Some(f)) => f,
        Ok(None) => return damaged("(gone while listing)".into()),
        Err(Refused::NotRegular(t)) => {
            return damaged(format!("(damaged: {}, not a chat file)", kind_of(&t)));
        }
        Err(Refused::Io(e)) => return damaged(format!("(unreadable: {e})")),
    };
    // A new chat's header reaches the disk with its first turn (one sync for both): a crash
    // before that turn was saved can leave the name with nothing in it.
    if !is_legacy && file.metadata().is_ok_and(|m| m.len() == 0) {
        return damaged(format!(
            "(empty: its first turn was never saved; ai chat delete {id})"
        ));
    }
    let summary = if is_legacy {
        legacy_summary(id, file, path)
    } else {
        summary(file, path)
    };
    match summary {
        Ok(s) => Row {
            id: id.to_owned(),
            model: s.model,
            turns: s.turns,
            last_used,
            title: s.title,
            legacy: is_legacy,
            damaged: false,
        },
        Err(_) => damaged(format!("(damaged file: `ai chat show {id}` says where)")),
    }
}

struct Summary {
    model: Option<String>,
    turns: u64,
    title: String,
}

fn legacy_summary(id: &str, mut file: File, path: &Path) -> Result<Summary> {
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| Error::io("read", path, e))?;
    let (header, records) = legacy::parse(id, &text, path)?;
    Ok(from_records(&header, &records))
}

/// The row of a parsed chat.
fn from_records(header: &Header, records: &[Record]) -> Summary {
    let mut turns = 0;
    let mut model = None;
    for r in records.iter().rev() {
        match r {
            Record::Message(m) => {
                turns = turns.max(m.turn.unwrap_or(0));
                if m.role == Role::Assistant {
                    if model.is_none() {
                        model = m.origin.alias.clone().or_else(|| m.origin.model.clone());
                    }
                    break;
                }
            }
            Record::Pending(p) if model.is_none() => model = p.origin.alias.clone(),
            _ => {}
        }
    }
    let title = header.title.clone().or_else(|| {
        records.iter().find_map(|r| match r {
            Record::Message(m) if m.role == Role::User => Some(m.content.clone()),
            _ => None,
        })
    });
    Summary {
        model: model.or_else(|| header.model.clone()),
        turns,
        title: title.unwrap_or_default(),
    }
}

fn summary(mut file: File, path: &Path) -> Result<Summary> {
    let len = file
        .metadata()
        .map_err(|e| Error::io("read", path, e))?
        .len();
    if len <= WHOLE {
        // Read once; the row is then made from memory (one read instead of a dozen syscalls).
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes)
            .map_err(|e| Error::io("read", path, e))?;
        check_lines(&bytes)?;
        let len = bytes.len() as u64;
        return summary_of(&mut std::io::Cursor::new(bytes), len, path);
    }
    summary_of(&mut file, len, path)
}

/// A row from a chat's bytes (`len` of them), read from where they are.
fn summary_of<R: Read + Seek>(file: &mut R, len: u64, path: &Path) -> Result<Summary> {
    let io = |e| Error::io("read", path, e);
    if len == 0 {
        return Err(Error::config("the header line is incomplete"));
    }
    // The header line, however long (a long system prompt or summary).
    let header_end = find_newline_forward(file, 0, len)
        .map_err(io)?
        .ok_or_else(|| Error::config("the header line is incomplete"))?;
    let header = parse_header(&read_range(file, 0, header_end).map_err(io)?, path)?;
    let body_start = header_end + 1;

    // The title: the first record, if it is a user message of reasonable size.
    let title = match header.title.clone() {
        Some(t) => t,
        None => {
            let end = find_newline_forward(file, body_start, len.min(body_start + TITLE_PART))
                .map_err(io)?;
            match end {
                Some(end) => match Record::parse(&read_range(file, body_start, end).map_err(io)?) {
                    Ok(Record::Message(m)) if m.role == Role::User => m.content,
                    _ => String::new(),
                },
                None => String::new(),
            }
        }
    };

    // The newest records, from the end: the turn and model of the last reply.
    let mut turns = 0;
    let mut model = None;
    let mut end = len;
    let mut newest = true;
    let mut unterminated = read_range(file, len - 1, len).map_err(io)? != b"\n";
    for _ in 0..TAIL_RECORDS {
        if end <= body_start {
            break;
        }
        let line_end = if unterminated { end } else { end - 1 };
        let start = find_newline_backward(file, body_start, line_end)
            .map_err(io)?
            .map_or(body_start, |p| p + 1);
        let peeked = peek(file, start, line_end);
        end = start;
        let was_unterminated = std::mem::take(&mut unterminated);
        let p = match peeked {
            Ok(p) => p,
            // A last line cut short by an interrupted write is not damage.
            Err(_) if newest && was_unterminated => continue,
            // A blank line is passed over, as the full reader does.
            Err(_) if blank(file, start, line_end) => continue,
            Err(e) => return Err(Error::config(format!("unreadable record: {e}"))),
        };
        let first = std::mem::take(&mut newest);
        match p.kind.as_str() {
            "message" => {
                // A user message alone at the end is half of an interrupted write.
                if first && p.role == Some(Role::User) {
                    continue;
                }
                turns = turns.max(p.turn.unwrap_or(0));
                if p.role == Some(Role::Assistant) {
                    if model.is_none() {
                        model = p.alias.or(p.model);
                    }
                    break;
                }
            }
            "pending" if model.is_none() => model = p.alias,
            "chat" => return Err(Error::config("a second chat header")),
            _ => {}
        }
    }
    Ok(Summary {
        model: model.or(header.model),
        turns,
        title,
    })
}

/// Is `[from, to)` empty or only whitespace? (Only short ranges are read to find out.)
fn blank<R: Read + Seek>(file: &mut R, from: u64, to: u64) -> bool {
    to - from <= 1024
        && read_range(file, from, to).is_ok_and(|b| b.iter().all(u8::is_ascii_whitespace))
}

/// Is every line JSON? (A last line without its newline may be cut short: that is a torn
/// tail, not damage.) Checking syntax only, without decoding, keeps `chat list --limit 0` over
/// thousands of chats about as fast as reading them.
fn check_lines(bytes: &[u8]) -> Result<()> {
    let complete = bytes.last() == Some(&b'\n');
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if !complete {
        lines.pop();
    }
    for (i, line) in lines.iter().enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
            return Err(Error::config(format!("line {}: {e}", i + 1)));
        }
    }
    Ok(())
}

/// What a list row needs of a record; everything else (the content above all) is skipped
/// while it streams past, so a huge record is never held in memory.
#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    role: Option<Role>,
    #[serde(default)]
    turn: Option<u64>,
    #[serde(default)]
    alias: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

fn peek<R: Read + Seek>(file: &mut R, from: u64, to: u64) -> std::result::Result<Peek, String> {
    file.seek(SeekFrom::Start(from))
        .map_err(|e| e.to_string())?;
    let reader = BufReader::with_capacity(64 * 1024, file.by_ref().take(to - from));
    serde_json::from_reader(reader).map_err(|e| e.to_string())
}

fn read_range<R: Read + Seek>(file: &mut R, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; usize::try_from(to.saturating_sub(from)).unwrap_or(0)];
    file.seek(SeekFrom::Start(from))?;
    file.read_exact(&mut buf)?;
    Ok(buf)
}

const CHUNK: u64 = 64 * 1024;

/// The position of the first `\n` in `[from, to)`.
fn find_newline_forward<R: Read + Seek>(
    file: &mut R,
    from: u64,
    to: u64,
) -> std::io::Result<Option<u64>> {
    let mut at = from;
    while at < to {
        let buf = read_range(file, at, (at + CHUNK).min(to))?;
        if let Some(p) = buf.iter().position(|&b| b == b'\n') {
            return Ok(Some(at + p as u64));
        }
        at += buf.len() as u64;
    }
    Ok(None)
}

/// The position of the last `\n` in `[from, to)`.
fn find_newline_backward<R: Read + Seek>(
    file: &mut R,
    from: u64,
    to: u64,
) -> std::io::Result<Option<u64>> {
    let mut end = to;
    while end > from {
        let start = end.saturating_sub(CHUNK).max(from);
        let buf = read_range(file, start, end)?;
        if let Some(p) = buf.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(start + p as u64));
        }
        end = start;
    }
    Ok(None)
}
