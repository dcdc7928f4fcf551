//! The knowledge-base endpoints, each running `ai kb … --json` as the chat endpoints run
//! `ai chat …`:
//!
//! - `GET /kb`: `[{name, description, notes, embed, indexed}]`
//! - `GET /kb/NAME/search?q=…&k=…`: the hits of `ai kb search`
//! - `GET /kb/NAME/note/ID`: the note as an HTML page (markdown rendered, see [`super::render`]);
//!   `?format=json` for `{kb, id, title, ordering, path, text, html}`. An ID may be a path in
//!   the notes folder, slashes and all (so a relative link between notes leads to the other).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Shared;
use super::http::{Conn, Head, percent_decode, query_param};
use super::page::{NotePage, note_page};
use super::render::note_markdown;
use super::reply::{fail, not_allowed, not_json, run_ai};

/// The most hits one search returns.
const MAX_K: usize = 50;

pub(super) fn route(conn: Conn, head: &Head, segments: &[&str], shared: &Shared) {
    if head.method != "GET" {
        return not_allowed(conn, "GET");
    }
    match segments {
        ["kb"] => list(conn, shared),
        ["kb", name, "search"] => {
            let Some(conn) = valid_name(conn, name) else {
                return;
            };
            search(conn, head, &percent_decode(name, false), shared);
        }
        ["kb", name, "note", id @ ..] if !id.is_empty() => {
            let Some(conn) = valid_name(conn, name) else {
                return;
            };
            let id: Vec<String> = id.iter().map(|p| percent_decode(p, false)).collect();
            note(
                conn,
                head,
                &percent_decode(name, false),
                &id.join("/"),
                shared,
            );
        }
        _ => fail(
            conn,
            404,
            "no such endpoint",
            Some("GET /kb, /kb/NAME/search?q=…, /kb/NAME/note/ID"),
        ),
    }
}

/// A knowledge base's name as the path gives it: what `ai kb add` accepts.
fn valid_name(conn: Conn, name: &str) -> Option<Conn> {
    let name = percent_decode(name, false);
    if crate::config::kb::valid_name(&name) {
        return Some(conn);
    }
    fail(
        conn,
        400,
        &format!(
            "'{}' cannot name a knowledge base",
            crate::output::sanitize(&name)
        ),
        Some("GET /kb lists them"),
    );
    None
}

fn list(conn: Conn, shared: &Shared) {
    #[derive(Deserialize, Serialize)]
    struct Row {
        name: String,
        #[serde(default)]
        description: Option<String>,
        #[serde(default)]
        notes: u64,
        #[serde(default)]
        embed: Option<String>,
        #[serde(default)]
        indexed: bool,
    }
    let Some((conn, out)) = run_ai(conn, shared, &["kb", "list", "--json"]) else {
        return;
    };
    match serde_json::from_slice::<Vec<Row>>(&out) {
        Ok(rows) => conn.json(200, &rows, &[]),
        Err(_) => not_json(conn),
    }
}

fn search(conn: Conn, head: &Head, name: &str, shared: &Shared) {
    let query = query_param(&head.query, "q").unwrap_or_default();
    if query.trim().is_empty() {
        return fail(
            conn,
            400,
            "the query is empty",
            Some(&format!("GET /kb/{name}/search?q=what+you+look+for")),
        );
    }
    if query.contains('\0') {
        return fail(conn, 400, "the query holds a NUL character", None);
    }
    let k = match query_param(&head.query, "k").map(|k| k.parse::<usize>()) {
        None => 5,
        Some(Ok(k)) if (1..=MAX_K).contains(&k) => k,
        Some(_) => {
            return fail(
                conn,
                400,
                &format!("k must be a number from 1 to {MAX_K}"),
                None,
            );
        }
    };
    let k = k.to_string();
    // After `--`, a query that starts with `-` is still the query.
    let args = ["kb", "search", name, "-k", &k, "--json", "--", &query];
    let Some((conn, out)) = run_ai(conn, shared, &args) else {
        return;
    };
    match serde_json::from_slice::<Value>(&out) {
        Ok(hits) => conn.json(200, &hits, &[]),
        Err(_) => not_json(conn),
    }
}

/// `target` relative to the folder `dir` (both `/`-separated, inside the notes folder); `None`
/// when it is empty or leaves the folder.
fn resolve(dir: &str, target: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `ai kb show --json`.
#[derive(Deserialize, Serialize)]
struct Note {
    kb: String,
    id: String,
    title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ordering: Option<String>,
    path: String,
    text: String,
    #[serde(default)]
    html: String,
    /// The notes that link to this one, each with its signed URL.
    #[serde(default)]
    linked_from: Vec<LinkedNote>,
}

/// A note that links to the one shown.
#[derive(Deserialize, Serialize)]
struct LinkedNote {
    id: String,
    title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ordering: Option<String>,
    path: String,
    #[serde(default)]
    url: String,
}

/// The URL of the note a `[[wikilink]]` names (`[[name#heading]]`), signed as source links
/// are; only a `#heading` of this note stays a fragment. `None` for what names no note.
fn wiki_url(signer: &super::sign::Signer, kb: &str, target: &str) -> Option<String> {
    let (name, fragment) = match target.split_once('#') {
        Some((n, f)) => (n.trim(), Some(f)),
        None => (target.trim(), None),
    };
    let fragment = fragment.map(|f| format!("#{}", f.trim()));
    if name.is_empty() {
        return fragment;
    }
    if name.contains(['\0', '\n', '\r', '?'])
        || name.starts_with(['-', '/'])
        || name
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return None;
    }
    let mut url = signer.note_url(kb, name);
    url.push_str(fragment.as_deref().unwrap_or(""));
    Some(url)
}

fn note(conn: Conn, head: &Head, name: &str, id: &str, shared: &Shared) {
    if id.contains(['\0', '\n', '\r']) || id.starts_with('-') {
        return fail(
            conn,
            400,
            &format!("'{}' is not a note ID", crate::output::sanitize(id)),
            Some(&format!("GET /kb/{name}/search?q=… finds notes")),
        );
    }
    let as_json = query_param(&head.query, "format").is_some_and(|f| f == "json");
    let args = ["kb", "show", name, "--json", "--", id];
    let Some((conn, out)) = run_ai(conn, shared, &args) else {
        return;
    };
    let Ok(mut n) = serde_json::from_slice::<Note>(&out) else {
        return not_json(conn);
    };
    // A relative link leads to another note of the same base: it is signed, so it opens from a
    // note reached by a signed link too.
    // Resolved against the note's own folder (the URL may name it by its ID).
    let note_path = n.path.clone();
    let base_dir = note_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let signer = &shared.signer;
    let wiki = |target: &str| wiki_url(signer, name, target);
    for l in &mut n.linked_from {
        l.url = signer.note_url(name, &l.id);
    }
    n.html = note_markdown(
        &n.text,
        &|target| {
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (target, None),
            };
            let path = path.split('?').next().unwrap_or("");
            let resolved = resolve(base_dir, &percent_decode(path, false))?;
            let mut url = shared.signer.note_url(name, &resolved);
            if let Some(f) = fragment {
                url.push('#');
                url.push_str(f);
            }
            Some(url)
        },
        &wiki,
    );
    if as_json {
        return conn.json(200, &n, &[]);
    }
    let page = note_page(&NotePage {
        kb: &n.kb,
        id: &n.id,
        title: &n.title,
        ordering: n.ordering.as_deref(),
        path: &n.path,
        html: &n.html,
        linked_from: &n
            .linked_from
            .iter()
            .map(|l| {
                let label = match &l.ordering {
                    Some(o) => format!("{o} {}", l.title),
                    None => l.title.clone(),
                };
                (l.url.clone(), label)
            })
            .collect::<Vec<_>>(),
    });
    conn.send(200, "text/html; charset=utf-8", page.as_bytes(), &[]);
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn relative_targets_resolve_inside_the_folder() {
        assert_eq!(resolve("", "b.md").as_deref(), Some("b.md"));
        assert_eq!(resolve("sub", "../b.md").as_deref(), Some("b.md"));
        assert_eq!(resolve("a/b", "./c/d.md").as_deref(), Some("a/b/c/d.md"));
        assert_eq!(resolve("", "../b.md"), None);
        assert_eq!(resolve("", ""), None);
    }
}
