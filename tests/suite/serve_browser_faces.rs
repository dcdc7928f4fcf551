//! The page of `ai serve` for everyday use, in headless Chromium (see `serve_browser.rs` for
//! how it is driven): `[n]` citations that open their note, copy buttons, Stop while a reply
//! streams (saved as interrupted), Retry for a failed prompt (no duplicate), the note page as
//! Obsidian shows it (wikilinks, embeds, line breaks, the notes that link to it), and a phone's
//! width (the chat list folds away behind a button).
//!
//! With `AI_UPDATE_SCREENSHOT=1` the screenshots replace `docs/page-desktop.png`,
//! `docs/page-phone.png`, `docs/page-phone-chats.png` and `docs/page-note.png`; they are always
//! saved in the test's temp target folder.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::serve::{TOKEN, serve};
use crate::support::webdriver::Browser;
use crate::support::*;

const COFFEE: &str = "# Coffee\n\nWe brew coffee with a **French press**.\nCoarse grind, four \
                      minutes.\n\nFor a stronger cup see [[Espresso]], or \
                      [[01_003_Tea_e5f607182|the tea note]].\n\n![[press.png]]\n";
const ESPRESSO: &str = "# Espresso\n\nA fine grind and nine bar of pressure.\n";
const TEA: &str = "# Tea\n\nGreen tea steeps two minutes. Back to [[01_001_Coffee_c3d4e5f60]].\n";

/// An OpenAI stream of `pieces`, `pause` ms between each.
fn streamed(pieces: &[&str], pause: u64) -> Reply {
    let mut r = Reply::new(200)
        .header("Content-Type", "text/event-stream")
        .framing(Framing::Chunked);
    for p in pieces {
        r = r.body(&oa_text(p)).pause(pause);
    }
    r.body(&oa_end(12, 30))
}

const IDLE: &str = "return document.body.dataset.busy === '0'";
const LAST: &str = "const all = document.querySelectorAll('.msg.assistant'); \
                    const b = all[all.length - 1];";

fn save(name: &str, shot: &[u8]) {
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, shot).unwrap();
    if std::env::var("AI_UPDATE_SCREENSHOT").is_ok_and(|v| v == "1") {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join(name), shot).unwrap();
    }
}

fn user_prompts(env: &Env) -> Vec<String> {
    env.chat_ids()
        .iter()
        .flat_map(|id| env.messages(id))
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_page_cites_copies_stops_retries_renders_notes_and_fits_a_phone() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let failed_once = Arc::new(AtomicBool::new(false));
    let failed = Arc::clone(&failed_once);
    let server = Server::respond(move |req| {
        let body = req.json();
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(Value::to_string)
            .unwrap_or_default();
        if last.contains("flaky") && !failed.swap(true, Ordering::SeqCst) {
            // A status `ai` does not retry by itself.
            return Reply::json(
                400,
                r#"{"error":{"message":"The server had a hiccup","type":"invalid_request_error"}}"#,
            );
        }
        if last.contains("slow") {
            // Stop comes while it streams, however loaded the machine: the rest waits at a
            // gate no one opens.
            return Reply::new(200)
                .header("Content-Type", "text/event-stream")
                .framing(Framing::Chunked)
                .body(&oa_text("The first part. "))
                .hold(&Gate::new())
                .body(&oa_text("more "))
                .body(&oa_end(12, 30));
        }
        if last.contains("flaky") {
            return streamed(&["Recovered ", "answer."], 50);
        }
        streamed(
            &[
                "Use a **French press** [1], ",
                "not a drip machine [7].\n\n",
                "```sh\ntimer 4m\n```\n",
            ],
            100,
        )
    });
    let env = Env::for_provider("openai", &server);
    env.write_config(r#"{"aliases": {"mini": ["openai", "gpt-test"]}, "default_alias": "mini"}"#);
    let dir = env.path("zettel");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("01_001_Coffee_c3d4e5f60.md"), COFFEE).unwrap();
    std::fs::write(dir.join("01_002_Espresso_d4e5f6071.md"), ESPRESSO).unwrap();
    std::fs::write(dir.join("01_003_Tea_e5f607182.md"), TEA).unwrap();
    env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
        .success();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let base = format!("http://127.0.0.1:{}", s.port);

    browser.resize(1280, 900);
    browser.go(&format!("{base}/#token={TOKEN}"));
    browser.wait("the page", "return document.body.dataset.ready === '1'");
    // On a desktop the chat list is shown and the menu button is not.
    assert_eq!(
        browser.script(
            "return getComputedStyle(document.getElementById('menu')).display",
            json!([])
        ),
        "none"
    );

    // A grounded answer: `[1]` links to its source, `[7]` (no such source) stays text.
    browser.click("#kb option[value='notes']");
    browser.type_into("#prompt", "How do we brew coffee?\u{E007}");
    browser.wait(
        "the answer",
        &format!("{LAST} return b && b.classList.contains('done') && b.querySelector('.sources')"),
    );
    let cites = browser.script(
        &format!(
            "{LAST} return [...b.querySelectorAll('.body a.cite')].map(a => [a.textContent, a.getAttribute('href')])"
        ),
        json!([]),
    );
    let cites = cites.as_array().unwrap();
    assert_eq!(cites.len(), 1, "{cites:?}");
    assert_eq!(cites[0][0], "[1]");
    let cite_href = cites[0][1].as_str().unwrap().to_owned();
    assert!(
        cite_href.starts_with("/kb/notes/note/c3d4e5f60?sig="),
        "{cite_href}"
    );
    let text = browser.script(
        &format!("{LAST} return b.querySelector('.body').textContent"),
        json!([]),
    );
    assert!(text.as_str().unwrap().contains("[7]"), "{text}");

    // Copy buttons: one for the reply, one on its code block.
    let copies = browser.script(
        &format!(
            "{LAST} return [b.querySelectorAll('.msg-tools button.copy').length, \
             b.querySelectorAll('pre > button.copy').length]"
        ),
        json!([]),
    );
    assert_eq!(copies, json!([1, 1]));
    browser.click(".msg.assistant pre > button.copy");
    browser.wait(
        "the code copied",
        "return document.querySelector('.msg.assistant pre > button.copy').textContent === 'Copied'",
    );
    browser.click(".msg.assistant .msg-tools button.copy");
    browser.wait(
        "the reply copied",
        "return document.querySelector('.msg.assistant .msg-tools button.copy').textContent === 'Copied'",
    );

    // A failed prompt: Retry sends it again in its place.
    browser.type_into("#prompt", "a flaky question\u{E007}");
    browser.wait(
        "the failure",
        &format!("{LAST} return b.classList.contains('failed') && b.querySelector('button.retry')"),
    );
    browser.wait("the page idle", IDLE);
    assert!(
        browser
            .script(
                "return document.getElementById('error').textContent",
                json!([])
            )
            .as_str()
            .unwrap()
            .contains("hiccup")
    );
    browser.click(".msg.assistant.failed button.retry");
    browser.wait(
        "the retried answer",
        &format!(
            "{LAST} return b.classList.contains('done') && \
             b.querySelector('.body').textContent.includes('Recovered answer')"
        ),
    );
    browser.wait("the page idle", IDLE);
    assert_eq!(
        browser.script(
            "return document.querySelectorAll('.msg.assistant.failed').length",
            json!([])
        ),
        0
    );
    let asked = user_prompts(&env);
    assert_eq!(
        asked.iter().filter(|p| p.contains("flaky")).count(),
        1,
        "no duplicate: {asked:?}"
    );
    assert_eq!(env.chat_ids().len(), 1, "one chat");

    // Stop while it streams: what arrived stays, saved as interrupted.
    browser.type_into("#prompt", "slow please\u{E007}");
    browser.wait(
        "the reply to stream",
        &format!(
            "{LAST} return b.classList.contains('streaming') && \
             b.querySelector('.body').textContent.includes('first part') && \
             !document.getElementById('stop').hidden"
        ),
    );
    browser.click("#stop");
    browser.wait(
        "the reply stopped",
        &format!("{LAST} return b.classList.contains('interrupted')"),
    );
    browser.wait("the page idle", IDLE);
    let id = env.chat_ids().pop().unwrap();
    wait_for("the stopped turn saved", || {
        env.messages(&id)
            .last()
            .is_some_and(|m| m["role"] == "assistant" && m["interrupted"] == true)
    });
    let last = env.messages(&id).pop().unwrap();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .starts_with("The first part."),
        "{last}"
    );
    assert!(
        !browser
            .script("return document.getElementById('send').hidden", json!([]))
            .as_bool()
            .unwrap()
    );
    // Reopened, the chat shows the retried prompt once (its failed try is not shown again).
    browser.click("#chats li button");
    browser.wait(
        "the chat reopened",
        "return document.querySelectorAll('.msg.assistant').length === 3",
    );
    assert_eq!(
        browser.script(
            "return [...document.querySelectorAll('.msg.user')].filter(u => u.textContent.includes('flaky')).length",
            json!([])
        ),
        1
    );
    assert_eq!(
        browser.script(
            "return document.querySelectorAll('.msg.assistant.interrupted button.retry').length",
            json!([])
        ),
        1
    );
    save("page-desktop.png", &browser.screenshot());

    // The cited note, as Obsidian shows it.
    browser.go(&format!("{base}{cite_href}"));
    browser.wait(
        "the note",
        "const t = document.getElementById('note-title'); return t && t.textContent",
    );
    let note = browser.script(
        "return document.getElementById('note').innerHTML",
        json!([]),
    );
    let note = note.as_str().unwrap();
    assert!(
        note.contains("French press</strong>.<br>"),
        "a line break kept: {note}"
    );
    assert!(
        note.contains("<a href=\"/kb/notes/note/Espresso?sig="),
        "{note}"
    );
    assert!(note.contains(">the tea note</a>"), "{note}");
    assert!(note.contains("embedded: press.png"), "{note}");
    assert!(!note.contains("<img"), "{note}");
    // Tea links here.
    let backlinks = browser.script(
        "const b = document.getElementById('backlinks'); return b && b.textContent",
        json!([]),
    );
    assert!(
        backlinks.as_str().unwrap_or("").contains("01_003 Tea"),
        "{backlinks}"
    );
    save("page-note.png", &browser.screenshot());
    // A wikilink opens the note it names (its signature is the authority).
    browser.click("#note a[href^='/kb/notes/note/Espresso']");
    let title = browser.wait(
        "the linked note",
        "const t = document.getElementById('note-title'); \
         return t && t.textContent.includes('Espresso') && t.textContent",
    );
    assert_eq!(title, "01_002 Espresso");
    // Coffee links to Espresso.
    let backlinks = browser.script(
        "const b = document.getElementById('backlinks'); return b && b.textContent",
        json!([]),
    );
    assert!(
        backlinks.as_str().unwrap_or("").contains("01_001 Coffee"),
        "{backlinks}"
    );

    // A phone's width: the chat list folds away behind the menu button; nothing overflows.
    browser.resize(390, 844);
    browser.go(&format!("{base}/"));
    browser.wait("the page", "return document.body.dataset.ready === '1'");
    // Off screen: clicked as a script would (a person opens the list first).
    browser.script(
        "document.querySelector('#chats li button').click()",
        json!([]),
    );
    browser.wait(
        "the chat",
        "return document.querySelectorAll('.msg.assistant').length >= 3",
    );
    let layout = browser.script(
        "const s = document.getElementById('side').getBoundingClientRect(); \
         return [s.right, getComputedStyle(document.getElementById('menu')).display, \
         document.documentElement.scrollWidth <= window.innerWidth]",
        json!([]),
    );
    assert!(layout[0].as_f64().unwrap() <= 0.0, "{layout}");
    assert_ne!(layout[1], "none", "the menu button shows: {layout}");
    assert_eq!(layout[2], true, "no sideways scrolling: {layout}");
    browser.script(
        "document.getElementById('messages').scrollTop = 0",
        json!([]),
    );
    save("page-phone.png", &browser.screenshot());
    browser.click("#menu");
    browser.wait(
        "the chat list",
        "return document.getElementById('side').getBoundingClientRect().left >= 0",
    );
    save("page-phone-chats.png", &browser.screenshot());
    // A tap beside the list (the scrim's middle is under the list).
    browser.script("document.getElementById('scrim').click()", json!([]));
    browser.wait(
        "the chat list folded",
        "return document.getElementById('side').getBoundingClientRect().right <= 0",
    );
}

/// `POST /call` with `retry`: the chat's failed prompt resent in its place, once; a retry
/// without its chat, with a prompt, or with a bad ID is a 400.
#[test]
fn a_retry_call_resends_the_failed_prompt_once_and_bad_retries_are_400() {
    use crate::serve::{http, json};
    let env = Env::echo();
    env.fake("gemini", FLAKY_GEMINI);
    let s = serve(&env, &["--token", TOKEN], &[]);
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"alias":"gemini","prompt":"try me"}"#,
    );
    assert_eq!(status, 502, "{body}");
    let chat = json(&body)["error"]["chat"].as_str().unwrap().to_owned();
    for bad in [
        r#"{"retry":true}"#.to_owned(),
        format!(r#"{{"retry":true,"chat":"{chat}","prompt":"again"}}"#),
        r#"{"retry":true,"chat":"-q"}"#.to_owned(),
        format!(r#"{{"retry":true,"chat":"{chat}","kb":"notes"}}"#),
        r#"{"alias":"gemini"}"#.to_owned(),
    ] {
        let (status, body) = http(s.port, "POST", "/call", Some(TOKEN), bad.as_bytes());
        assert_eq!(status, 400, "{bad}: {body}");
    }
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        format!(r#"{{"retry":true,"chat":"{chat}"}}"#).as_bytes(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["reply"], "recovered answer\n");
    let asked: Vec<Value> = env
        .messages(&chat)
        .into_iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["content"], "try me");
    // Nothing left to retry: the CLI's own answer.
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        format!(r#"{{"retry":true,"chat":"{chat}"}}"#).as_bytes(),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("nothing to retry"), "{body}");
}

/// `ai kb show` finds a note by the name a wikilink gives it, and `--json` lists the notes
/// that link to it.
#[test]
fn kb_show_finds_notes_by_wiki_names_and_lists_what_links_to_them() {
    let env = Env::new();
    let dir = env.path("zettel");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("01_001_Coffee_c3d4e5f60.md"), COFFEE).unwrap();
    std::fs::write(dir.join("01_002_Espresso_d4e5f6071.md"), ESPRESSO).unwrap();
    std::fs::write(dir.join("01_003_Tea_e5f607182.md"), TEA).unwrap();
    env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
        .success();
    let by_title = env
        .run(&["kb", "show", "notes", "espresso", "--json"])
        .success()
        .json();
    assert_eq!(by_title["id"], "d4e5f6071");
    let linked: Vec<&str> = by_title["linked_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(linked, ["c3d4e5f60"]);
    let by_file = env
        .run(&["kb", "show", "notes", "01_003_Tea_e5f607182", "--json"])
        .success()
        .json();
    assert_eq!(by_file["id"], "e5f607182");
    env.run(&["kb", "show", "notes", "Nothing such"]).code(4);
}

/// The page's chat search: words in the box list the chats that hold them all (through
/// `ai chat search --json`), each with the line that matched; a click opens the chat; an
/// empty box brings the list back.
#[test]
fn the_page_searches_chats_by_their_words() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let env = Env::echo();
    env.run(&["echo", "how do we brew coffee at home"])
        .success();
    env.run(&["echo", "green tea steeps two minutes"]).success();
    env.run(&["echo", "a <b>bold</b> question about coffee beans"])
        .success();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let base = format!("http://127.0.0.1:{}", s.port);
    browser.go(&format!("{base}/#token={TOKEN}"));
    browser.wait("the page", "return document.body.dataset.ready === '1'");
    browser.wait(
        "the chats",
        "return document.querySelectorAll('#chats li').length === 3",
    );
    browser.type_into("#search", "coffee");
    let found = browser.wait(
        "the hits",
        "return document.body.dataset.list === 'search' && \
         [...document.querySelectorAll('#chats li.hit')].map(l => l.textContent)",
    );
    let found = found.as_array().unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().all(|h| h.as_str().unwrap().contains("coffee")),
        "{found:?}"
    );
    // Markup in a chat stays text.
    assert_eq!(
        browser.script(
            "return document.querySelectorAll('#chats b').length",
            json!([])
        ),
        0
    );
    browser.type_into("#search", " tea");
    browser.wait(
        "no hit",
        "return document.querySelector('#chats li.empty') !== null",
    );
    browser.script(
        "const s = document.getElementById('search'); s.value = 'green'; \
         s.dispatchEvent(new Event('input'))",
        json!([]),
    );
    browser.wait(
        "one hit",
        "return document.querySelectorAll('#chats li.hit').length === 1",
    );
    browser.click("#chats li.hit button");
    browser.wait(
        "the chat",
        "return document.querySelector('.msg.user') && \
         document.querySelector('.msg.user').textContent.includes('green tea')",
    );
    browser.script(
        "const s = document.getElementById('search'); s.value = ''; \
         s.dispatchEvent(new Event('input'))",
        json!([]),
    );
    browser.wait(
        "the list again",
        "return document.body.dataset.list === 'chats' && \
         document.querySelectorAll('#chats li').length === 3",
    );
}
