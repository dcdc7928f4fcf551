//! Finding past conversations by their words (`ai chat search`, and the page of `ai serve`).
//!
//! A chat matches when every word of the query is in it, in any case and any order: in its
//! title or in its messages (and prompts kept from failed turns). Each chat is read whole
//! ([`super::scan`], on every core); a byte search for the words' letters in the lower-cased
//! file rules most chats out before anything is decoded, and only the lines that hold one of
//! them are parsed. The answer holds, per chat, its ID, title, the date and the line of its
//! best match (the line with most of the words, the earliest of those), made safe to print.

use memchr::memmem::Finder;
use serde::Serialize;

use super::legacy;
use super::parse::parse_header;
use super::record::{Header, Record, Role};
use super::scan::{self, Entry};
use super::store::Store;
use crate::error::{Error, Result};
use crate::fmt::one_line;

/// The most words a query may have.
const MAX_WORDS: usize = 32;
/// Characters of a matching line shown around the match.
const LINE_CHARS: usize = 160;

/// One matching chat.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Hit {
    pub(crate) id: String,
    /// The chat's title (or its first prompt), one line, safe to print.
    pub(crate) title: String,
    /// When the matching message was written (RFC 3339); the chat's creation for a match in
    /// the title alone.
    pub(crate) date: String,
    /// When the chat was last used (seconds since the Unix epoch).
    pub(crate) last_used: u64,
    /// Who wrote the matching line: `user`, `assistant`, or `title`.
    pub(crate) role: &'static str,
    /// The model that wrote it (assistant lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// The exchange it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) turn: Option<u64>,
    /// The matching line (or the part of it around the match), one line, safe to print.
    pub(crate) line: String,
}

/// The answer to a query: the newest `limit` matches and the counts.
#[derive(Debug, Serialize)]
pub(crate) struct Found {
    pub(crate) query: String,
    /// Matching chats, most recently used first.
    pub(crate) hits: Vec<Hit>,
    /// How many chats match (more than `hits` when the limit cut the list).
    pub(crate) matched: usize,
    /// How many chats were searched.
    pub(crate) searched: usize,
    /// Chat files that could not be read (not searched).
    pub(crate) unreadable: usize,
}

/// A query, ready to match.
struct Query {
    /// The words, lower case.
    words: Vec<String>,
    /// Runs of ASCII letters and digits of the words, lower case: each must be in the
    /// lower-cased bytes of a matching chat, whatever JSON escaping the file uses.
    runs: Vec<Finder<'static>>,
}

impl Query {
    fn new(text: &str) -> Result<Query> {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        if words.is_empty() {
            return Err(Error::usage("nothing to search for")
                .hint("ai chat search WORDS (every word, in any order and any case)"));
        }
        if words.len() > MAX_WORDS {
            return Err(Error::usage(format!(
                "a search takes at most {MAX_WORDS} words ({} were given)",
                words.len()
            )));
        }
        let mut runs: Vec<Vec<u8>> = Vec::new();
        for w in &words {
            for run in w.split(|c: char| !c.is_ascii_alphanumeric()) {
                if !run.is_empty() && !runs.iter().any(|r| r == run.as_bytes()) {
                    runs.push(run.as_bytes().to_vec());
                }
            }
        }
        let runs = runs.iter().map(|r| Finder::new(r).into_owned()).collect();
        Ok(Query { words, runs })
    }

    /// Which words `text` holds, as bits (text already lower case).
    fn bits(&self, lower: &str) -> u64 {
        let mut bits = 0;
        for (i, w) in self.words.iter().enumerate() {
            if lower.contains(w.as_str()) {
                bits |= 1 << i;
            }
        }
        bits
    }

    fn all(&self) -> u64 {
        (1u64 << self.words.len()) - 1
    }
}

/// Search every chat in `store` for `text`; keep the `limit` most recently used matches
/// (0: all).
pub(crate) fn search(store: &Store, text: &str, limit: usize) -> Result<Found> {
    let query = Query::new(text)?;
    let scanned = scan::scan(store, None, &|entry: &Entry, bytes: &[u8]| {
        match_chat(&query, entry, bytes)
    })?;
    let matched = scanned.found.len();
    let mut hits: Vec<Hit> = scanned.found.into_iter().map(|(_, h)| h).collect();
    if limit > 0 {
        hits.truncate(limit);
    }
    Ok(Found {
        query: text.split_whitespace().collect::<Vec<_>>().join(" "),
        hits,
        matched,
        searched: scanned.read,
        unreadable: scanned.unreadable,
    })
}

/// The best matching line found so far: (words it holds, its hit).
struct Best {
    have: u64,
    score: u32,
    hit: Option<Hit>,
}

fn match_chat(query: &Query, entry: &Entry, bytes: &[u8]) -> Option<Hit> {
    let lower = bytes.to_ascii_lowercase();
    if !query.runs.iter().all(|f| f.find(&lower).is_some()) {
        return None;
    }
    let last_used = entry
        .mtime
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut best = Best {
        have: 0,
        score: 0,
        hit: None,
    };
    if entry.legacy {
        let text = String::from_utf8_lossy(bytes);
        let (header, records) = legacy::parse(&entry.id, &text, &entry.path).ok()?;
        let title = title_of(&header, records.iter());
        for r in &records {
            consider(query, r, &header, &title, last_used, &mut best);
        }
        finish_title(query, &header, &title, last_used, &mut best);
    } else {
        let mut lines = scan::lines(bytes);
        let (_, first) = lines.next()?;
        let header = parse_header(first, &entry.path).ok()?;
        // The first record may be the title; it is read whatever it holds.
        let mut title = header.title.clone();
        let mut title_done = title.is_some();
        let offset = |line: &[u8]| line.as_ptr() as usize - bytes.as_ptr() as usize;
        for (_, line) in lines {
            let at = offset(line);
            let holds = query
                .runs
                .iter()
                .any(|f| f.find(&lower[at..at + line.len()]).is_some());
            if !holds && title_done {
                continue;
            }
            let Ok(record) = Record::parse(line) else {
                continue;
            };
            if !title_done {
                title_done = true;
                if let Record::Message(m) = &record
                    && m.role == Role::User
                {
                    title = Some(m.content.clone());
                }
            }
            if holds {
                let t = title.clone().unwrap_or_default();
                consider(query, &record, &header, &t, last_used, &mut best);
            }
        }
        let title = title.unwrap_or_default();
        finish_title(query, &header, &title, last_used, &mut best);
    }
    (best.have == query.all()).then_some(best.hit).flatten()
}

/// The title of a chat: its own, or its first prompt.
fn title_of<'a>(header: &Header, mut records: impl Iterator<Item = &'a Record>) -> String {
    header.title.clone().unwrap_or_else(|| {
        records
            .find_map(|r| match r {
                Record::Message(m) if m.role == Role::User => Some(m.content.clone()),
                _ => None,
            })
            .unwrap_or_default()
    })
}

/// Look at the lines of one record's text.
fn consider(
    query: &Query,
    record: &Record,
    header: &Header,
    title: &str,
    last_used: u64,
    best: &mut Best,
) {
    let (content, role, model, turn, ts) = match record {
        Record::Message(m) => (
            &m.content,
            match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            },
            match m.role {
                Role::User => None,
                Role::Assistant => m.origin.alias.clone().or_else(|| m.origin.model.clone()),
            },
            m.turn,
            &m.ts,
        ),
        Record::Pending(p) => (&p.content, "user", None, None, &p.ts),
        _ => return,
    };
    let lower = content.to_lowercase();
    let have = query.bits(&lower);
    if have == 0 {
        return;
    }
    best.have |= have;
    // The line of this text with most of the words.
    let mut top: Option<(u32, &str)> = None;
    for line in content.lines() {
        let score = query.bits(&line.to_lowercase()).count_ones();
        if score > 0 && top.is_none_or(|(s, _)| score > s) {
            top = Some((score, line));
        }
    }
    let Some((score, line)) = top else {
        return;
    };
    if score > best.score || best.hit.as_ref().is_some_and(|h| h.role == "title") {
        best.score = score;
        best.hit = Some(Hit {
            id: header.id.clone(),
            title: one_line(title, 80),
            date: ts.clone(),
            last_used,
            role,
            model: model.map(|m| one_line(&m, 40)),
            turn,
            line: snippet(query, line),
        });
    }
}

/// The title counts too: its words, and it is the line shown when nothing else matched.
fn finish_title(query: &Query, header: &Header, title: &str, last_used: u64, best: &mut Best) {
    let have = query.bits(&title.to_lowercase());
    best.have |= have;
    if have != 0 && best.hit.is_none() {
        best.hit = Some(Hit {
            id: header.id.clone(),
            title: one_line(title, 80),
            date: header.created.clone(),
            last_used,
            role: "title",
            model: None,
            turn: None,
            line: one_line(title, LINE_CHARS),
        });
    } else if let Some(h) = best.hit.as_mut() {
        h.title = one_line(title, 80);
    }
}

/// The part of `line` around the first word found, at most [`LINE_CHARS`] characters, one
/// line, safe to print.
fn snippet(query: &Query, line: &str) -> String {
    let chars = line.chars().count();
    if chars <= LINE_CHARS {
        return one_line(line, LINE_CHARS);
    }
    // Where the first word is, in characters (lower-casing can change byte lengths).
    let lower: Vec<char> = line.chars().flat_map(char::to_lowercase).collect();
    let same = lower.len() == chars;
    let at = query
        .words
        .iter()
        .filter_map(|w| {
            let w: Vec<char> = w.chars().collect();
            lower
                .windows(w.len().max(1))
                .position(|win| win == w.as_slice())
        })
        .min()
        .filter(|_| same)
        .unwrap_or(0);
    let start = at.saturating_sub(LINE_CHARS / 3);
    let part: String = line.chars().skip(start).take(LINE_CHARS).collect();
    let mut out = one_line(&part, LINE_CHARS);
    if start > 0 {
        out.insert(0, '…');
    }
    if start + LINE_CHARS < chars {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Query {
        Query::new(text).unwrap()
    }

    #[test]
    fn queries() {
        assert_eq!(Query::new("  ").err().unwrap().exit_code(), 2);
        let query = q("Tail  RECURSION c++ Über");
        assert_eq!(query.words, ["tail", "recursion", "c++", "über"]);
        // Letters and digits only, so an escaped or non-ASCII letter never rules a chat out.
        assert_eq!(query.runs.len(), 4);
        assert_eq!(query.bits("über tail"), 0b1001);
        assert!(Query::new(&"w ".repeat(40)).is_err());
    }

    #[test]
    fn snippets_are_cut_around_the_match_and_safe() {
        let query = q("needle");
        let line = format!("{} needle {}", "a".repeat(300), "b".repeat(300));
        let s = snippet(&query, &line);
        assert!(
            s.contains("needle") && s.starts_with('…') && s.ends_with('…'),
            "{s}"
        );
        assert!(s.chars().count() <= LINE_CHARS + 2);
        let s = snippet(&query, "a \x1b]0;evil\x07needle");
        assert!(!s.contains('\x1b') && s.contains("needle"), "{s}");
    }
}
