//! The page of `ai serve` in a real browser: headless Chromium driven over WebDriver
//! (`support/webdriver.rs`). The model is the test server speaking the OpenAI protocol, its
//! replies streamed in pieces with pauses so the page visibly streams; the notes are a
//! knowledge base made with `ai kb add`. Needs Debian's `chromium` and `chromium-driver`
//! (`.ci/run` installs them and sets `AI_REQUIRE_BROWSER=1`); without them, elsewhere, it says
//! how to install them and is skipped.
//!
//! The screenshot is saved in the test's temp target folder; with `AI_UPDATE_SCREENSHOT=1` it
//! also replaces `docs/screenshot.png`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::serve::{TOKEN, serve};
use crate::support::webdriver::Browser;
use crate::support::*;

const COFFEE: &str =
    "# Coffee\n\nWe brew coffee with a **French press**: coarse grind, four minutes.\n";
const ESPRESSO: &str = "# Espresso\n\nA fine grind and nine bar of pressure.\n";

/// The model's replies, in order, each in pieces.
const REPLIES: &[&[&str]] = &[
    &[
        "We brew coffee with a ",
        "**French press** [1]:\n\n",
        "1. Grind coarse.\n2. Pour water just off the boil.\n",
        "3. Wait four minutes, then press.\n\n",
        "| step | time |\n|---|---|\n| steep | 4 min |\n\n",
        "```sh\ntimer 4m\n```\n",
    ],
    &["Four ", "minutes, ", "as the note says [1]."],
    &["Hello! ", "How can I ", "help?"],
];

/// An OpenAI stream of `pieces`, a pause between each; with `held`, the rest after the first
/// two only once the gate is open (so the page is seen streaming, however slow the machine).
fn streamed(pieces: &[&str], held: Option<&Gate>) -> Reply {
    let mut r = Reply::new(200)
        .header("Content-Type", "text/event-stream")
        .framing(Framing::Chunked);
    for (i, p) in pieces.iter().enumerate() {
        if i == 2
            && let Some(gate) = held
        {
            r = r.hold(gate);
        }
        r = r.body(&oa_text(p)).pause(150);
    }
    r.body(&oa_end(12, 30))
}

/// The page has finished a call, the chat list included.
const IDLE: &str = "return document.body.dataset.busy === '0'";

/// Run a script's `return` over the last assistant bubble.
const LAST: &str = "const all = document.querySelectorAll('.msg.assistant'); \
                    const b = all[all.length - 1];";

#[test]
fn the_page_streams_continues_shows_sources_and_keeps_chats() {
    let Some(browser) = Browser::start() else {
        return;
    };
    // The first reply waits after its first two pieces until the page has shown them.
    let gate = Gate::new();
    let held = gate.clone();
    let count = Arc::new(AtomicUsize::new(0));
    let n = Arc::clone(&count);
    let server = Server::respond(move |req| {
        let body = req.json();
        let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
        if last.is_some_and(|m| m.to_string().contains("make it fail")) {
            return Reply::json(
                401,
                r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#,
            );
        }
        let i = n.fetch_add(1, Ordering::SeqCst).min(REPLIES.len() - 1);
        streamed(REPLIES[i], (i == 0).then_some(&held))
    });
    let env = Env::for_provider("openai", &server);
    env.write_config(r#"{"aliases": {"mini": ["openai", "gpt-test"]}, "default_alias": "mini"}"#);
    let dir = env.path("zettel");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("01_001_Coffee_c3d4e5f60.md"), COFFEE).unwrap();
    std::fs::write(dir.join("01_002_Espresso_d4e5f6071.md"), ESPRESSO).unwrap();
    env.run(&[
        "kb",
        "add",
        "notes",
        dir.to_str().unwrap(),
        "--description",
        "Coffee notes",
    ])
    .success();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let base = format!("http://127.0.0.1:{}", s.port);

    // Without the token the page asks for it, and says when it is wrong.
    browser.go(&format!("{base}/"));
    browser.wait(
        "the token form",
        "return document.body.dataset.ready === 'login'",
    );
    browser.type_into("#token", "wrong-token-0123456789\u{E007}");
    let refused = browser.wait(
        "the refusal",
        "const e = document.getElementById('error'); return !e.hidden && e.textContent",
    );
    assert!(
        refused
            .as_str()
            .unwrap()
            .contains("missing or wrong bearer token"),
        "{refused}"
    );
    // The token in the fragment is kept in the tab's sessionStorage (no cookie), then taken
    // out of the address.
    browser.go(&format!("{base}/?from=url#token={TOKEN}"));
    browser.wait("the page", "return document.body.dataset.ready === '1'");
    assert_eq!(browser.script("return location.hash", json!([])), "");
    assert_eq!(browser.script("return document.cookie", json!([])), "");
    assert_eq!(
        browser.script("return sessionStorage.getItem('ai_token')", json!([])),
        TOKEN
    );

    // The pickers are filled from /models and /kb.
    browser.click("#model option[value='mini']");
    browser.click("#kb option[value='notes']");
    browser.type_into("#prompt", "How do we brew coffee?");
    browser.click("#send");

    // It streams: plain text growing in the bubble before the reply is done.
    let partial = browser.wait(
        "the reply to start streaming",
        &format!(
            "{LAST} return b && b.classList.contains('streaming') && \
             b.querySelector('.body').textContent.includes('French') ? \
             b.querySelector('.body').textContent : null"
        ),
    );
    let partial = partial.as_str().unwrap().to_owned();
    gate.open();
    assert!(
        !partial.contains("timer 4m"),
        "seen whole at once: {partial}"
    );
    assert!(
        partial.contains("**French press**"),
        "plain text while streaming: {partial}"
    );
    // Then rendered by the server, with its sources under it.
    let html = browser.wait(
        "the first reply",
        &format!("{LAST} return b.classList.contains('done') ? b.innerHTML : null"),
    );
    let html = html.as_str().unwrap();
    assert!(html.contains("<strong>French press</strong>"), "{html}");
    assert!(html.contains("<li>Grind coarse.</li>"), "{html}");
    assert!(
        html.contains("<table>") && html.contains("<pre><code class=\"language-sh\">timer 4m"),
        "{html}"
    );
    let href = browser.wait(
        "the sources",
        &format!(
            "{LAST} const a = b.querySelector('a.source'); return a && a.getAttribute('href')"
        ),
    );
    // A signed link (a plain link carries no token).
    assert!(
        href.as_str()
            .unwrap()
            .starts_with("/kb/notes/note/c3d4e5f60?sig="),
        "{href}"
    );

    // Continue the chat, once the page has finished the call (a prompt sent before is queued:
    // `a_prompt_sent_while_the_page_is_busy_is_queued_and_sent_after`).
    browser.wait("the page idle", IDLE);
    browser.type_into("#prompt", "And how long?\u{E007}");
    browser.wait(
        "the second reply",
        "return document.querySelectorAll('.msg.assistant.done').length === 2",
    );
    let second = browser.script(
        &format!("{LAST} return b.querySelector('.body').textContent"),
        json!([]),
    );
    assert_eq!(second, "Four minutes, as the note says [1].\n");
    let chats = browser.wait(
        "the chat listed",
        "const l = document.querySelectorAll('#chats li'); return l.length === 1 && l[0].textContent",
    );
    assert!(
        chats.as_str().unwrap().contains("How do we brew coffee?"),
        "{chats}"
    );
    // The second turn was sent with the first (one chat), grounded again.
    let asked = server.requests();
    assert_eq!(asked.len(), 2);
    let messages = asked[1].json()["messages"].as_array().unwrap().len();
    assert!(messages >= 4, "{messages} messages");

    // A source link opens the note, rendered (its signature authorises the plain link).
    browser.go(&format!("{base}{}", href.as_str().unwrap()));
    let title = browser.wait(
        "the note",
        "const t = document.getElementById('note-title'); return t && t.textContent",
    );
    assert_eq!(title, "01_001 Coffee");
    let note = browser.script(
        "return document.getElementById('note').innerHTML",
        json!([]),
    );
    assert!(
        note.as_str()
            .unwrap()
            .contains("<strong>French press</strong>"),
        "{note}"
    );
    browser.back();
    browser.wait(
        "the page again",
        "return document.body.dataset.ready === '1'",
    );

    // A new conversation keeps the old one.
    browser.click("#new");
    browser.click("#kb option[value='']");
    browser.type_into("#prompt", "Hello there");
    browser.click("#send");
    browser.wait(
        "the new chat's reply",
        "return document.querySelectorAll('.msg.assistant.done').length === 1",
    );
    let titles = browser.wait(
        "both chats listed",
        "const l = [...document.querySelectorAll('#chats li')]; \
         return l.length === 2 && l.map(x => x.textContent).join('|')",
    );
    let titles = titles.as_str().unwrap();
    assert!(titles.starts_with("Hello there"), "newest first: {titles}");
    assert!(titles.contains("How do we brew coffee?"), "{titles}");

    // An error shows the CLI's message and hint.
    browser.type_into("#prompt", "make it fail\u{E007}");
    let error = browser.wait(
        "the error",
        "const e = document.getElementById('error'); return !e.hidden && e.textContent",
    );
    let error = error.as_str().unwrap();
    browser.wait("the page idle", IDLE);
    assert!(
        error.contains("error: ") && error.contains("Incorrect API key"),
        "{error}"
    );
    assert!(error.contains("hint: "), "{error}");

    // Reopen the first chat: its whole history, rendered, with sources.
    browser.click("#chats li:nth-child(2) button");
    browser.wait(
        "the first chat",
        "return document.querySelectorAll('.msg.assistant').length === 2 && \
         document.querySelectorAll('.msg.assistant a.source').length >= 2",
    );
    let shot = browser.screenshot();
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-page.png");
    std::fs::write(&path, &shot).unwrap();
    if std::env::var("AI_UPDATE_SCREENSHOT").is_ok_and(|v| v == "1") {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("screenshot.png"), &shot).unwrap();
    }

    // Rename it, then delete it.
    browser.click("#rename");
    browser.script(
        "document.getElementById('rename-input').value = ''",
        json!([]),
    );
    browser.type_into("#rename-input", "Coffee at home\u{E007}");
    browser.wait(
        "the new title",
        "return [...document.querySelectorAll('#chats li')].some(l => l.textContent.startsWith('Coffee at home'))",
    );
    browser.click("#delete");
    browser.click("#delete");
    let left = browser.wait(
        "the chat deleted",
        "const l = document.querySelectorAll('#chats li'); return l.length === 1 && l[0].textContent",
    );
    assert!(left.as_str().unwrap().starts_with("Hello there"), "{left}");
    assert_eq!(env.chat_ids().len(), 1);

    // A call that fails on a new chat: the next line continues that chat (S6).
    browser.click("#new");
    browser.type_into("#prompt", "make it fail\u{E007}");
    browser.wait(
        "the error",
        "const e = document.getElementById('error'); return !e.hidden && e.textContent",
    );
    browser.wait("the page idle", IDLE);
    assert_eq!(env.chat_ids().len(), 2);
    browser.type_into("#prompt", "Hello again\u{E007}");
    browser.wait(
        "the reply in the same chat",
        "return document.querySelectorAll('.msg.assistant.done').length === 1",
    );
    browser.wait("the page idle", IDLE);
    assert_eq!(env.chat_ids().len(), 2, "no third chat");
}

#[test]
fn a_prompt_sent_while_the_page_is_busy_is_queued_and_sent_after() {
    // Found by a helper: a prompt sent while the page reloaded the chat list after a reply was
    // ignored without a word (the page was still busy), so it was never sent.
    let Some(browser) = Browser::start() else {
        return;
    };
    let gate = Gate::new();
    let held = gate.clone();
    let count = Arc::new(AtomicUsize::new(0));
    let n = Arc::clone(&count);
    let server = Server::respond(move |_req| {
        let i = n.fetch_add(1, Ordering::SeqCst).min(REPLIES.len() - 1);
        streamed(REPLIES[i], (i == 2).then_some(&held))
    });
    let env = Env::for_provider("openai", &server);
    env.write_config(r#"{"aliases": {"mini": ["openai", "gpt-test"]}, "default_alias": "mini"}"#);
    let s = serve(&env, &["--token", TOKEN], &[]);
    browser.go(&format!("http://127.0.0.1:{}/#token={TOKEN}", s.port));
    browser.wait("the page", "return document.body.dataset.ready === '1'");
    // The chat list's reload after a call is held in the page until the test lets it go.
    browser.script(
        "const f = window.fetch.bind(window); window.heldLists = 0; let go; \
         window.listGate = new Promise((r) => { go = r; }); window.openLists = () => go(); \
         window.fetch = async (u, i) => { \
           if (String(u) === '/chats') { window.heldLists++; await window.listGate; } \
           return f(u, i); };",
        json!([]),
    );
    browser.type_into("#prompt", "How do we brew coffee?\u{E007}");
    browser.wait(
        "the reply done, the chat list reloading",
        "return window.heldLists === 1 && document.body.dataset.busy === '1' && \
         document.querySelectorAll('.msg.assistant.done').length === 1",
    );
    browser.type_into("#prompt", "And how long?\u{E007}");
    browser.wait(
        "the prompt queued",
        "const q = document.querySelector('.msg.user.queued'); \
         return !!q && q.textContent.includes('And how long?') && \
         document.getElementById('prompt').value === ''",
    );
    browser.script("window.openLists()", json!([]));
    browser.wait(
        "the queued prompt answered",
        "return document.querySelectorAll('.msg.assistant.done').length === 2 && \
         document.body.dataset.busy === '0'",
    );
    let second = browser.script(
        &format!("{LAST} return b.querySelector('.body').textContent"),
        json!([]),
    );
    assert_eq!(second, "Four minutes, as the note says [1].\n");
    // Sent in its turn, in the same chat, after the reply before it.
    let order = browser.script(
        "return [...document.querySelectorAll('#messages .msg')].map((m) => \
         m.classList.contains('user') ? 'you' : 'reply').join(',')",
        json!([]),
    );
    assert_eq!(order, "you,reply,you,reply");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(env.chat_ids().len(), 1, "one chat");
    let prompts: Vec<Value> = env
        .only_messages()
        .into_iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(prompts, ["How do we brew coffee?", "And how long?"]);

    // Stop while a prompt waits: the reply stops, and the waiting prompt goes back into the
    // box, unsent.
    browser.type_into("#prompt", "Say hello\u{E007}");
    browser.wait(
        "the third reply streaming",
        &format!(
            "{LAST} return b.classList.contains('streaming') && \
             b.querySelector('.body').textContent.includes('How can')"
        ),
    );
    browser.type_into("#prompt", "Never mind\u{E007}");
    browser.wait(
        "the prompt queued",
        "return !!document.querySelector('.msg.user.queued')",
    );
    browser.click("#stop");
    gate.open();
    let back = browser.wait(
        "the page idle, the prompt back in the box",
        "return document.body.dataset.busy === '0' && \
         !document.querySelector('.msg.user.queued') && \
         document.getElementById('prompt').value",
    );
    assert_eq!(back, "Never mind");
    assert_eq!(
        server.requests().len(),
        3,
        "the stopped prompt was not sent"
    );
}
