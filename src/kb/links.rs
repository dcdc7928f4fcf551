//! Finding the links to notes in one paragraph of markdown (a stretch of non-blank lines outside
//! fenced code), for `note::normalize_links`. Brackets are matched with a stack and code spans
//! found first, so the scan is linear and a `[` in code is no link.

/// An edit: replace `text[start..end]` with the string.
pub(super) type Edit = (usize, usize, String);

/// A link found: where it starts in the text, the name it gives its target (a `[[wikilink]]`'s
/// as written, without `#heading` and `|label`; a markdown link's path, decoded; either reduced
/// to the note's ID when it is a Zettelkasten file name) and whether it is a wikilink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) at: usize,
    pub(crate) name: String,
    pub(crate) wiki: bool,
    /// Whether `name` is a note's ID (reduced from a Zettelkasten file name).
    pub(crate) id: bool,
}

/// Add the edits for the links to notes in `text[a..b]`, in order, and the links found.
pub(super) fn find(text: &str, a: usize, b: usize, edits: &mut Vec<Edit>, found: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    let code = code_spans(bytes, a, b);
    let mut next_code = 0;
    let mut open: Vec<usize> = Vec::new();
    let mut i = a;
    while i < b {
        while code.get(next_code).is_some_and(|c| c.1 <= i) {
            next_code += 1;
        }
        let code = &code[next_code..];
        if let Some(&(start, end)) = code.first()
            && start <= i
        {
            i = end;
            continue;
        }
        // The first code span after `i`: a link whose target reaches it is no link.
        let code_at = code.first().map_or(usize::MAX, |c| c.0);
        match bytes[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'[' if bytes.get(i + 1) == Some(&b'[') => {
                if let Some(end) = wiki(text, i, b, code_at, edits, found) {
                    i = end;
                    continue;
                }
                open.push(i);
            }
            b'[' => open.push(i),
            b']' => {
                if let Some(start) = open.pop() {
                    let image = start > 0 && bytes[start - 1] == b'!';
                    let after = match bytes.get(i + 1) {
                        Some(b'(') => inline(text, i + 2, b, code_at, !image, edits, found),
                        Some(b':')
                            if open.is_empty()
                                && bytes.get(start + 1) != Some(&b'^')
                                && at_line_start(bytes, start) =>
                        {
                            definition(text, i + 2, b, code_at, edits, found)
                        }
                        _ => None,
                    };
                    if let Some(end) = after {
                        i = end;
                        continue;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// The code spans of `bytes[a..b]` as (start, end) ranges, in order: a run of backticks up to
/// the next run of the same length. A run with no partner is literal.
fn code_spans(bytes: &[u8], a: usize, b: usize) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = a;
    while i < b {
        if bytes[i] == b'`' {
            let start = i;
            while i < b && bytes[i] == b'`' {
                i += 1;
            }
            // An escaped first backtick is literal; the rest still make a run.
            let escaped = start > a && bytes[start - 1] == b'\\';
            let from = start + usize::from(escaped);
            if from < i {
                runs.push((from, i - from));
            }
        } else {
            i += 1;
        }
    }
    let mut spans = Vec::new();
    let mut k = 0;
    while k < runs.len() {
        let (start, len) = runs[k];
        match runs[k + 1..].iter().position(|r| r.1 == len) {
            Some(j) => {
                let (close, _) = runs[k + 1 + j];
                spans.push((start, close + len));
                k += j + 2;
            }
            None => k += 1,
        }
    }
    spans
}

fn at_line_start(bytes: &[u8], pos: usize) -> bool {
    let line = bytes[..pos]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    pos - line <= 3 && bytes[line..pos].iter().all(|&b| b == b' ')
}

/// An Obsidian wiki link at `text[i..]` (`[[target#heading|alias]]`): its end, with an edit when
/// the target names a note. `None` when it is not one.
fn wiki(
    text: &str,
    i: usize,
    b: usize,
    code_at: usize,
    edits: &mut Vec<Edit>,
    found: &mut Vec<Found>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut j = i + 2;
    while j < b && !matches!(bytes[j], b'[' | b']' | b'\n') {
        j += 1;
    }
    if j + 1 >= b || bytes[j] != b']' || bytes[j + 1] != b']' || code_at < j + 2 {
        return None;
    }
    let inner = &text[i + 2..j];
    let target = inner.split('|').next().unwrap_or(inner);
    let path = target.split('#').next().unwrap_or(target);
    // In a table the pipe is escaped: `[[target\|alias]]`.
    let trimmed = path.trim().trim_end_matches('\\').trim_end();
    let id = note_name(trimmed);
    if let Some(id) = id {
        let start = i + 2 + (path.len() - path.trim_start().len());
        edits.push((start, start + trimmed.len(), id.to_owned()));
    }
    // `[[#heading]]` is a link inside the note; an embed of an image is no link to a note,
    // an embed of a note (`![[Other]]`) is one, as Obsidian counts it.
    let embed = i > 0 && bytes[i - 1] == b'!';
    let image = embed && other_file(trimmed);
    if !trimmed.is_empty() && !image {
        found.push(Found {
            at: i,
            name: id.unwrap_or(trimmed).to_owned(),
            wiki: true,
            id: id.is_some(),
        });
    }
    Some(j + 2)
}

/// An inline link's destination from `text[p..]` (after `](`) up to its `)`: its end, with an
/// edit when `edit` and it names a note. `None` when it is not a link.
fn inline(
    text: &str,
    p: usize,
    b: usize,
    code_at: usize,
    edit: bool,
    edits: &mut Vec<Edit>,
    found: &mut Vec<Found>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let (dest, mut r) = destination(bytes, skip_space(bytes, p, b), b)?;
    let spaced = r < skip_space(bytes, r, b);
    r = skip_space(bytes, r, b);
    if spaced && r < b && matches!(bytes[r], b'"' | b'\'' | b'(') {
        let close = if bytes[r] == b'(' { b')' } else { bytes[r] };
        r += 1;
        while r < b && bytes[r] != close {
            r += if bytes[r] == b'\\' { 2 } else { 1 };
        }
        if r >= b {
            return None;
        }
        r = skip_space(bytes, r + 1, b);
    }
    if r >= b || bytes[r] != b')' || code_at <= r {
        return None;
    }
    if edit {
        edits.extend(rewrite(text, dest, found));
    }
    Some(r + 1)
}

/// A reference definition's destination (`[label]: dest "title"`), from `text[p..]`.
fn definition(
    text: &str,
    p: usize,
    b: usize,
    code_at: usize,
    edits: &mut Vec<Edit>,
    found: &mut Vec<Found>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let (dest, r) = destination(bytes, skip_space(bytes, p, b), b)?;
    if dest.0 == dest.1 || code_at < r || (r < b && !bytes[r].is_ascii_whitespace()) {
        return None;
    }
    edits.extend(rewrite(text, dest, found));
    Some(r)
}

/// Spaces, tabs and at most one line end.
fn skip_space(bytes: &[u8], mut p: usize, b: usize) -> usize {
    let mut newline = false;
    while p < b && matches!(bytes[p], b' ' | b'\t' | b'\n' | b'\r') {
        if bytes[p] == b'\n' {
            if newline {
                break;
            }
            newline = true;
        }
        p += 1;
    }
    p
}

/// A link destination starting at `p`: `<…>` (no line end inside) or raw (no whitespace,
/// balanced parentheses). Returns its range (brackets included) and where it ends.
fn destination(bytes: &[u8], p: usize, b: usize) -> Option<((usize, usize), usize)> {
    if bytes.get(p) == Some(&b'<') && p < b {
        let mut r = p + 1;
        while r < b && !matches!(bytes[r], b'>' | b'<' | b'\n') {
            let escaped =
                bytes[r] == b'\\' && bytes.get(r + 1).is_some_and(u8::is_ascii_punctuation);
            r += if escaped && r + 1 < b { 2 } else { 1 };
        }
        return (r < b && bytes[r] == b'>').then_some(((p, r + 1), r + 1));
    }
    let mut r = p;
    let mut depth = 0usize;
    while r < b {
        let c = bytes[r];
        if c == b'\\' && r + 1 < b && bytes[r + 1].is_ascii_punctuation() {
            r += 2;
            continue;
        }
        if c <= b' ' || c == 0x7f {
            break;
        }
        if c == b'(' {
            depth += 1;
        } else if c == b')' {
            if depth == 0 {
                break;
            }
            depth -= 1;
        }
        r += 1;
    }
    Some(((p, r), r))
}

/// The edit that reduces the destination `text[start..end]` to a note's ID, if it names one;
/// a destination that is a path in the folder (no URL, no query) is a link found.
fn rewrite(text: &str, (start, end): (usize, usize), found: &mut Vec<Found>) -> Option<Edit> {
    let raw = &text[start..end];
    let angle = raw.starts_with('<');
    let raw = if angle { &raw[1..raw.len() - 1] } else { raw };
    if scheme(raw) {
        return None;
    }
    let (path, anchor) = match raw.find('#') {
        Some(k) => (&raw[..k], &raw[k..]),
        None => (raw, ""),
    };
    if path.is_empty() || path.contains('?') {
        return None;
    }
    let decoded = decode(path);
    let id = note_name(&decoded);
    found.push(Found {
        at: start,
        name: id.unwrap_or(&decoded).to_owned(),
        wiki: false,
        id: id.is_some(),
    });
    let id = id?;
    let with = format!("{id}{anchor}");
    let bare = with
        .bytes()
        .all(|b| b > b' ' && !matches!(b, b'(' | b')' | b'<' | b'>' | 0x7f));
    let with = if angle && !bare {
        format!("<{with}>")
    } else {
        with
    };
    Some((start, end, with))
}

/// Whether a destination starts with a URL scheme (`https:`, `mailto:`; not `C:`).
fn scheme(raw: &str) -> bool {
    let head = raw.split(['/', '#', '?']).next().unwrap_or(raw);
    head.split_once(':').is_some_and(|(s, _)| {
        s.len() >= 2
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    })
}

/// Backslash escapes and percent-encoding undone.
fn decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |k: usize| bytes.get(k).and_then(|&b| (b as char).to_digit(16));
        match bytes[i] {
            b'\\' if bytes.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                out.push(bytes[i + 1]);
                i += 2;
            }
            b'%' if hex(i + 1).is_some() && hex(i + 2).is_some() => {
                let (hi, lo) = (hex(i + 1).unwrap_or(0), hex(i + 2).unwrap_or(0));
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a name has an extension other than markdown's (`image.png`, `doc.pdf`).
fn other_file(name: &str) -> bool {
    let name = name.rsplit('/').next().unwrap_or(name);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !ext.is_empty()
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && !["md", "markdown", "mdx"]
                .iter()
                .any(|m| ext.eq_ignore_ascii_case(m))
    })
}

/// The ID of the note a path names: its last part a Zettelkasten file name, with a markdown
/// extension or none (`[[01_x_Foo_e0d27e3ad]]`).
fn note_name(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if let Some((stem, ext)) = name.rsplit_once('.') {
        let is_ext =
            !stem.is_empty() && !ext.is_empty() && ext.bytes().all(|b| b.is_ascii_alphanumeric());
        let markdown = ["md", "markdown", "mdx"]
            .iter()
            .any(|m| ext.eq_ignore_ascii_case(m));
        if is_ext && !markdown {
            return None;
        }
    }
    super::zettel_id(name)
}
