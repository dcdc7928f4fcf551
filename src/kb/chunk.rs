//! A note split into passages under a token budget, along its markdown structure: a note that
//! fits is one chunk; a longer one splits on headings, then on paragraphs and fenced code blocks
//! (never inside a fence unless the fence alone is over the budget), then on sentences, then on
//! lines, and as the last resort hard at the budget. Adjacent small sections are packed together
//! up to the budget, and so are the parts of a long one. A line scanner aware of fences: no
//! markdown parser, linear time.
//!
//! Every chunk is a slice of the body with its leading blank lines and trailing whitespace cut,
//! so its line range is exact and its text is the note's own.

/// How a file's text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Headings, fences, front matter, links.
    Markdown,
    /// Paragraphs and lines only (plain text, code).
    Text,
    /// An HTML page, indexed as the text it renders to (its headings as markdown's).
    Html,
    /// A PDF file, indexed as the text of its pages, one section a page.
    Pdf,
}

/// One passage of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The enclosing headings, "Setup > Backups"; empty before the first heading and for text.
    pub(crate) heading: String,
    /// 1-based, inclusive, in the file's lines (the body's plus `first_line - 1`).
    pub(crate) start_line: u32,
    pub(crate) end_line: u32,
    pub(crate) text: String,
}

/// The default budget of a chunk, in estimated tokens.
pub(crate) const DEFAULT_BUDGET: usize = 500;

/// A cheap token estimate: a token per 4 bytes, rounded up (at least 1 for non-empty text). Bytes
/// rather than characters make a slice's estimate O(1); umlauts count a little high, which errs
/// on the safe side of an embedding model's input limit.
pub(crate) fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Split `body` (which starts at file line `first_line`) into chunks of at most `budget_tokens`
/// each (a budget of 0 counts as 1). The same body always gives the same chunks.
pub(crate) fn split(body: &str, first_line: u32, kind: Kind, budget_tokens: usize) -> Vec<Chunk> {
    let max = budget_tokens.max(1).saturating_mul(4);
    let lines = Lines::new(body);
    let sections = match kind {
        Kind::Markdown | Kind::Html | Kind::Pdf => markdown_sections(&lines),
        Kind::Text => vec![Section {
            path: Vec::new(),
            blocks: paragraphs(&lines),
        }],
    };
    let mut pieces = Vec::new();
    for (index, section) in sections.iter().enumerate() {
        let (Some(first), Some(last)) = (section.blocks.first(), section.blocks.last()) else {
            continue;
        };
        let Some((a, b)) = trim(body, lines.start(first.first), lines.end(last.last)) else {
            continue;
        };
        if b - a <= max {
            pieces.push(Piece::new(a, b, index, true));
            continue;
        }
        // A heading is cut together with the block after it, so it never ends a chunk alone.
        let mut blocks = section.blocks.iter().peekable();
        while let Some(block) = blocks.next() {
            let start = lines.start(block.first);
            let block = match (block.kind, blocks.peek()) {
                (BlockKind::Heading, Some(_)) => blocks.next().unwrap_or(block),
                _ => block,
            };
            let levels: &[Level] = match (block.kind, kind) {
                (BlockKind::Para, Kind::Markdown | Kind::Html | Kind::Pdf) => {
                    &[sentences, line_starts]
                }
                (BlockKind::Para | BlockKind::Code, _) => &[line_starts],
                (BlockKind::Heading, _) => &[],
            };
            let mut ranges = Vec::new();
            cut(body, start, lines.end(block.last), levels, max, &mut ranges);
            pieces.extend(
                ranges
                    .into_iter()
                    .map(|(a, b)| Piece::new(a, b, index, false)),
            );
        }
    }
    // A PDF's sections are its pages: a passage never spans two, so its source names one.
    let apart = kind == Kind::Pdf;
    pack(
        body,
        &lines,
        &sections,
        &pieces,
        first_line.max(1),
        max,
        apart,
    )
}

/// A range of the body no longer than the budget, from one section: all of it (`whole`), or a
/// part of a section too long for one chunk.
struct Piece {
    start: usize,
    end: usize,
    section: usize,
    whole: bool,
}

impl Piece {
    fn new(start: usize, end: usize, section: usize, whole: bool) -> Piece {
        Piece {
            start,
            end,
            section,
            whole,
        }
    }
}

/// Pack adjacent pieces greedily into chunks of at most `max` bytes: the parts of one section
/// together, and whole sections together, but the parts of a long section never with another
/// section (its last part belongs to its own heading); with `apart`, no two sections at all. A
/// chunk's heading is the heading path its pieces have in common.
fn pack(
    body: &str,
    lines: &Lines<'_>,
    sections: &[Section<'_>],
    pieces: &[Piece],
    first_line: u32,
    max: usize,
    apart: bool,
) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut flush = |open: &Open| {
        let line = |pos: usize| {
            u32::try_from(lines.line_of(pos))
                .unwrap_or(u32::MAX)
                .saturating_add(first_line)
        };
        chunks.push(Chunk {
            heading: sections[open.section].path[..open.depth].join(" > "),
            start_line: line(open.start),
            end_line: line(open.end - 1),
            text: body[open.start..open.end].to_owned(),
        });
    };
    let mut current: Option<Open> = None;
    for piece in pieces {
        let path = &sections[piece.section].path;
        if let Some(open) = &mut current {
            let joins = open.last == piece.section || (open.whole && piece.whole && !apart);
            if joins && piece.end - open.start <= max {
                let first = &sections[open.section].path[..open.depth];
                open.depth = first.iter().zip(path).take_while(|(a, b)| a == b).count();
                open.end = piece.end;
                open.last = piece.section;
                open.whole &= piece.whole;
                continue;
            }
            flush(open);
        }
        current = Some(Open {
            start: piece.start,
            end: piece.end,
            section: piece.section,
            last: piece.section,
            depth: path.len(),
            whole: piece.whole,
        });
    }
    if let Some(open) = &current {
        flush(open);
    }
    chunks
}

/// The chunk being filled by [`pack`].
struct Open {
    start: usize,
    end: usize,
    /// Its first and last pieces' sections.
    section: usize,
    last: usize,
    /// How much of the first section's heading path all its pieces share.
    depth: usize,
    /// Whether it holds whole sections only.
    whole: bool,
}

/// Finds the places inside `body[a..b]` where a range may be cut (sorted, each inside (a, b)).
type Level = fn(&str, usize, usize) -> Vec<usize>;

/// Cut `body[a..b]` into trimmed, non-empty ranges of at most `max` bytes: at the first level's
/// places, packing the segments between them greedily; a segment still too long is cut by the
/// next level, and past the last level hard.
fn cut(
    body: &str,
    a: usize,
    b: usize,
    levels: &[Level],
    max: usize,
    out: &mut Vec<(usize, usize)>,
) {
    let Some((a, b)) = trim(body, a, b) else {
        return;
    };
    if b - a <= max {
        out.push((a, b));
        return;
    }
    let Some((level, rest)) = levels.split_first() else {
        hard(body, a, b, max, out);
        return;
    };
    let places = level(body, a, b);
    let mut current: Option<(usize, usize)> = None;
    let ends = places.iter().copied().chain([b]);
    let mut from = a;
    for to in ends {
        let segment = trim(body, from, to);
        from = to;
        let Some((sa, sb)) = segment else {
            continue;
        };
        if sb - sa > max {
            out.extend(current.take());
            cut(body, sa, sb, rest, max, out);
            continue;
        }
        current = match current {
            Some((ca, _)) if sb - ca <= max => Some((ca, sb)),
            other => {
                out.extend(other);
                Some((sa, sb))
            }
        };
    }
    out.extend(current);
}

/// The last resort: cut at most `max` bytes at a time, at a character boundary, preferring the
/// last whitespace in the second half of the window.
fn hard(body: &str, mut a: usize, b: usize, max: usize, out: &mut Vec<(usize, usize)>) {
    while b - a > max {
        let limit = floor_boundary(body, a + max);
        let low = floor_boundary(body, a + max / 2);
        let at = body[low..limit]
            .rfind(char::is_whitespace)
            .map_or(limit, |i| low + i);
        // A character is at most 4 bytes and `max` at least 4: `limit` is past `a`.
        let at = if at > a { at } else { limit };
        out.extend(trim(body, a, at));
        a = at;
        a += body[a..b].len() - body[a..b].trim_start().len();
    }
    out.extend(trim(body, a, b));
}

fn floor_boundary(body: &str, mut i: usize) -> usize {
    while !body.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `body[a..b]` without its trailing whitespace and its leading blank lines (the first line's
/// indentation is kept); `None` when nothing is left.
fn trim(body: &str, a: usize, b: usize) -> Option<(usize, usize)> {
    let s = &body[a..b];
    let end = a + s.trim_end().len();
    let text = a + (s.len() - s.trim_start().len());
    if text >= end {
        return None;
    }
    let start = body[a..text].rfind('\n').map_or(a, |i| a + i + 1);
    Some((start, end))
}

/// Places after a sentence's end (`.`, `!`, `?`, `…` then whitespace; `。！？`), at the start
/// of the next sentence; and before a line that starts a list item, a quote or a table row.
fn sentences(body: &str, a: usize, b: usize) -> Vec<usize> {
    let text = &body[a..b];
    let mut places = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let after = i + c.len_utf8();
        let end = match c {
            '.' | '!' | '?' | '…' => chars.peek().is_some_and(|&(_, n)| n.is_whitespace()),
            '。' | '！' | '？' => true,
            '\n' => starts_item(&text[after..]),
            _ => false,
        };
        if end {
            let next = after + (text[after..].len() - text[after..].trim_start().len());
            if next < text.len() {
                places.push(a + next);
            }
        }
    }
    places.dedup();
    places
}

fn starts_item(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with("+ ")
        || t.starts_with('>')
        || t.starts_with('|')
        || (digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") ")))
}

/// Places at the start of every line after the first.
fn line_starts(body: &str, a: usize, b: usize) -> Vec<usize> {
    memchr::memchr_iter(b'\n', &body.as_bytes()[a..b])
        .map(|i| a + i + 1)
        .filter(|&p| p < b)
        .collect()
}

/// The body's lines, by the byte offsets where they start.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Lines { text, starts }
    }
    fn count(&self) -> usize {
        self.starts.len()
    }
    fn start(&self, line: usize) -> usize {
        self.starts[line]
    }
    /// Where the line ends, its '\n' not included.
    fn end(&self, line: usize) -> usize {
        self.starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1)
    }
    fn get(&self, line: usize) -> &'a str {
        &self.text[self.start(line)..self.end(line)]
    }
    fn line_of(&self, pos: usize) -> usize {
        self.starts.partition_point(|&s| s <= pos).saturating_sub(1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Heading,
    Code,
    Para,
}

/// Lines `first..=last` (0-based) of one kind.
#[derive(Debug)]
struct Block {
    first: usize,
    last: usize,
    kind: BlockKind,
}

/// The blocks under one heading (the heading line included), before the next heading.
struct Section<'a> {
    path: Vec<&'a str>,
    blocks: Vec<Block>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind<'a> {
    Blank,
    Text,
    Heading(usize, &'a str),
    /// The line under a one-line setext heading (`===`, `---`).
    Underline,
    /// A fence's opening line.
    Fence,
    /// Inside a fence, or its closing line.
    Code,
}

fn classify<'a>(lines: &Lines<'a>) -> Vec<LineKind<'a>> {
    let mut kinds = Vec::with_capacity(lines.count());
    let mut fence: Option<(u8, usize)> = None;
    for i in 0..lines.count() {
        let line = lines.get(i).trim_end();
        if let Some(open) = fence {
            if fence_closes(line, open) {
                fence = None;
            }
            kinds.push(LineKind::Code);
        } else if let Some(open) = fence_open(line) {
            fence = Some(open);
            kinds.push(LineKind::Fence);
        } else if line.trim_start().is_empty() {
            kinds.push(LineKind::Blank);
        } else if let Some((level, text)) = atx(line) {
            kinds.push(LineKind::Heading(level, text));
        } else {
            kinds.push(LineKind::Text);
        }
    }
    // One-line setext headings: a text line alone, then `===` (level 1) or `---` (level 2).
    for i in 1..kinds.len() {
        let lone = kinds[i - 1] == LineKind::Text && (i < 2 || kinds[i - 2] != LineKind::Text);
        if lone && kinds[i] == LineKind::Text {
            let t = lines.get(i).trim();
            let indent = lines.get(i).len() - lines.get(i).trim_start().len();
            let level = match t.as_bytes().first() {
                Some(b'=') if t.bytes().all(|b| b == b'=') => 1,
                Some(b'-') if t.bytes().all(|b| b == b'-') => 2,
                _ => 0,
            };
            if level > 0 && indent < 4 {
                kinds[i - 1] = LineKind::Heading(level, lines.get(i - 1).trim());
                kinds[i] = LineKind::Underline;
            }
        }
    }
    kinds
}

/// A fence's opening line: at least three backticks (no backtick after them) or tildes. Any
/// indentation counts, so a fence in a list item also protects its `#` lines.
pub(super) fn fence_open(line: &str) -> Option<(u8, usize)> {
    let t = line.trim_start();
    let ch = *t.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = t.bytes().take_while(|&b| b == ch).count();
    (len >= 3 && !(ch == b'`' && t[len..].contains('`'))).then_some((ch, len))
}

/// Whether `line` closes the fence `open` made: the same character, at least as many, alone.
pub(super) fn fence_closes(line: &str, (ch, len): (u8, usize)) -> bool {
    let t = line.trim();
    t.len() >= len && t.bytes().all(|b| b == ch)
}

/// An ATX heading: up to 3 spaces, 1 to 6 `#`, then a space or the end; closing `#`s dropped.
pub(super) fn atx(line: &str) -> Option<(usize, &str)> {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return None;
    }
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    let after = &rest[level..];
    if !(1..=6).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let text = after.trim();
    let open = text.trim_end_matches('#');
    Some((
        level,
        if open.is_empty() || open.ends_with([' ', '\t']) {
            open.trim_end()
        } else {
            text
        },
    ))
}

fn markdown_sections<'a>(lines: &Lines<'a>) -> Vec<Section<'a>> {
    let kinds = classify(lines);
    let mut stack: Vec<(usize, &'a str)> = Vec::new();
    let mut sections = vec![Section {
        path: Vec::new(),
        blocks: Vec::new(),
    }];
    let mut i = 0;
    while i < kinds.len() {
        let start = i;
        let kind = match kinds[i] {
            LineKind::Blank => {
                i += 1;
                continue;
            }
            LineKind::Heading(level, text) => {
                while stack.last().is_some_and(|&(l, _)| l >= level) {
                    stack.pop();
                }
                stack.push((level, text));
                let path = stack.iter().map(|&(_, t)| t).filter(|t| !t.is_empty());
                sections.push(Section {
                    path: path.collect(),
                    blocks: Vec::new(),
                });
                i += 1;
                if kinds.get(i) == Some(&LineKind::Underline) {
                    i += 1;
                }
                BlockKind::Heading
            }
            LineKind::Fence | LineKind::Code => {
                i += 1;
                while kinds.get(i) == Some(&LineKind::Code) {
                    i += 1;
                }
                BlockKind::Code
            }
            LineKind::Text | LineKind::Underline => {
                i += 1;
                while matches!(kinds.get(i), Some(LineKind::Text | LineKind::Underline)) {
                    i += 1;
                }
                BlockKind::Para
            }
        };
        if let Some(section) = sections.last_mut() {
            section.blocks.push(Block {
                first: start,
                last: i - 1,
                kind,
            });
        }
    }
    sections
}

/// Plain text: runs of non-blank lines.
fn paragraphs(lines: &Lines<'_>) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut start = None;
    for i in 0..lines.count() {
        let blank = lines.get(i).trim().is_empty();
        match (start, blank) {
            (None, false) => start = Some(i),
            (Some(s), true) => {
                blocks.push(Block {
                    first: s,
                    last: i - 1,
                    kind: BlockKind::Para,
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        blocks.push(Block {
            first: s,
            last: lines.count() - 1,
            kind: BlockKind::Para,
        });
    }
    blocks
}

#[cfg(test)]
#[path = "chunk_tests.rs"]
mod tests;
