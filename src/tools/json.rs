//! JSON documents the model can query (`--data FILE.json`, the first `primary`, the second
//! `secondary`): generic tools (the keys under a path, the value at a JSON pointer, the paths
//! that contain a text), each with a `document` argument `primary | secondary | both`, and the
//! domain tools of a tools file ([`super::file`]). Every result is bounded: long arrays and
//! strings are summarized with counts, deep objects cut with their size.

use std::path::{Path, PathBuf};

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};

use super::data::{Bounded, Items, Kind, Node, Tree};
use crate::error::{Error, Result};

/// A document given with `--data`.
#[derive(Debug)]
pub(crate) struct Document {
    /// `primary` or `secondary`.
    pub(crate) label: &'static str,
    pub(crate) path: PathBuf,
    pub(crate) value: Tree,
}

/// The largest document read. A document is held in memory as its own text while the turn
/// runs ([`Tree`]); a tool call reads what it needs from it.
pub(crate) const MAX_DOCUMENT: u64 = 16 << 20;

/// The deepest nesting the parser follows: serde_json's own limit (it refuses the 128th level),
/// kept so a document cannot exhaust the stack.
const MAX_NESTING: usize = 127;

/// Read and check a JSON document, with errors that name it. A file over [`MAX_DOCUMENT`] is
/// refused before it is read.
pub(crate) fn read(path: &Path) -> Result<Tree> {
    Tree::parse(read_bytes(path)?).map_err(|e| parse_error(path, &e))
}

/// Read and parse a JSON file (a tools file) into a `Value`, as [`read`] reads a document.
pub(crate) fn read_value(path: &Path) -> Result<Value> {
    serde_json::from_slice(&read_bytes(path)?).map_err(|e| parse_error(path, &e))
}

/// A JSON file's bytes, up to [`MAX_DOCUMENT`].
fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| {
        Error::usage(format!("cannot read {}: {e}", path.display()))
            .hint("--data takes a JSON file")
    })?;
    if !meta.is_file() {
        return Err(Error::usage(format!("{} is not a file", path.display()))
            .hint("--data takes a JSON file"));
    }
    let too_big = |size: u64| {
        Error::usage(format!(
            "{} is {}; ai reads JSON documents of up to {} MiB (a document is held in memory \
             while the turn runs)",
            path.display(),
            size_of(size),
            MAX_DOCUMENT >> 20
        ))
        .hint(format!(
            "give the model the part it needs, e.g.: jq '{{sql}}' {0} > part.json",
            path.display()
        ))
    };
    if meta.len() > MAX_DOCUMENT {
        return Err(too_big(meta.len()));
    }
    // Read at most one byte over the limit: a file that grew since is refused too.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_DOCUMENT + 1).read_to_end(&mut bytes))
        .map_err(|e| Error::usage(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_DOCUMENT {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Why a file is not a document we read.
fn parse_error(path: &Path, e: &serde_json::Error) -> Error {
    if e.to_string().starts_with("recursion limit exceeded") {
        Error::usage(format!(
            "{} is nested too deeply: ai reads JSON documents nested up to {MAX_NESTING} \
                 levels deep (the next level opens at line {} column {})",
            path.display(),
            e.line(),
            e.column()
        ))
        .hint("give the model a flatter extract of it, e.g. with jq")
    } else {
        Error::usage(format!("{} is not valid JSON: {e}", path.display()))
            .hint("--data and tools files must hold one JSON document")
    }
}

/// `47.0 MiB`, `900 KiB`.
fn size_of(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// Which of the documents a call asks for.
pub(crate) fn choose<'a>(docs: &'a [Document], args: &Value) -> Result<Vec<&'a Document>, String> {
    let which = args
        .get("document")
        .and_then(Value::as_str)
        .unwrap_or("primary");
    let pick = |label: &str| docs.iter().find(|d| d.label == label);
    match which {
        "both" if docs.len() > 1 => Ok(docs.iter().collect()),
        "both" | "primary" => pick("primary")
            .map(|d| vec![d])
            .ok_or_else(|| "no primary document was given".to_owned()),
        "secondary" => pick("secondary").map(|d| vec![d]).ok_or_else(|| {
            "there is no secondary document (only one --data file was given)".to_owned()
        }),
        other => Err(format!(
            "document: expected primary, secondary or both, found {other:?}"
        )),
    }
}

/// The `document` argument every data tool takes, as a schema property.
pub(crate) fn document_property(two: bool) -> Value {
    if two {
        json!({"type": "string", "enum": ["primary", "secondary", "both"],
               "description": "which document: primary (default), secondary, or both (each result labelled)"})
    } else {
        json!({"type": "string", "enum": ["primary"],
               "description": "which document (only primary was given)"})
    }
}

/// One result per document, labelled when there are several.
pub(crate) fn labelled(results: Vec<(&Document, String)>) -> String {
    if results.len() == 1 {
        return results
            .into_iter()
            .next()
            .map(|(_, r)| r)
            .unwrap_or_default();
    }
    let mut out = String::new();
    for (d, r) in results {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!("[{}: {}]\n{r}", d.label, file_name(&d.path)));
    }
    out
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// A value as result text: long arrays and strings summarized with counts, deep objects and
/// arrays described by their size.
pub(crate) fn show(v: Node<'_>) -> String {
    serde_json::to_string_pretty(&Bounded { node: v, depth: 0 }).unwrap_or_default()
}

/// A domain tool's value joined with another document's: `{"value": …, KEY: …}` (`null`
/// where the other document has nothing), as one result.
pub(crate) fn show_joined(value: Node<'_>, key: &str, extra: Option<Node<'_>>) -> String {
    struct Joined<'a> {
        value: Node<'a>,
        key: &'a str,
        extra: Option<Node<'a>>,
    }
    impl Serialize for Joined<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            let value = Bounded {
                node: self.value,
                depth: 1,
            };
            let extra = self.extra.map(|node| Bounded { node, depth: 1 });
            // An object's keys in order; the joined value wins a key named `value`.
            if self.key == "value" {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("value", &extra)?;
                return m.end();
            }
            let mut m = s.serialize_map(Some(2))?;
            if self.key < "value" {
                m.serialize_entry(self.key, &extra)?;
                m.serialize_entry("value", &value)?;
            } else {
                m.serialize_entry("value", &value)?;
                m.serialize_entry(self.key, &extra)?;
            }
            m.end()
        }
    }
    serde_json::to_string_pretty(&Joined { value, key, extra }).unwrap_or_default()
}

/// The value at `pointer` as the model may write it, and the pointer it was found at: exactly
/// as written first (a pointer is not free text: `/pad ` is the key `pad `, `/` the key `""`
/// when the top has one), a leading `/` added when missing; `""` is the whole document, and so
/// is `/` when the top has no key `""`; failing all that, the pointer with the whitespace
/// around it trimmed.
fn resolve<'a>(doc: &'a Tree, pointer: &str) -> (String, Option<Node<'a>>) {
    let doc = doc.root();
    let rooted = |p: &str| {
        if p.is_empty() || p.starts_with('/') {
            p.to_owned()
        } else {
            format!("/{p}")
        }
    };
    let exact = rooted(pointer);
    if let Some(v) = doc.pointer(&exact) {
        return (exact, Some(v));
    }
    let trimmed = rooted(pointer.trim());
    if trimmed == "/" || trimmed.is_empty() {
        return (String::new(), Some(doc));
    }
    match doc.pointer(&trimmed) {
        Some(v) => (trimmed, Some(v)),
        None => (exact, None),
    }
}

/// One path segment escaped for a JSON pointer (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The generic tools, run on one document. `Ok` is the result text; `Err` an error result.
pub(crate) fn keys(doc: &Tree, pointer: &str) -> Result<(String, usize), String> {
    let (p, v) = resolve(doc, pointer);
    let Some(v) = v else {
        return Err(format!("not found: {}", shown_pointer(&p)));
    };
    let describe = |x: Node<'_>| -> String {
        match x.kind() {
            Kind::Object => format!("object, {} keys", x.len()),
            Kind::Array => format!("array, {} items", x.len()),
            Kind::String => format!(
                "string, {} characters",
                x.as_str().unwrap_or_default().chars().count()
            ),
            Kind::Number => match x.as_number() {
                Some(n) => format!("number {n}"),
                None => "number".to_owned(),
            },
            Kind::Bool => format!("boolean {}", x.as_bool()),
            Kind::Null => "null".to_owned(),
        }
    };
    match v.kind() {
        Kind::Object => {
            let m = v.members();
            const MAX_KEYS: usize = 300;
            let mut lines = String::new();
            let mut changed = false;
            let mut cut = false;
            for (k, x) in m.iter().take(MAX_KEYS) {
                let t = token(k);
                changed |= t.changed;
                cut |= t.cut;
                lines.push_str(&format!("{} ({})\n", t.text, describe(*x)));
            }
            if m.len() > MAX_KEYS {
                lines.push_str(&format!("… {} more keys\n", m.len() - MAX_KEYS));
            }
            let mut out = format!("{} keys under {}", m.len(), shown_pointer(&p));
            if changed {
                out.push_str(
                    " (each as its JSON-pointer token, to append to the path after a /: \
                     ~ is written ~0 and / is written ~1; a token in double quotes holds \
                     characters written as JSON escapes",
                );
                if cut {
                    out.push_str(&format!(
                        "; a key longer than {MAX_KEY_CHARS} characters is cut, with its length"
                    ));
                }
                out.push(')');
            }
            out.push_str(":\n");
            out.push_str(&lines);
            Ok((out.trim_end().to_owned(), m.len()))
        }
        Kind::Array => {
            let len = v.len();
            Ok((
                format!(
                    "{} is an array of {} items, indexes 0 to {}{}",
                    shown_pointer(&p),
                    len,
                    len.saturating_sub(1),
                    v.items()
                        .next()
                        .map(|x| format!("; the first is {}", describe(x)))
                        .unwrap_or_default()
                ),
                len,
            ))
        }
        _ => Ok((
            format!("{} has no keys: it is {}", shown_pointer(&p), describe(v)),
            0,
        )),
    }
}

/// Characters of a key shown by `json_keys`, at most.
const MAX_KEY_CHARS: usize = 120;

/// A key as `json_keys` shows it.
struct Token {
    text: String,
    /// It is not the key as is (escaped, quoted or cut).
    changed: bool,
    cut: bool,
}

/// A key as its JSON-pointer token (`~` → `~0`, `/` → `~1`), one line and bounded: a token
/// with characters that would break the listing or mislead a reader (controls, quotes,
/// backslashes, invisible and bidirectional formatting, spaces at its ends) is shown in double
/// quotes with JSON escapes, which is how the model writes it back in its arguments; one longer
/// than [`MAX_KEY_CHARS`] is cut, with its length.
fn token(key: &str) -> Token {
    let escaped = escape(key);
    let (body, cut) = match escaped.char_indices().nth(MAX_KEY_CHARS) {
        Some((i, _)) => (&escaped[..i], true),
        None => (escaped.as_str(), false),
    };
    let odd = |c: char| {
        c.is_control()
            || c == '"'
            || c == '\\'
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
    };
    let quote = body.is_empty()
        || body.chars().any(odd)
        || body.starts_with(char::is_whitespace)
        || body.ends_with(char::is_whitespace);
    let mut text = if quote {
        let mut q = String::from('"');
        for c in body.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                '\n' => q.push_str("\\n"),
                '\t' => q.push_str("\\t"),
                '\r' => q.push_str("\\r"),
                c if odd(c) => {
                    let mut buf = [0u16; 2];
                    for u in c.encode_utf16(&mut buf) {
                        q.push_str(&format!("\\u{u:04x}"));
                    }
                }
                c => q.push(c),
            }
        }
        q.push('"');
        q
    } else {
        body.to_owned()
    };
    if cut {
        text.push_str(&format!("… ({} characters in all)", key.chars().count()));
    }
    Token {
        changed: quote || cut || escaped != key,
        text,
        cut,
    }
}

/// The value at a JSON pointer.
pub(crate) fn value(doc: &Tree, pointer: &str) -> Result<String, String> {
    let (p, v) = resolve(doc, pointer);
    v.map(show)
        .ok_or_else(|| format!("not found: {}", shown_pointer(&p)))
}

fn shown_pointer(p: &str) -> &str {
    if p.is_empty() { "/" } else { p }
}

/// The paths whose key or value contains `text` (ignoring case), at most `max`: depth first,
/// an object's keys in order (each key's own match counted when its object is reached).
pub(crate) fn find(doc: &Tree, text: &str, max: usize) -> (String, usize) {
    /// What is left to visit of one container.
    enum Rest<'a> {
        Members(std::vec::IntoIter<(Cow<'a, str>, Node<'a>)>),
        Items(Items<'a>, usize),
    }
    let needle = text.to_lowercase();
    let mut found: Vec<String> = Vec::new();
    let mut total = 0usize;
    let mut hit = |p: &str, what: String| {
        total += 1;
        if found.len() < max {
            found.push(format!("{} {what}", shown_pointer(p)));
        }
    };
    // One frame per open container (at most the 127 levels a document may have): the path
    // to it, and its members or items not visited yet.
    let mut open: Vec<(String, Rest<'_>)> = Vec::new();
    let mut next = Some((String::new(), doc.root()));
    loop {
        if let Some((path, v)) = next.take() {
            match v.kind() {
                Kind::Object => {
                    let m = v.members();
                    if !needle.is_empty() {
                        for (k, _) in m.iter().rev() {
                            if k.to_lowercase().contains(&needle) {
                                hit(&format!("{path}/{}", escape(k)), "(key)".to_owned());
                            }
                        }
                    }
                    open.push((path, Rest::Members(m.into_iter())));
                }
                Kind::Array => open.push((path, Rest::Items(v.items(), 0))),
                Kind::String => {
                    let s = v.as_str().unwrap_or_default();
                    if s.to_lowercase().contains(&needle) {
                        hit(&path, format!("= {}", crate::fmt::one_line(&s, 80)));
                    }
                }
                Kind::Number => {
                    if let Some(n) = v.as_number()
                        && n.to_string().contains(&needle)
                    {
                        hit(&path, format!("= {n}"));
                    }
                }
                Kind::Bool | Kind::Null => {}
            }
        }
        let Some((path, rest)) = open.last_mut() else {
            break;
        };
        next = match rest {
            Rest::Members(m) => m.next().map(|(k, x)| (format!("{path}/{}", escape(&k)), x)),
            Rest::Items(items, i) => items.next().map(|x| {
                *i += 1;
                (format!("{path}/{}", *i - 1), x)
            }),
        };
        if next.is_none() {
            open.pop();
        }
    }
    if total == 0 {
        return (format!("no path contains {text:?}"), 0);
    }
    let mut out = format!("{total} paths contain {text:?}");
    if total > found.len() {
        out.push_str(&format!(" (the first {} shown)", found.len()));
    }
    out.push_str(":\n");
    out.push_str(&found.join("\n"));
    (out, total)
}

/// Fill a pointer template (`/sql/{sql_id}`) from the arguments. Each value is escaped, so an
/// identifier holding `/` cannot reach another part of the document.
pub(crate) fn fill(template: &str, args: &Map<String, Value>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return Ok(out);
        };
        let name = &after[..close];
        let v = match args.get(name) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(other) => {
                return Err(format!(
                    "{name}: expected a string or a number, found {}",
                    super::schema::kind(other)
                ));
            }
            None => return Err(format!("`{name}` is required")),
        };
        out.push_str(&escape(&v));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The tools on a `Value`, as these tests were written before documents became trees: each
    // goes through a tree of the value.
    fn keys(doc: &Value, pointer: &str) -> Result<(String, usize), String> {
        super::keys(&Tree::of(doc), pointer)
    }
    fn value(doc: &Value, pointer: &str) -> Result<String, String> {
        super::value(&Tree::of(doc), pointer)
    }
    fn find(doc: &Value, text: &str, max: usize) -> (String, usize) {
        super::find(&Tree::of(doc), text, max)
    }
    fn show(v: &Value) -> String {
        super::show(Tree::of(v).root())
    }
    fn bounded(v: &Value) -> Value {
        serde_json::to_value(Bounded {
            node: Tree::of(v).root(),
            depth: 0,
        })
        .unwrap()
    }
    use crate::tools::data::MAX_ITEMS;

    /// Peak memory of holding a document and running the tools over all of it, for
    /// `bench/data_memory` (which runs it once per document, in a process of its own):
    /// `AI_DATA_BENCH=FILE`, `AI_DATA_BENCH_AS=tree|value` (`value`: as documents were held
    /// before, a `serde_json::Value`). Prints `peak KiB`, the process's high-water mark.
    #[test]
    #[ignore = "a measurement, run by bench/data_memory"]
    #[allow(clippy::print_stdout, reason = "the figure bench/data_memory reads")]
    fn data_memory() {
        let Ok(path) = std::env::var("AI_DATA_BENCH") else {
            return;
        };
        let hwm = || {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
            line.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        let before = hwm();
        let bytes = std::fs::read(&path).unwrap();
        let shown = if std::env::var("AI_DATA_BENCH_AS").as_deref() == Ok("value") {
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            drop(bytes);
            v.pointer("/0")
                .map(ToString::to_string)
                .unwrap_or_default()
                .len()
        } else {
            let t = Tree::parse(bytes).unwrap();
            let doc = Document {
                label: "primary",
                path: path.into(),
                value: t,
            };
            let (found, _) = super::find(&doc.value, "no such text", 50);
            let (keys, _) = super::keys(&doc.value, "").unwrap();
            let first = super::value(&doc.value, "/0").unwrap_or_default();
            found.len() + keys.len() + first.len()
        };
        println!("peak {} KiB (at start {before} KiB; {shown})", hwm());
    }

    /// `json_find` as it was on a `Value`, to compare the tree's with.
    fn find_in_value(doc: &Value, text: &str, max: usize) -> (String, usize) {
        let needle = text.to_lowercase();
        let mut found: Vec<String> = Vec::new();
        let mut total = 0usize;
        let mut todo: Vec<(String, &Value)> = vec![(String::new(), doc)];
        while let Some((path, v)) = todo.pop() {
            let mut hit = |p: &str, what: String| {
                total += 1;
                if found.len() < max {
                    found.push(format!("{} {what}", shown_pointer(p)));
                }
            };
            match v {
                Value::Object(m) => {
                    for (k, x) in m.iter().rev() {
                        let child = format!("{path}/{}", escape(k));
                        if !needle.is_empty() && k.to_lowercase().contains(&needle) {
                            hit(&child, "(key)".to_owned());
                        }
                        todo.push((child, x));
                    }
                }
                Value::Array(a) => {
                    for (i, x) in a.iter().enumerate().rev() {
                        todo.push((format!("{path}/{i}"), x));
                    }
                }
                Value::String(s) if s.to_lowercase().contains(&needle) => {
                    hit(&path, format!("= {}", crate::fmt::one_line(s, 80)));
                }
                Value::Number(n) if n.to_string().contains(&needle) => hit(&path, format!("= {n}")),
                _ => {}
            }
        }
        if total == 0 {
            return (format!("no path contains {text:?}"), 0);
        }
        let mut out = format!("{total} paths contain {text:?}");
        if total > found.len() {
            out.push_str(&format!(" (the first {} shown)", found.len()));
        }
        out.push_str(":\n");
        out.push_str(&found.join("\n"));
        (out, total)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        #[test]
        fn find_and_keys_on_the_tree_say_what_they_said_on_a_value(
            v in crate::tools::data::tests::values(),
            text in "[a-c1~/ ]{0,2}",
            max in 1usize..20,
        ) {
            // As serde_json reads the text back (floats may not round-trip).
            let text_of = v.to_string();
            let v: Value = serde_json::from_str(&text_of).unwrap();
            let tree = Tree::parse(text_of.into_bytes()).unwrap();
            proptest::prop_assert_eq!(super::find(&tree, &text, max), find_in_value(&v, &text, max));
            for p in ["", "/", "/a", "/0", "/b/0"] {
                proptest::prop_assert_eq!(super::keys(&tree, p).ok(), old_keys(&v, p));
            }
        }
    }

    /// What `json_keys` said on a `Value` (its describe and listing), for the comparison.
    fn old_keys(doc: &Value, pointer: &str) -> Option<(String, usize)> {
        let exact = if pointer.is_empty() || pointer.starts_with('/') {
            pointer.to_owned()
        } else {
            format!("/{pointer}")
        };
        let (p, v) = match doc.pointer(&exact) {
            Some(v) => (exact, v),
            None if exact == "/" => (String::new(), doc),
            None => return None,
        };
        let describe = |x: &Value| -> String {
            match x {
                Value::Object(m) => format!("object, {} keys", m.len()),
                Value::Array(a) => format!("array, {} items", a.len()),
                Value::String(s) => format!("string, {} characters", s.chars().count()),
                Value::Number(n) => format!("number {n}"),
                Value::Bool(b) => format!("boolean {b}"),
                Value::Null => "null".to_owned(),
            }
        };
        Some(match v {
            Value::Object(m) => {
                let mut lines = String::new();
                let mut changed = false;
                let mut cut = false;
                for (k, x) in m.iter().take(300) {
                    let t = token(k);
                    changed |= t.changed;
                    cut |= t.cut;
                    lines.push_str(&format!("{} ({})\n", t.text, describe(x)));
                }
                let mut out = format!("{} keys under {}", m.len(), shown_pointer(&p));
                if changed {
                    out.push_str(
                        " (each as its JSON-pointer token, to append to the path after a /: \
                         ~ is written ~0 and / is written ~1; a token in double quotes holds \
                         characters written as JSON escapes",
                    );
                    if cut {
                        out.push_str(&format!(
                            "; a key longer than {MAX_KEY_CHARS} characters is cut, with its length"
                        ));
                    }
                    out.push(')');
                }
                out.push_str(":\n");
                out.push_str(&lines);
                (out.trim_end().to_owned(), m.len())
            }
            Value::Array(a) => (
                format!(
                    "{} is an array of {} items, indexes 0 to {}{}",
                    shown_pointer(&p),
                    a.len(),
                    a.len().saturating_sub(1),
                    a.first()
                        .map(|x| format!("; the first is {}", describe(x)))
                        .unwrap_or_default()
                ),
                a.len(),
            ),
            other => (
                format!(
                    "{} has no keys: it is {}",
                    shown_pointer(&p),
                    describe(other)
                ),
                0,
            ),
        })
    }

    #[test]
    fn every_key_json_keys_lists_can_be_reached() {
        // H2-10: pointers were trimmed, and `/` was always the whole document.
        let doc = json!({"pad ": 1, " lead": 2, "": {"k": 3}, "t\t": 4, "sql": 5});
        assert_eq!(value(&doc, "/pad ").unwrap(), "1");
        assert_eq!(value(&doc, "/ lead").unwrap(), "2");
        assert_eq!(value(&doc, "/t\t").unwrap(), "4");
        assert_eq!(value(&doc, "/").unwrap(), show(&json!({"k": 3})));
        assert_eq!(value(&doc, "//k").unwrap(), "3");
        // The top: `""`, or `/` where there is no key `""`; stray spaces are still forgiven.
        assert_eq!(value(&doc, "").unwrap(), show(&doc));
        assert_eq!(
            value(&json!({"a": 1}), "/").unwrap(),
            show(&json!({"a": 1}))
        );
        assert_eq!(value(&doc, " /sql ").unwrap(), "5");
        assert_eq!(value(&doc, "sql").unwrap(), "5");
        assert!(keys(&doc, "").unwrap().0.starts_with("5 keys under /"));
        assert!(
            value(&doc, "/nope ")
                .unwrap_err()
                .starts_with("not found: /nope")
        );
    }

    #[test]
    fn bounded_summarizes_with_counts() {
        let v = json!({"a": (0..120).collect::<Vec<_>>(), "s": "x".repeat(5000)});
        let b = bounded(&v);
        assert_eq!(b["a"].as_array().unwrap().len(), MAX_ITEMS + 1);
        assert!(b["a"][MAX_ITEMS].as_str().unwrap().contains("120 in all"));
        assert!(
            b["s"]
                .as_str()
                .unwrap()
                .ends_with("(5000 characters in all)")
        );
    }

    #[test]
    fn keys_are_bounded_escaped_and_one_a_line() {
        let long = "k".repeat(100_000);
        let doc = json!({"x": {long.clone(): 1, "a\nb": 2, "x/y": 3, "~0": 4, "\u{202e}evil": 5,
                              "q\"\\": 6, "": 7, " pad": 8, "plain": 9, "str": "s"}});
        let (text, n) = keys(&doc, "/x").unwrap();
        assert_eq!(n, 10);
        assert!(text.len() < 2000, "{}", text.len());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 11, "{text}");
        assert!(lines[0].contains("JSON-pointer token"), "{text}");
        assert!(
            lines[0].contains("longer than 120 characters is cut"),
            "{text}"
        );
        for want in [
            &format!("{}… (100000 characters in all) (number 1)", "k".repeat(120)),
            "\"a\\nb\" (number 2)",
            "x~1y (number 3)",
            "~00 (number 4)",
            "\"\\u202eevil\" (number 5)",
            "\"q\\\"\\\\\" (number 6)",
            "\"\" (number 7)",
            "\" pad\" (number 8)",
            "plain (number 9)",
            "str (string, 1 characters)",
        ] {
            assert!(lines.contains(&want), "{want:?} in {text}");
        }
        // A quoted token is what the model writes back (JSON-unescaped), then resolved.
        let written: String = serde_json::from_str("\"a\\nb\"").unwrap();
        assert_eq!(value(&doc, &format!("/x/{written}")).unwrap(), "2");
        assert_eq!(value(&doc, "/x/x~1y").unwrap(), "3");
        // Plain keys alone: no explanation.
        let (plain, _) = keys(&json!({"a": 1, "b": {}}), "/").unwrap();
        assert_eq!(plain, "2 keys under /:\na (number 1)\nb (object, 0 keys)");
    }

    #[test]
    fn the_generic_tools() {
        let doc = json!({"sql": {"a/b": {"ms": 12}, "c1": {"ms": 7, "text": "SELECT backup"}}, "list": [1, 2]});
        let (listed, _) = keys(&doc, "/sql").unwrap();
        assert!(listed.contains("\na~1b (object, 1 keys)"), "{listed}");
        assert!(
            listed.contains("~ is written ~0 and / is written ~1"),
            "{listed}"
        );
        assert_eq!(keys(&doc, "list").unwrap().1, 2);
        assert_eq!(keys(&doc, "/nope").unwrap_err(), "not found: /nope");
        assert_eq!(value(&doc, "/sql/a~1b/ms").unwrap(), "12");
        let (text, n) = find(&doc, "BACKUP", 10);
        assert_eq!(n, 1);
        assert!(text.contains("/sql/c1/text = SELECT backup"), "{text}");
        let args = json!({"id": "a/b"});
        assert_eq!(
            fill("/sql/{id}/ms", args.as_object().unwrap()).unwrap(),
            "/sql/a~1b/ms"
        );
        assert!(fill("/sql/{x}", args.as_object().unwrap()).is_err());
    }
}
