//! A note's identity and its normalized text. The ID is what never changes when a Zettelkasten
//! is reorganized: the 9-hex ID at the end of a file name (`01_12a_How_to_integrate_e0d27e3ad.md`),
//! else a front-matter `id:`, else the path. The body is normalized so that a reorganize (files
//! renamed, orderings renumbered, link targets rewritten) leaves its hash unchanged: links to
//! note files are reduced to the notes' IDs. Normalization keeps every line where it was, so
//! chunk line ranges stay the file's.

use std::borrow::Cow;

use super::chunk::{self, Kind};
use super::lang::{self, Lang};

/// A note read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) id: String,
    pub(crate) title: String,
    /// The Zettelkasten ordering of the file name (`01_12a`), if it has one.
    pub(crate) ordering: Option<String>,
    /// Other names of the note (front matter `aliases:`), searchable like its title.
    pub(crate) aliases: Vec<String>,
    /// The language its words are stemmed in: front matter `lang:`/`language:`, else detected,
    /// else English.
    pub(crate) lang: Lang,
    /// The text without front matter, CRLF as LF, links to notes reduced to their IDs.
    pub(crate) body: String,
    /// The 1-based file line where `body` starts (after the front matter).
    pub(crate) first_line: u32,
    /// [`hash`] of `body`.
    pub(crate) hash: String,
    /// The links to other notes and files in the folder, in order.
    pub(crate) links: Vec<Link>,
}

/// A link of a note, as the index keeps it.
pub(crate) use super::linked::Written as Link;

/// Read the note at `rel` (relative to the root, '/'-separated) from its text.
pub(crate) fn read(rel: &str, text: &str, kind: Kind) -> Note {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if kind == Kind::Text {
        let body = lf(text).into_owned();
        return Note {
            id: rel.to_owned(),
            title: name.to_owned(),
            ordering: None,
            aliases: Vec::new(),
            lang: lang::detect(&body).unwrap_or(Lang::En),
            hash: hash(&body),
            body,
            first_line: 1,
            links: Vec::new(),
        };
    }
    let front = front_matter(text).unwrap_or_default();
    let body = lf(&text[front.end..]);
    let first_line = front.lines.saturating_add(1);
    let (normalized, found) = links_of(&body);
    let links = note_links(rel, &body, first_line, found);
    let body = normalized.into_owned();
    let zettel = zettel_id(name);
    let (ordering, words) = match zettel {
        Some(id) => name_parts(name, id),
        None => (None, String::new()),
    };
    // As the owner sees it: the title the front matter gives, else the heading the note opens
    // with, else its file name (a heading further down names a section, not the note).
    let title = front
        .title
        .or_else(|| opening_heading(&body).map(str::to_owned))
        .or_else(|| (!words.is_empty()).then_some(words))
        .unwrap_or_else(|| name_title(name));
    let id = zettel
        .map(str::to_owned)
        .or(front.id)
        .unwrap_or_else(|| rel.to_owned());
    let lang = front
        .lang
        .or_else(|| lang::detect(&body))
        .unwrap_or(Lang::En);
    Note {
        id,
        title,
        ordering,
        aliases: front.aliases,
        lang,
        hash: hash(&body),
        body,
        first_line,
        links,
    }
}

/// The links found in `body` (the text of the note at `rel` from file line `first_line`) as
/// the index keeps them: a markdown link's path resolved against the note's folder (one that
/// leaves the folder is no link to a note of it).
fn note_links(rel: &str, body: &str, first_line: u32, found: Vec<links::Found>) -> Vec<Link> {
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    let mut line = first_line;
    let mut counted = 0;
    let mut out = Vec::with_capacity(found.len());
    for f in found {
        // In order of position (a link inside another's text may come after it: counted once).
        if let Some(between) = body.as_bytes().get(counted..f.at) {
            let lines = memchr::memchr_iter(b'\n', between).count();
            line = line.saturating_add(u32::try_from(lines).unwrap_or(u32::MAX));
            counted = f.at;
        }
        let name = if f.wiki || f.id {
            f.name
        } else {
            match in_folder(dir, &f.name) {
                Some(p) => p,
                None => continue,
            }
        };
        out.push(Link {
            name,
            line,
            wiki: f.wiki,
        });
    }
    out
}

/// `path` relative to the folder `dir` (`.` and `..` resolved) as a path from the root; `None`
/// when it leaves the root. A path starting with `/` starts at the root.
fn in_folder(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// A note from a document's text ([`super::document`]): its path is its ID, its title the one
/// the document gives, else the heading it opens with, else its file name.
pub(crate) fn document(rel: &str, title: Option<String>, body: String) -> Note {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let title = title
        .or_else(|| opening_heading(&body).map(str::to_owned))
        .unwrap_or_else(|| name_title(name));
    Note {
        id: rel.to_owned(),
        title,
        ordering: None,
        aliases: Vec::new(),
        lang: lang::detect(&body).unwrap_or(Lang::En),
        hash: hash(&body),
        body,
        first_line: 1,
        links: Vec::new(),
    }
}

/// The Zettelkasten ID of a file name: exactly 9 lowercase hex digits after the last `_` of the
/// stem. `"01_12a_How_to_integrate_e0d27e3ad.md"` → `"e0d27e3ad"`.
pub(crate) fn zettel_id(file_name: &str) -> Option<&str> {
    let (_, id) = strip_extension(file_name).rsplit_once('_')?;
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    (id.len() == 9 && id.bytes().all(hex)).then_some(id)
}

/// The name without its extension, if it has one (`a.md` → `a`; `v1.2_x` keeps its dot: an
/// extension is letters and digits only).
fn strip_extension(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((stem, ext))
            if !stem.is_empty()
                && !ext.is_empty()
                && ext.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            stem
        }
        _ => name,
    }
}

/// The ordering (`01_12a`: the leading segments that start with a digit) and the title words
/// (the rest, `_` as spaces) of a Zettelkasten file name with the ID `id`.
fn name_parts(name: &str, id: &str) -> (Option<String>, String) {
    let stem = strip_extension(name);
    let head = &stem[..stem.len().saturating_sub(id.len() + 1)];
    let mut ordering = Vec::new();
    let mut words = Vec::new();
    for segment in head.split('_') {
        if words.is_empty() && segment.starts_with(|c: char| c.is_ascii_digit()) {
            ordering.push(segment);
        } else if !segment.is_empty() {
            words.push(segment);
        }
    }
    let ordering = (!ordering.is_empty()).then(|| ordering.join("_"));
    (ordering, words.join(" "))
}

/// CRLF line ends as LF (the same lines; chunk texts without stray `\r`).
fn lf(text: &str) -> Cow<'_, str> {
    if memchr::memmem::find(text.as_bytes(), b"\r\n").is_some() {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// What a front-matter block says, and where the body starts.
#[derive(Debug, Default)]
struct Front {
    id: Option<String>,
    title: Option<String>,
    aliases: Vec<String>,
    lang: Option<Lang>,
    /// Byte offset of the body.
    end: usize,
    /// Lines the block takes, its `---` lines included.
    lines: u32,
}

/// A leading `---` … `---` (or `...`) block of simple `key: value` lines. Anything else (an
/// unclosed block, a line that is no YAML key) is no front matter: the whole text is body.
fn front_matter(text: &str) -> Option<Front> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut front = Front {
        end: first.len(),
        lines: 1,
        ..Front::default()
    };
    // Whether the list items that follow are aliases (`aliases:` with no value on its line).
    let mut in_aliases = false;
    for line in lines {
        front.end += line.len();
        front.lines = front.lines.saturating_add(1);
        let l = line.trim_end();
        if l == "---" || l == "..." {
            return Some(front);
        }
        let item = l.trim_start();
        if in_aliases && let Some(value) = item.strip_prefix("- ") {
            front.aliases.extend(scalar(value));
            continue;
        }
        // Blank lines, comments, other list items and indented continuations: nothing we read.
        if item.is_empty() || l.starts_with(['#', ' ', '\t', '-']) {
            continue;
        }
        in_aliases = false;
        let (key, value) = l.split_once(':')?;
        if key.is_empty() || !(value.is_empty() || value.starts_with([' ', '\t'])) {
            return None;
        }
        if key.eq_ignore_ascii_case("id") {
            front.id = scalar(value);
        } else if key.eq_ignore_ascii_case("title") {
            front.title = scalar(value);
        } else if key.eq_ignore_ascii_case("aliases") || key.eq_ignore_ascii_case("alias") {
            let v = value.trim();
            if v.is_empty() {
                in_aliases = true;
            } else if let Some(list) = v.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                front.aliases.extend(list.split(',').filter_map(scalar));
            } else {
                front.aliases.extend(scalar(v));
            }
        } else if key.eq_ignore_ascii_case("lang") || key.eq_ignore_ascii_case("language") {
            front.lang = scalar(value).and_then(|v| Lang::from_code(&v));
        }
    }
    None
}

/// A one-line YAML scalar: quotes removed (`\"` and `''` unescaped), a plain value's ` #`
/// comment cut; `None` when empty or a block scalar (`|`, `>`) we do not read.
fn scalar(value: &str) -> Option<String> {
    let v = value.trim();
    let text = if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        v[1..v.len() - 1]
            .replace("\\\"", "\"")
            .replace("\\\\", "\\")
    } else if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        v[1..v.len() - 1].replace("''", "'")
    } else if v.starts_with(['|', '>']) {
        return None;
    } else {
        v.split(" #").next().unwrap_or(v).trim_end().to_owned()
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The text of the `# ` heading the note opens with (its first line that is not blank).
fn opening_heading(body: &str) -> Option<&str> {
    let line = body.lines().map(str::trim_end).find(|l| !l.is_empty())?;
    match chunk::atx(line) {
        Some((1, text)) if !text.is_empty() => Some(text),
        _ => None,
    }
}

/// A title from a file name: without its extension and a leading timestamp ID
/// (`202301151230 Meeting notes.md` → "Meeting notes").
fn name_title(name: &str) -> String {
    let stem = strip_extension(name);
    let digits = stem.bytes().take_while(u8::is_ascii_digit).count();
    if (8..=14).contains(&digits) {
        let rest = stem[digits..].trim_start_matches([' ', '_', '-']);
        if !rest.is_empty() {
            return rest.to_owned();
        }
    }
    stem.to_owned()
}

/// Text without its embeds (`![[drawing.excalidraw]]`, `![[image.png|300]]`): what they show
/// is another file, not words of this note. Borrowed when there is none.
pub(crate) fn without_embeds(text: &str) -> Cow<'_, str> {
    if memchr::memmem::find(text.as_bytes(), b"![[").is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("![[") {
        let after = &rest[i + 3..];
        // An embed ends at `]]` on the same line; anything else is text.
        match after.find("]]").filter(|&j| !after[..j].contains('\n')) {
            Some(j) => {
                out.push_str(&rest[..i]);
                rest = &after[j + 2..];
            }
            None => {
                out.push_str(&rest[..i + 3]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The hash of a note's normalized text: SHA-256, its first 16 bytes as hex.
pub(crate) fn hash(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Markdown links to Zettelkasten note files reduced to the notes' IDs:
/// `[x](../b/01_12a_How_to_integrate_e0d27e3ad.md#setup)` → `[x](e0d27e3ad#setup)`,
/// `[[01_12a_How_to_integrate_e0d27e3ad|alias]]` → `[[e0d27e3ad|alias]]`, and reference
/// definitions (`[1]: 01_x_Foo_e0d27e3ad.md`). Image links, web links, links to other files and
/// anything in code stay as they are. Every line stays where it was; text with nothing to change
/// comes back borrowed.
pub(crate) fn normalize_links(text: &str) -> Cow<'_, str> {
    links_of(text).0
}

/// [`normalize_links`], and the links found (positions in `text`, in order).
fn links_of(text: &str) -> (Cow<'_, str>, Vec<links::Found>) {
    let finder = |needle: &[u8]| memchr::memmem::find(text.as_bytes(), needle).is_some();
    let mut found = Vec::new();
    if !(finder(b"](") || finder(b"[[") || finder(b"]:")) {
        return (Cow::Borrowed(text), found);
    }
    let mut edits = Vec::new();
    let mut fence = None;
    let mut stretch: Option<usize> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let l = line.trim_end();
        if let Some(open) = fence {
            if chunk::fence_closes(l, open) {
                fence = None;
            }
            continue;
        }
        let open = chunk::fence_open(l);
        if open.is_some() || l.trim_start().is_empty() {
            if let Some(s) = stretch.take() {
                links::find(text, s, start, &mut edits, &mut found);
            }
            fence = open;
            continue;
        }
        stretch.get_or_insert(start);
    }
    if let Some(s) = stretch {
        links::find(text, s, text.len(), &mut edits, &mut found);
    }
    if edits.is_empty() {
        return (Cow::Borrowed(text), found);
    }
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (start, end, with) in edits {
        if start < done {
            continue;
        }
        out.push_str(&text[done..start]);
        out.push_str(&with);
        done = end;
    }
    out.push_str(&text[done..]);
    (Cow::Owned(out), found)
}

#[path = "links.rs"]
mod links;

#[cfg(test)]
#[path = "note_tests.rs"]
mod tests;
