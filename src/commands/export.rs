//! `ai chat export ID --format md|json` and `ai chat import FILE`: a chat out and back in,
//! unchanged. JSON is the `chat show --json` document; Markdown reads as a transcript and keeps
//! each record's fields in a marker line whose tag no message contains, so it imports exactly.

use std::io::Read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::record::{Header, Record, Role};
use crate::chat::store;
use crate::cli::ExportFormat;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::output;

/// The JSON form of a whole chat.
#[derive(Serialize, Deserialize)]
pub(crate) struct Document {
    #[serde(flatten)]
    pub(crate) header: Header,
    pub(crate) records: Vec<Record>,
}

pub(crate) fn export(ctx: &Ctx, id: &str, format: ExportFormat) -> Result<()> {
    let id = super::chat::existing(ctx, id)?;
    let (header, records) = super::chat::read_all(ctx, &id)?;
    let doc = Document { header, records };
    let text = match format {
        ExportFormat::Json => {
            let mut t =
                serde_json::to_string_pretty(&doc).map_err(|e| Error::backend(e.to_string()))?;
            t.push('\n');
            t
        }
        ExportFormat::Md => markdown(&doc),
    };
    // Made safe on a terminal; exact (and so importable) into a file or a pipe.
    output::print_foreign(&text)
}

/// Markdown: a heading per message; `<!-- ai-TAG {fields} -->` before each carries the rest.
fn markdown(doc: &Document) -> String {
    let tag = tag_for(doc);
    // `-->` would end the HTML comment early in a renderer; JSON can spell `>` as \u003e.
    let head = serde_json::to_string(&doc.header)
        .unwrap_or_default()
        .replace("-->", "--\\u003e");
    let title = doc
        .header
        .title
        .clone()
        .unwrap_or_else(|| format!("Chat {}", doc.header.id));
    let mut out = format!(
        "<!-- ai-chat {tag} {head} -->\n# {}\n",
        crate::fmt::one_line(&title, usize::MAX)
    );
    for r in &doc.records {
        let (heading, content) = match r {
            Record::Message(m) => {
                let who = match m.role {
                    Role::User => "You".to_owned(),
                    Role::Assistant => crate::fmt::one_line(
                        m.origin.alias.as_deref().unwrap_or("Assistant"),
                        usize::MAX,
                    ),
                };
                let mark = if m.interrupted { " (interrupted)" } else { "" };
                (format!("### {who}{mark} · {}", m.ts), m.content.as_str())
            }
            Record::Pending(p) => (
                format!(
                    "### You (not answered: {}) · {}",
                    crate::fmt::one_line(&p.error, usize::MAX),
                    p.ts
                ),
                p.content.as_str(),
            ),
            Record::Summary(s) => (
                format!("### Summary of turns 1–{} · {}", s.through_turn, s.ts),
                s.content.as_str(),
            ),
            // Whole in the marker; the text under the heading is for reading only.
            Record::Round(x) => {
                let meta = serde_json::to_string(r).unwrap_or_default();
                let heading = format!("### Tool round {} of turn {} · {}", x.round, x.turn, x.ts);
                push(&mut out, &tag, &meta, &heading, &round_text(x));
                continue;
            }
            Record::Unknown(raw) => {
                let heading = "### A record from a newer ai (kept as it is)";
                push(&mut out, &tag, raw.get(), heading, "");
                continue;
            }
            Record::Chat(_) => continue,
        };
        let mut meta = serde_json::to_value(r).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut meta {
            m.remove("content");
        }
        push(&mut out, &tag, &meta.to_string(), &heading, content);
    }
    out
}

/// One record: its marker, its heading, its content.
fn push(out: &mut String, tag: &str, meta: &str, heading: &str, content: &str) {
    let meta = meta.replace("-->", "--\\u003e");
    out.push_str(&format!(
        "\n<!-- ai-{tag} {meta} -->\n{heading}\n\n{content}\n"
    ));
}

/// A tool round, for reading: each call and how it went.
fn round_text(x: &crate::chat::record::RoundRec) -> String {
    let mut out = String::new();
    if !x.text.is_empty() {
        out.push_str(&format!("{}\n\n", x.text));
    }
    for c in &x.calls {
        let result = x.results.iter().find(|r| r.id == c.id);
        let how = match result {
            Some(r) if r.error => "error",
            Some(_) => "ok",
            None => "no result",
        };
        out.push_str(&format!(
            "- `{}` {} → {how}\n",
            crate::fmt::one_line(&c.name, usize::MAX),
            crate::fmt::one_line(&c.arguments, usize::MAX)
        ));
    }
    out.truncate(out.trim_end().len());
    out
}

/// 8 hex digits found in no message, header or heading.
fn tag_for(doc: &Document) -> String {
    let all = serde_json::to_string(doc).unwrap_or_default();
    let mut n: u32 = 0x9e37_79b9 ^ (all.len() as u32);
    loop {
        let tag = format!("{n:08x}");
        if !all.contains(&tag) {
            return tag;
        }
        n = n.wrapping_mul(0x0100_0193).wrapping_add(1);
    }
}

/// Read a Markdown export back.
pub(crate) fn parse_markdown(text: &str) -> std::result::Result<Document, String> {
    let first = text.lines().next().unwrap_or("");
    let rest = first
        .strip_prefix("<!-- ai-chat ")
        .ok_or("the first line is not an ai chat marker")?;
    let (tag, json) = rest.split_once(' ').ok_or("the first line has no tag")?;
    let json = json
        .strip_suffix(" -->")
        .ok_or("the first line is not a closed comment")?;
    let header: Header = serde_json::from_str(json).map_err(|e| format!("the chat header: {e}"))?;
    let marker = format!("\n<!-- ai-{tag} ");
    let mut records = Vec::new();
    let mut parts = text.split(&marker);
    parts.next(); // the header and title
    for (i, part) in parts.enumerate() {
        let (meta, body) = part
            .split_once(" -->\n")
            .ok_or(format!("record {}: unclosed marker", i + 1))?;
        // The heading line, a blank line, then the content (which ends where the next marker
        // began, less the newline written after it).
        let (_, after) = body
            .split_once('\n')
            .ok_or(format!("record {}: no heading", i + 1))?;
        let content = after
            .strip_prefix('\n')
            .ok_or(format!("record {}: no blank line after the heading", i + 1))?;
        let content = content.strip_suffix('\n').unwrap_or(content);
        let mut v: Value =
            serde_json::from_str(meta).map_err(|e| format!("record {}: {e}", i + 1))?;
        // Rounds and records of newer types are whole in their marker.
        if !matches!(v["type"].as_str(), Some("message" | "pending" | "summary")) {
            let exact = meta.replace("--\\u003e", "-->");
            records.push(
                Record::parse(exact.as_bytes()).map_err(|e| format!("record {}: {e}", i + 1))?,
            );
            continue;
        }
        if let Value::Object(m) = &mut v {
            m.insert("content".into(), Value::String(content.to_owned()));
        }
        records.push(serde_json::from_value(v).map_err(|e| format!("record {}: {e}", i + 1))?);
    }
    Ok(Document { header, records })
}

/// Make an export safe to write: a version this ai reads, no second header (records of types
/// from a newer ai are kept as they are), and no prompt left without its reply (it becomes a pending prompt, as a failed
/// turn's would be). The result is parsed as the file it will be, so nothing unreadable lands.
fn checked(mut doc: Document) -> std::result::Result<Document, String> {
    use crate::chat::record::{PendingRec, VERSION};
    if doc.header.v > VERSION {
        return Err(format!(
            "it was written by a newer ai (format {}; this one reads {VERSION})",
            doc.header.v
        ));
    }
    doc.header.v = VERSION;
    if doc.records.iter().any(|r| matches!(r, Record::Chat(_))) {
        return Err("a chat header stands among its records".into());
    }
    let last_turn = doc
        .records
        .iter()
        .rposition(|r| matches!(r, Record::Message(_) | Record::Pending(_)));
    if let Some(i) = last_turn
        && let Record::Message(m) = &doc.records[i]
        && m.role == Role::User
    {
        let m = m.clone();
        doc.records[i] = Record::Pending(PendingRec {
            content: m.content,
            ts: m.ts,
            origin: m.origin,
            error: "imported without its reply".into(),
            replaces: None,
            attachments: m.attachments,
        });
    }
    let mut bytes = crate::chat::record::line(&Record::Chat(doc.header.clone()));
    for r in &doc.records {
        bytes.push_str(&crate::chat::record::line(r));
    }
    store::parse(bytes.as_bytes(), None, std::path::Path::new("the import"))
        .map_err(|e| e.to_string())?;
    Ok(doc)
}

/// `ai chat import FILE` (or `-` for stdin): a new chat from an export. It keeps its ID when
/// that is free, else gets a new one; the ID is printed.
/// The largest export `chat import` reads (a chat's whole history, as text).
const MAX_IMPORT: u64 = 256 * 1024 * 1024;

/// The export to import (`-`: standard input), read up to [`MAX_IMPORT`].
fn read_bounded(file: &str) -> Result<String> {
    let (reader, what): (Box<dyn Read>, String) = if file == "-" {
        (Box::new(std::io::stdin()), "standard input".to_owned())
    } else {
        let f = std::fs::File::open(file)
            .map_err(|e| Error::usage(format!("cannot read {file}: {e}")))?;
        // A regular file says its size: refused before a byte of it is read.
        if f.metadata()
            .is_ok_and(|m| m.is_file() && m.len() > MAX_IMPORT)
        {
            return Err(Error::usage(format!(
                "{file} is larger than {} MiB, more than any chat export ai imports",
                MAX_IMPORT >> 20
            ))
            .hint("import what `ai chat export ID` wrote"));
        }
        (Box::new(f), file.to_owned())
    };
    let mut bytes = Vec::new();
    reader
        .take(MAX_IMPORT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::usage(format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > MAX_IMPORT {
        return Err(Error::usage(format!(
            "{what} is larger than {} MiB, more than any chat export ai imports",
            MAX_IMPORT >> 20
        ))
        .hint("import what `ai chat export ID` wrote"));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!("{what} is not a chat export: it is not UTF-8 text"))
            .hint("import what `ai chat export ID` wrote")
    })
}

pub(crate) fn import(ctx: &Ctx, file: &str) -> Result<()> {
    let text = read_bounded(file)?;
    let doc = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Document>(&text).map_err(|e| e.to_string())
    } else {
        parse_markdown(&text)
    }
    .map_err(|why| {
        Error::usage(format!("{file} is not a chat export: {why}"))
            .hint("import what `ai chat export ID --format json` or `--format md` wrote")
    })?;
    let doc = checked(doc).map_err(|why| {
        Error::usage(format!("{file} cannot be imported: {why}")).hint("nothing was written")
    })?;
    let wanted = doc.header.id.clone();
    let free = store::valid_id(&wanted)
        && !crate::cli::is_reserved(&wanted)
        && ctx.store.find(&wanted).is_none();
    let name = free.then_some(wanted.as_str());
    let mut chat = match name {
        Some(n) => ctx.store.create(Some(n), doc.header.clone()),
        None => ctx.store.create(None, doc.header.clone()),
    }?;
    if chat.id != wanted && chat.id != store::file_id(&wanted) {
        let why = if !store::valid_id(&wanted) {
            format!("'{wanted}' is not a valid chat ID")
        } else if crate::cli::is_reserved(&wanted) {
            format!("'{wanted}' cannot be a chat name (it is a command word)")
        } else {
            format!("chat {wanted} exists already")
        };
        ctx.ui
            .notice(&format!("ai: {why}; imported as {}", chat.id));
    }
    chat.append(&doc.records, &ctx.ui)?;
    output::print_stdout(&format!("{}\n", chat.id))
}
