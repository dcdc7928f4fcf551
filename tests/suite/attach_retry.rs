//! A turn sent again (`ai chat retry`, `/retry`, the page's Retry) goes with what was attached
//! to it: the kept copy when there is one, else the file read again from its path, and only
//! if it is the very file that was attached (its recorded SHA-256); a changed or missing file
//! stops the retry with an error, never a retry that answers blind.

use serde_json::{Value, json};

use super::attach::{pdf, png};
use crate::support::*;

fn data_url(media_type: &str, bytes: &[u8]) -> String {
    format!("data:{media_type};base64,{}", base64(bytes))
}

/// The OpenAI form of a prompt with cat.png and doc.pdf.
fn with_both(text: &str) -> Value {
    json!([
        {"type": "image_url", "image_url": {"url": data_url("image/png", &png())}},
        {"type": "file", "file": {"filename": "doc.pdf", "file_data": data_url("application/pdf", &pdf())}},
        {"type": "text", "text": text}
    ])
}

fn refused() -> Reply {
    Reply::json(
        400,
        r#"{"error":{"message":"bad request","type":"invalid_request_error"}}"#,
    )
}

fn world(s: &Server) -> Env {
    let env = Env::for_provider("openai", s);
    env.project_file("cat.png", png());
    env.project_file("doc.pdf", pdf());
    env
}

/// A turn that failed (nothing came back: a pending prompt) and one cut short (an interrupted
/// reply): the retry sends the image and the PDF again, and its record keeps them.
#[test]
fn a_retried_turn_sends_its_attachments_again() {
    for first in [refused(), Reply::sse(&[&oa_text("half")]).cut()] {
        let s = Server::start(vec![first, Reply::sse(&[&oa_stream("a cat", 1, 1)])]);
        let env = world(&s);
        let out = env.run(&["-F", "cat.png,doc.pdf", "openai:gpt-test", "what is this?"]);
        assert_ne!(out.code, Some(0), "{}", out.stderr);
        let id = out.chat_id();
        let again = env.run(&["chat", "retry", &id]);
        again.ok();
        assert_eq!(again.stdout, "a cat\n");
        let reqs = s.requests();
        assert_eq!(reqs.len(), 2);
        let body = reqs[1].json();
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 1, "the turn it replaces is not sent: {m:?}");
        assert_eq!(m[0]["content"], with_both("what is this?"));
        // The retried turn's record says what was attached, as the first one did.
        let msgs = env.messages(&id);
        let user = msgs
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .expect("a user record");
        let names: Vec<&str> = user["attachments"]
            .as_array()
            .expect("attachments recorded")
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["cat.png", "doc.pdf"]);
    }
}

/// A kept copy is what the retry sends: the original may have gone.
#[test]
fn a_retry_sends_the_kept_copy_when_the_file_is_gone() {
    let s = Server::start(vec![refused(), Reply::sse(&[&oa_stream("a cat", 1, 1)])]);
    let env = world(&s);
    let out = env.run(&[
        "--keep-attachments",
        "-F",
        "cat.png,doc.pdf",
        "openai:gpt-test",
        "what is this?",
    ]);
    assert_ne!(out.code, Some(0));
    let id = out.chat_id();
    std::fs::remove_file(env.project.join("cat.png")).unwrap();
    std::fs::remove_file(env.project.join("doc.pdf")).unwrap();
    env.run(&["chat", "retry", &id]).ok();
    assert_eq!(
        s.requests()[1].json()["messages"][0]["content"],
        with_both("what is this?")
    );
}

/// Without a kept copy, a file changed since it was attached, or gone, stops the retry before
/// anything is sent; the prompt stays in the chat for a retry once the file is back.
#[test]
fn a_changed_or_missing_file_stops_the_retry() {
    let s = Server::start(vec![refused(), Reply::sse(&[&oa_stream("a cat", 1, 1)])]);
    let env = world(&s);
    let out = env.run(&["-F", "cat.png", "openai:gpt-test", "what is this?"]);
    assert_ne!(out.code, Some(0));
    let id = out.chat_id();

    let mut changed = png();
    changed.extend_from_slice(b"edited");
    env.project_file("cat.png", &changed);
    let out = env.run(&["chat", "retry", &id]).code(2);
    assert!(
        out.error().contains("cat.png") && out.error().contains("is not what was attached"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint: "), "{}", out.stderr);

    std::fs::remove_file(env.project.join("cat.png")).unwrap();
    let out = env.run(&["chat", "retry", &id]).code(2);
    assert!(
        out.error().contains("its attachment cat.png is not in"),
        "{}",
        out.stderr
    );
    assert_eq!(s.requests().len(), 1, "nothing sent by the refused retries");

    // Put back as it was: the retry goes, with the image.
    env.project_file("cat.png", png());
    env.run(&["chat", "retry", &id]).ok();
    let content = s.requests()[1].json()["messages"][0]["content"].clone();
    assert_eq!(
        content[0]["image_url"]["url"],
        data_url("image/png", &png())
    );
}

/// `ai -i`: `/retry` of an answered turn asks it again with the same image (read again and
/// checked), and its record says so; a changed file stops it with an error.
#[test]
fn session_retry_asks_again_with_the_same_image() {
    let env = Env::echo();
    env.project_file("cat.png", png());
    let mut term = Terminal::start(&env, "-i");
    term.expect("echo> ");
    say(&mut term, "/file cat.png", "echo> ");
    say(&mut term, "what is it?", "echo> ");
    say(&mut term, "/retry", "echo> ");
    let mut changed = png();
    changed.extend_from_slice(b"edited");
    env.project_file("cat.png", &changed);
    let refused = say(&mut term, "/retry", "echo> ");
    assert!(refused.contains("is not what was attached"), "{refused}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let users: Vec<Value> = env
        .only_messages()
        .into_iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 2, "{users:#?}");
    for u in &users {
        assert_eq!(u["content"], "what is it?");
        assert_eq!(u["attachments"][0]["name"], "cat.png", "{u}");
    }
}

/// `/file` in `ai -i` is recorded with the message as `-F` is: a page by its name, final URL,
/// size and hash; an image by its name, type, size and hash, with a kept copy under
/// `--keep-attachments`.
#[test]
fn session_file_pages_and_images_are_recorded_with_the_message() {
    let site = Server::respond(|_| {
        Reply::new(200)
            .header("Content-Type", "text/html; charset=utf-8")
            .body("<html><body><p>Brew at 80 degrees.</p></body></html>")
    });
    let env = Env::echo();
    env.project_file("cat.png", png());
    let page = format!("{}/tea", site.url());
    let mut term = Terminal::start(&env, "-i --keep-attachments");
    term.expect("echo> ");
    let added = say(&mut term, &format!("/file {page} cat.png"), "echo> ");
    assert!(added.contains("goes with the next message"), "{added}");
    say(&mut term, "how hot?", "echo> ");
    say(&mut term, "and then?", "echo> ");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let users: Vec<Value> = env
        .only_messages()
        .into_iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 2, "{users:#?}");
    let a = users[0]["attachments"].as_array().expect("recorded");
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(a[0]["name"], "cat.png");
    assert_eq!(a[0]["type"], "image/png");
    let kept = a[0]["kept"].as_str().expect("a kept copy");
    let id = env.chat_ids().pop().expect("a chat");
    let copy = env
        .home
        .join("chats")
        .join(format!("{id}.files"))
        .join(kept);
    assert_eq!(std::fs::read(copy).expect("the kept copy"), png());
    assert_eq!(a[1]["name"], page.as_str());
    assert_eq!(a[1]["url"], page.as_str());
    assert_eq!(a[1]["type"], "text/html");
    assert!(a[1]["sha256"].as_str().is_some_and(|h| h.len() == 64));
    // Sent once: the next message has none.
    assert!(users[1].get("attachments").is_none(), "{}", users[1]);
}
