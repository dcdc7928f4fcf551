//! The page: `GET /` (HTML), `/app.js` and `/app.css`, built into the binary (no CDN: it works
//! offline), and the HTML page of one note. Nothing here is secret, so the assets are served
//! without the token; the page keeps the token from its URL's fragment (or its form) in the
//! tab's `sessionStorage` and sends it as `Authorization: Bearer` on every call. Source links
//! are signed ([`super::sign`]).

use super::http::Conn;
use super::render::escape;
use super::reply::not_allowed;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// Answer a request for the page or one of its files; give the connection back otherwise.
pub(super) fn asset(conn: Conn, method: &str, path: &str) -> Option<Conn> {
    let (kind, body) = match path {
        "/" | "/index.html" => ("text/html; charset=utf-8", INDEX),
        "/app.js" => ("text/javascript; charset=utf-8", SCRIPT),
        "/app.css" => ("text/css; charset=utf-8", STYLE),
        _ => return Some(conn),
    };
    match method {
        "GET" => conn.send(200, kind, body.as_bytes(), &[]),
        _ => not_allowed(conn, "GET"),
    }
    None
}

/// What the page of a note shows.
pub(super) struct NotePage<'a> {
    pub(super) kb: &'a str,
    pub(super) id: &'a str,
    pub(super) title: &'a str,
    pub(super) ordering: Option<&'a str>,
    pub(super) path: &'a str,
    /// The note rendered ([`super::render::note_markdown`]).
    pub(super) html: &'a str,
    /// The notes that link to it: (signed URL, label).
    pub(super) linked_from: &'a [(String, String)],
}

/// A whole HTML page for one note, styled by `/app.css`; every text from the note escaped.
pub(super) fn note_page(n: &NotePage<'_>) -> String {
    let title = match n.ordering {
        Some(o) => format!("{o} {}", n.title),
        None => n.title.to_owned(),
    };
    let mut backlinks = String::new();
    if !n.linked_from.is_empty() {
        backlinks
            .push_str("<nav class=\"backlinks\" id=\"backlinks\"><h2>Linked from</h2>\n<ul>\n");
        for (url, label) in n.linked_from {
            backlinks.push_str(&format!(
                "<li><a href=\"{}\">{}</a></li>\n",
                escape(url),
                escape(label)
            ));
        }
        backlinks.push_str("</ul></nav>\n");
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · {kb}</title>\n<link rel=\"icon\" href=\"data:,\">\n\
         <link rel=\"stylesheet\" href=\"/app.css\">\n</head>\n<body class=\"note-page\">\n\
         <header class=\"note-head\"><h1 id=\"note-title\">{title}</h1>\n\
         <p class=\"note-meta\"><span class=\"kb\">{kb}</span> · <code>{id}</code> · {path}</p>\
         </header>\n<article class=\"md note\" id=\"note\">\n{html}</article>\n{backlinks}</body>\n</html>\n",
        title = escape(&title),
        kb = escape(n.kb),
        id = escape(n.id),
        path = escape(n.path),
        html = n.html,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_page_escapes_what_the_note_holds() {
        let page = note_page(&NotePage {
            kb: "notes",
            id: "a\"><script>",
            title: "<b>T</b>",
            ordering: Some("01_<i>"),
            path: "x/<y>.md",
            html: "<p>ok</p>",
            linked_from: &[("/kb/notes/note/x?sig=1".into(), "<i>x</i>".into())],
        });
        assert!(page.contains("<a href=\"/kb/notes/note/x?sig=1\">&lt;i&gt;x&lt;/i&gt;</a>"));
        assert!(!page.contains("<script>") && !page.contains("<b>") && !page.contains("<i>"));
        assert!(page.contains("<title>01_&lt;i&gt; &lt;b&gt;T&lt;/b&gt; · notes</title>"));
        assert!(page.contains("<p>ok</p>"));
    }

    #[test]
    fn the_assets_use_no_inline_script_or_style() {
        assert!(INDEX.contains("<script src=\"/app.js\""));
        assert!(!INDEX.contains("<script>") && !INDEX.contains("style=\""));
        assert!(!INDEX.contains("<style"));
        for handler in [
            "onclick=",
            "onload=",
            "onsubmit=",
            "onerror=",
            "javascript:",
        ] {
            assert!(
                !INDEX.contains(handler) && !SCRIPT.contains(handler),
                "{handler}"
            );
        }
        assert!(!SCRIPT.contains("eval(") && !SCRIPT.contains("new Function"));
    }
}
