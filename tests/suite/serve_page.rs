//! The page of `ai serve` (`GET /`, its script and style), its headers (CSP and friends), the
//! bearer-only authorization (no cookie) and signed note links, the knowledge-base endpoints, and markdown rendered on
//! the server so that model and note text never becomes markup.

use std::path::PathBuf;

use serde_json::Value;

use crate::serve::{Answer, TOKEN, http, json, raw, request, serve};
use crate::support::*;

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Notes with hostile markdown in them.
const NOTES: &[(&str, &str)] = &[
    (
        "01_001_Coffee_c3d4e5f60.md",
        "# Coffee\n\nWe brew coffee with a **French press**.\n\n<script>alert('note')</script>\n\nSee <img src=x onerror=alert(1)> and [click](javascript:alert(1)) and [Espresso](02_001_Espresso_d4e5f6071.md).\n",
    ),
    (
        "02_001_Espresso_d4e5f6071.md",
        "# Espresso\n\n| grind | bar |\n|---|---|\n| fine | 9 |\n",
    ),
];

fn notes(env: &Env) -> PathBuf {
    let dir = env.path("zettel");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in NOTES {
        std::fs::write(dir.join(name), text).unwrap();
    }
    env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
        .success();
    dir
}

fn get(port: u16, path: &str, headers: &[&str]) -> Answer {
    request(port, "GET", path, headers, b"")
}

fn bearer() -> String {
    format!("Authorization: Bearer {TOKEN}")
}

/// The headers every answer carries.
fn assert_strict(a: &Answer) {
    assert_eq!(
        a.header("Content-Security-Policy").as_deref(),
        Some(CSP),
        "{a:?}"
    );
    assert_eq!(a.header("Referrer-Policy").as_deref(), Some("no-referrer"));
    assert_eq!(
        a.header("X-Content-Type-Options").as_deref(),
        Some("nosniff")
    );
    assert_eq!(a.header("X-Frame-Options").as_deref(), Some("DENY"));
}

/// No markup from the text: no script or image tag, no tag with an event handler or a
/// javascript: URL. (Escaped, the same words are harmless text: only real tags are checked.)
fn assert_inert(html: &str) {
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let end = rest[start..]
            .find('>')
            .map_or(rest.len(), |e| start + e + 1);
        let tag = rest[start..end].to_ascii_lowercase();
        assert!(
            !tag.starts_with("<script") && !tag.starts_with("<img") && !tag.starts_with("<svg"),
            "{tag} in {html}"
        );
        assert!(
            !tag.contains("javascript:") && !tag.contains("onerror") && !tag.contains("onload"),
            "{tag} in {html}"
        );
        rest = &rest[end..];
    }
}

#[test]
fn the_page_and_its_files_are_served_without_a_token_and_with_a_strict_policy() {
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let page = get(s.port, "/", &[]);
    assert_eq!(page.status, 200, "{page:?}");
    assert_eq!(
        page.header("Content-Type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert!(
        page.body.contains("<script src=\"/app.js\""),
        "{}",
        page.body
    );
    assert!(!page.body.contains(TOKEN));
    assert_strict(&page);
    for (path, kind) in [
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"),
    ] {
        let a = get(s.port, path, &[]);
        assert_eq!(a.status, 200, "{path}");
        assert_eq!(a.header("Content-Type").as_deref(), Some(kind));
        assert_strict(&a);
    }
    // The API and its errors carry the same headers.
    let a = get(s.port, "/chats", &[&bearer()]);
    assert_eq!(a.status, 200);
    assert_strict(&a);
    let a = get(s.port, "/chats", &[]);
    assert_eq!(a.status, 401);
    assert_strict(&a);
    let a = request(
        s.port,
        "POST",
        "/",
        &["Content-Type: application/json"],
        b"{}",
    );
    assert_eq!(a.status, 405);
    // The page of another host is refused like the API (DNS rebinding).
    let a = raw(
        s.port,
        format!("GET / HTTP/1.1\r\nHost: evil.example:{}\r\n\r\n", s.port).as_bytes(),
    );
    assert_eq!(a.status, 421, "{a:?}");
}

#[test]
fn the_printed_url_carries_a_token_made_by_the_server_in_its_fragment() {
    let env = Env::echo();
    let s = serve(&env, &[], &[]);
    wait_for("the open line", || s.log().contains("ai serve: open "));
    let log = s.log();
    let line = log.lines().find(|l| l.contains("ai serve: open ")).unwrap();
    let url = line.split("open ").nth(1).unwrap();
    let prefix = format!("http://127.0.0.1:{}/#token=", s.port);
    let token = url
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(token.len(), 32, "{line}");
    let (status, _) = http(s.port, "GET", "/chats", Some(token), b"");
    assert_eq!(status, 200);
    // A token the user gave is not printed.
    let s = serve(&env, &["--token", TOKEN], &[]);
    wait_for("the open line", || s.log().contains("ai serve: open "));
    assert!(!s.log().contains(TOKEN), "{}", s.log());
    assert!(s.log().contains("the page asks for the token"));
}

#[test]
fn no_cookie_authorizes_anything() {
    // S1: a cookie reaches every port of 127.0.0.1, so the page uses none: POST /session is
    // gone, and no cookie opens anything.
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let json_type = "Content-Type: application/json";
    let a = request(s.port, "POST", "/session", &[&bearer(), json_type], b"{}");
    assert_eq!(a.status, 404, "{a:?}");
    assert!(a.header("Set-Cookie").is_none());
    for cookie in [
        format!(
            "Cookie: ai_session_{}=0123456789abcdef0123456789abcdef",
            s.port
        ),
        format!("Cookie: ai_session={TOKEN}"),
    ] {
        assert_eq!(get(s.port, "/chats", &[&cookie]).status, 401, "{cookie}");
        let a = request(
            s.port,
            "POST",
            "/call",
            &[&cookie, json_type],
            br#"{"prompt":"by cookie"}"#,
        );
        assert_eq!(a.status, 401, "{cookie}");
    }
    // The page keeps the token in sessionStorage and sends it as a bearer header.
    let a = get(s.port, "/app.js", &[]);
    assert!(a.body.contains("sessionStorage"), "the page's script");
    assert!(a.body.contains("'Bearer '"), "the page's script");
    assert!(!a.body.contains("/session"), "the page's script");
}

/// The signed URL of the first source of a grounded answer, split into path and query.
fn signed(sources: &Value) -> (String, String) {
    let url = sources[0]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("{sources}"));
    let (path, query) = url.split_once('?').unwrap();
    assert!(query.starts_with("sig="), "{url}");
    (path.to_owned(), query.to_owned())
}

/// A source's signed URL opens that note without the token, and nothing else.
fn assert_opens_only_its_note(port: u16, path: &str, query: &str) {
    let a = get(port, &format!("{path}?{query}"), &[]);
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body.contains("<strong>French press</strong>"),
        "{}",
        a.body
    );
    assert_strict(&a);
    let a = get(port, &format!("{path}?format=json&{query}"), &[]);
    assert_eq!(a.status, 200, "{a:?}");
    let mut changed = query.to_owned();
    let last = changed.pop().unwrap();
    changed.push(if last == '0' { '1' } else { '0' });
    for bad in [
        format!("{path}?{changed}"),
        path.to_owned(),
        format!("/kb/notes/note/02_001_Espresso_d4e5f6071.md?{query}"),
        format!("{path}/x?{query}"),
        format!("/kb/notes/search?q=coffee&{query}"),
        format!("/kb?{query}"),
        format!("/chats?{query}"),
        format!("/models?{query}"),
    ] {
        let a = get(port, &bad, &[]);
        assert_eq!(a.status, 401, "{bad}: {a:?}");
    }
    // Only GET.
    let a = request(port, "DELETE", &format!("{path}?{query}"), &[], b"");
    assert_eq!(a.status, 401, "{a:?}");
}

#[test]
fn knowledge_bases_are_listed_searched_and_their_notes_shown() {
    let env = Env::echo();
    notes(&env);
    let s = serve(&env, &["--token", TOKEN], &[]);
    let auth = bearer();
    let a = get(s.port, "/kb", &[&auth]);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.json(),
        serde_json::json!([{"name":"notes","description":null,"notes":2,"embed":null,"indexed":true}])
    );
    let a = get(s.port, "/kb/notes/search?q=french+press&k=1", &[&auth]);
    assert_eq!(a.status, 200, "{a:?}");
    let hits = a.json();
    assert_eq!(hits.as_array().unwrap().len(), 1);
    assert_eq!(hits[0]["id"], "c3d4e5f60");
    assert_eq!(hits[0]["kb"], "notes");
    // A query that looks like an option is still a query.
    let a = get(s.port, "/kb/notes/search?q=--help", &[&auth]);
    assert_eq!(a.status, 200, "{a:?}");
    for (path, status) in [
        ("/kb/notes/search", 400),
        ("/kb/notes/search?q=+", 400),
        ("/kb/notes/search?q=x&k=0", 400),
        ("/kb/notes/search?q=x&k=many", 400),
        ("/kb/notes/search?q=x&k=51", 400),
        ("/kb/none/search?q=x", 404),
        ("/kb/-x/search?q=x", 400),
        ("/kb/a%2Fb/search?q=x", 400),
        ("/kb/notes/note/nope", 404),
        ("/kb/none/note/c3d4e5f60", 404),
        ("/kb/notes/note/-x", 400),
        ("/kb/notes/other", 404),
    ] {
        let a = get(s.port, path, &[&auth]);
        assert_eq!(a.status, status, "{path}: {a:?}");
        let e = a.json();
        assert!(e["error"]["message"].is_string(), "{path}: {e}");
    }
    // The CLI's own words come through.
    let a = get(s.port, "/kb/none/search?q=x", &[&auth]);
    assert!(
        a.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("none"),
        "{a:?}"
    );
    let a = request(
        s.port,
        "POST",
        "/kb",
        &[&auth, "Content-Type: application/json"],
        b"{}",
    );
    assert_eq!(a.status, 405);

    // A note as a page: rendered markdown, nothing from the note as markup.
    let a = get(s.port, "/kb/notes/note/c3d4e5f60", &[&auth]);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.header("Content-Type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert_strict(&a);
    assert!(
        a.body.contains("<title>01_001 Coffee · notes</title>"),
        "{}",
        a.body
    );
    assert!(
        a.body.contains("<strong>French press</strong>"),
        "{}",
        a.body
    );
    assert!(
        a.body
            .contains("&lt;script&gt;alert(&#39;note&#39;)&lt;/script&gt;")
            || a.body.contains("&lt;script&gt;"),
        "{}",
        a.body
    );
    // A link to another note is signed (it opens without the token, as a source link does).
    assert!(
        a.body
            .contains("<a href=\"/kb/notes/note/02_001_Espresso_d4e5f6071.md?sig="),
        "{}",
        a.body
    );
    assert_inert(&a.body);
    // A relative link between notes leads to the other note (by its path).
    let a = get(
        s.port,
        "/kb/notes/note/02_001_Espresso_d4e5f6071.md",
        &[&auth],
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body.contains("<table>") && a.body.contains("<td>fine</td>"),
        "{}",
        a.body
    );
    // As JSON.
    let a = get(s.port, "/kb/notes/note/c3d4e5f60?format=json", &[&auth]);
    let n = a.json();
    assert_eq!(n["id"], "c3d4e5f60");
    assert_eq!(n["title"], "Coffee");
    assert!(n["text"].as_str().unwrap().contains("<script>"));
    assert_inert(n["html"].as_str().unwrap());
}

#[test]
fn a_note_is_refused_without_the_token_or_a_signature() {
    let env = Env::echo();
    notes(&env);
    let s = serve(&env, &["--token", TOKEN], &[]);
    for path in [
        "/kb",
        "/kb/notes/note/c3d4e5f60",
        "/kb/notes/search?q=coffee",
    ] {
        let a = get(s.port, path, &[]);
        assert_eq!(a.status, 401, "{path}");
        assert!(!a.body.contains("French"), "{path}");
        let a = get(s.port, path, &["Cookie: ai_session_1=x"]);
        assert_eq!(a.status, 401, "{path}");
        let sig = "sig=0000000000000000000000000000000000000000000000000000000000000000";
        let a = get(s.port, &format!("{path}?{sig}"), &[]);
        assert_eq!(a.status, 401, "{path}");
    }
}

/// Server-sent events: (name, data as JSON).
fn events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .filter_map(|e| {
            let name = e.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = e.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name.to_owned(), json(data)))
        })
        .collect()
}

#[test]
fn a_grounded_streamed_call_sends_its_sources_then_the_rendered_reply() {
    let reply = "Use a **French press** [1].\n\n<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))";
    let server = Server::respond(move |_| Reply::sse(&[&oa_stream(reply, 5, 3)]));
    let env = Env::for_provider("openai", &server);
    notes(&env);
    let s = serve(&env, &["--token", TOKEN], &[]);
    let auth = bearer();
    let json_type = "Content-Type: application/json";
    let a = request(
        s.port,
        "POST",
        "/call",
        &[&auth, json_type],
        br#"{"alias":"openai:gpt-test","prompt":"How do we brew coffee?","kb":"notes","stream":true}"#,
    );
    assert_eq!(a.status, 200, "{a:?}");
    let ev = events(&a.body);
    let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
    let n = names.len();
    assert!(n >= 3, "{names:?}");
    assert_eq!(&names[n - 2..], ["sources", "done"], "{names:?}");
    assert!(names[..n - 2].iter().all(|n| *n == "delta"), "{names:?}");
    let sources = &ev[n - 2].1["sources"];
    assert_eq!(sources[0]["kb"], "notes");
    assert_eq!(sources[0]["id"], "c3d4e5f60");
    let (path, query) = signed(sources);
    assert_eq!(path, "/kb/notes/note/c3d4e5f60");
    assert_opens_only_its_note(s.port, &path, &query);
    let done = &ev[n - 1].1;
    assert_eq!(signed(&done["sources"]), (path.clone(), query.clone()));
    assert_eq!(done["reply"], reply);
    let html = done["html"].as_str().unwrap();
    assert!(html.contains("<strong>French press</strong>"), "{html}");
    assert_inert(html);
    // The model was given the notes.
    let body = server.requests()[0].json();
    assert!(body.to_string().contains("French press"));

    // The chat shows the reply rendered, and its sources.
    let id = done["chat"].as_str().unwrap();
    let a = get(s.port, &format!("/chats/{id}"), &[&auth]);
    let chat = a.json();
    assert_eq!(chat["kb"], serde_json::json!(["notes"]));
    let m = chat["messages"].as_array().unwrap();
    assert!(m[0].get("html").is_none(), "a prompt is shown as text");
    assert_inert(m[1]["html"].as_str().unwrap());
    assert!(m[1]["html"].as_str().unwrap().contains("<strong>"));
    assert_eq!(m[1]["sources"][0]["id"], "c3d4e5f60");
    let (p, q) = signed(&m[1]["sources"]);
    assert_eq!(p, path);
    assert_opens_only_its_note(s.port, &p, &q);

    // A follow-up without the notes (no_kb) sends no sources event.
    let body = format!(r#"{{"prompt":"and tea?","chat":"{id}","no_kb":true,"stream":true}}"#);
    let a = request(
        s.port,
        "POST",
        "/call",
        &[&auth, json_type],
        body.as_bytes(),
    );
    let names: Vec<String> = events(&a.body).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names.last().map(String::as_str), Some("done"), "{names:?}");
    assert!(!names.iter().any(|n| n == "sources"), "{names:?}");
}

#[test]
fn bad_knowledge_base_fields_of_a_call_are_refused() {
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN], &[]);
    for (body, status, words) in [
        (
            &br#"{"prompt":"x","kb":"notes","no_kb":true}"#[..],
            400,
            "both",
        ),
        (br#"{"prompt":"x","kb":"--dry-run"}"#, 400, "cannot name"),
        (br#"{"prompt":"x","kb":"none"}"#, 404, "none"),
    ] {
        let (got, text) = http(s.port, "POST", "/call", Some(TOKEN), body);
        assert_eq!(got, status, "{text}");
        let e = json(&text);
        assert!(
            e["error"]["message"].as_str().unwrap().contains(words),
            "{text}"
        );
    }
}

#[test]
fn a_link_from_one_note_to_another_opens_it_without_the_token() {
    let env = Env::echo();
    notes(&env);
    let s = serve(&env, &["--token", TOKEN], &[]);
    let a = get(s.port, "/kb/notes/note/c3d4e5f60?format=json", &[&bearer()]);
    assert_eq!(a.status, 200, "{a:?}");
    let html = a.json()["html"].as_str().unwrap().to_owned();
    let at = html
        .find("href=\"/kb/notes/note/02_001_Espresso_d4e5f6071.md?sig=")
        .unwrap_or_else(|| panic!("the link to Espresso is signed: {html}"));
    let href = &html[at + 6..];
    let href = &href[..href.find('"').unwrap()].replace("&amp;", "&");
    let a = get(s.port, href, &[]);
    assert_eq!(a.status, 200, "{href}: {a:?}");
    assert!(a.body.contains("Espresso"), "{}", a.body);
}
