//! `-F` with an image or a PDF: sent whole, in each protocol's own form, to the HTTP providers
//! that take it (the scripted server sees the request body); refused before anything is sent
//! where a backend or model cannot take it, or the file is larger than the provider allows
//! (the server sees no request).

use serde_json::{Value, json};

use crate::support::*;

/// A tiny PNG: the signature and a few bytes (ai tells images by their first bytes).
pub fn png() -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
    b.extend_from_slice(b"\0\0\0\rIHDR-not-a-real-image");
    b
}

pub fn pdf() -> Vec<u8> {
    b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n".to_vec()
}

fn world(provider: &str, s: &Server) -> Env {
    let env = Env::for_provider(provider, s);
    env.project_file("cat.png", png());
    env.project_file("doc.pdf", pdf());
    env
}

fn user_content(body: &Value) -> Value {
    let m = body["messages"].as_array().expect("messages");
    m.iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message")["content"]
        .clone()
}

#[test]
fn openai_gets_an_image_url_and_a_file_part() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("a cat", 1, 1)])]);
    let env = world("openai", &s);
    let out = env.run(&["-F", "cat.png,doc.pdf", "openai:gpt-test", "what is this?"]);
    out.ok();
    assert_eq!(out.stdout, "a cat\n");
    assert_eq!(
        user_content(&s.only().json()),
        json!([
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", base64(&png()))}},
            {"type": "file", "file": {"filename": "doc.pdf", "file_data": format!("data:application/pdf;base64,{}", base64(&pdf()))}},
            {"type": "text", "text": "what is this?"}
        ])
    );
}

#[test]
fn openai_compatible_servers_get_the_openai_form() {
    // OpenRouter (a vendor/model name), Azure (a deployment), GLM (a vision model).
    for (provider, route) in [
        ("openrouter", "openrouter:vendor/vision-model"),
        ("azure", "azure:my-dep"),
        ("glm", "glm:glm-4v-plus"),
    ] {
        let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
        let env = world(provider, &s);
        env.run(&["-F", "cat.png", route, "describe"]).ok();
        let c = user_content(&s.only().json());
        assert_eq!(c[0]["type"], "image_url", "{provider}: {c}");
        assert_eq!(
            c[0]["image_url"]["url"],
            format!("data:image/png;base64,{}", base64(&png())),
            "{provider}"
        );
        assert_eq!(
            c[1],
            json!({"type": "text", "text": "describe"}),
            "{provider}"
        );
    }
}

#[test]
fn anthropic_gets_image_and_document_blocks() {
    let s = Server::start(vec![Reply::sse(&[
        &an_start(1),
        &an_text("ok"),
        &an_end(1),
    ])]);
    let env = world("anthropic", &s);
    env.run(&[
        "-F",
        "cat.png",
        "-F",
        "doc.pdf",
        "anthropic:claude-test",
        "compare",
    ])
    .ok();
    assert_eq!(
        user_content(&s.only().json()),
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64(&png())}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": base64(&pdf())}},
            {"type": "text", "text": "compare"}
        ])
    );
}

#[test]
fn gemini_gets_inline_data() {
    let s = Server::start(vec![Reply::sse(&[&gm_chunk("ok", Some((1, 1)))])]);
    let env = world("gemini-api", &s);
    env.run(&["-F", "cat.png,doc.pdf", "gemini-api:gm-test", "what?"])
        .ok();
    let body = s.only().json();
    assert_eq!(
        body["contents"][0]["parts"],
        json!([
            {"inline_data": {"mime_type": "image/png", "data": base64(&png())}},
            {"inline_data": {"mime_type": "application/pdf", "data": base64(&pdf())}},
            {"text": "what?"}
        ])
    );
}

#[test]
fn ollama_gets_images() {
    let s = Server::start(vec![Reply::ndjson(&[&ol_text("ok"), &ol_done(1, 1)])]);
    let env = world("ollama-api", &s);
    env.run(&["-F", "cat.png", "ollama-api:llava", "what?"])
        .ok();
    let body = s.only().json();
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last,
        json!({"role": "user", "content": "what?", "images": [base64(&png())]})
    );
}

#[test]
fn bedrock_gets_image_and_document_blocks() {
    let s = Server::start(vec![Reply::eventstream(&br_stream("ok", 1, 1))]);
    let env = Env::for_provider("bedrock", &s);
    env.project_file("cat.png", png());
    env.project_file("my report (v2).pdf", pdf());
    env.run(&[
        "-F",
        "cat.png",
        "-F",
        "my report (v2).pdf",
        "bedrock:anthropic.claude-test",
        "sum up",
    ])
    .ok();
    assert_eq!(
        s.only().json()["messages"][0]["content"],
        json!([
            {"image": {"format": "png", "source": {"bytes": base64(&png())}}},
            {"document": {"format": "pdf", "name": "my report (v2)", "source": {"bytes": base64(&pdf())}}},
            {"text": "sum up"}
        ])
    );
}

#[test]
fn told_by_magic_bytes_not_by_name() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let env = Env::for_provider("openai", &s);
    // A JPEG without an extension, a GIF named .bin, a WebP named .png.
    env.project_file("photo", [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, b'J', b'F']);
    env.project_file("anim.bin", b"GIF89a\x01\0\x01\0\0\0\0;");
    env.project_file("pic.png", b"RIFF\x0c\0\0\0WEBPVP8 \0\0\0\0");
    env.run(&["-F", "photo,anim.bin,pic.png", "openai:gpt-test", "q"])
        .ok();
    let c = user_content(&s.only().json());
    let urls: Vec<String> = (0..3)
        .map(|i| c[i]["image_url"]["url"].as_str().unwrap()[..22].to_owned())
        .collect();
    assert_eq!(
        urls,
        [
            "data:image/jpeg;base64",
            "data:image/gif;base64,",
            "data:image/webp;base64"
        ]
    );
}

/// The call fails with exit 2, an error and a hint, and nothing reached the server.
#[track_caller]
fn refused(s: &Server, out: Out) -> Out {
    let out = out.code(2);
    assert!(out.stderr.contains("error: "), "{}", out.stderr);
    assert!(out.stderr.contains("hint: "), "{}", out.stderr);
    assert!(
        s.requests().is_empty(),
        "a request was sent: {:?}",
        s.requests()
    );
    out
}

#[test]
fn a_backend_that_cannot_take_a_pdf_is_refused_before_sending() {
    let s = Server::start(vec![]);
    let env = world("ollama-api", &s);
    let out = refused(
        &s,
        env.run(&["-F", "doc.pdf", "ollama-api:llava", "sum up"]),
    );
    assert!(
        out.stderr
            .contains("cannot attach doc.pdf (PDF): ollama-api:llava does not take a PDF"),
        "{}",
        out.stderr
    );
    // The hint names who can.
    assert!(
        out.stderr.contains("claude, gemini, qwen") && out.stderr.contains("anthropic"),
        "{}",
        out.stderr
    );
    // Nothing was saved either.
    assert!(env.chat_ids().is_empty());
}

#[test]
fn a_text_only_model_is_refused() {
    let s = Server::start(vec![]);
    let env = world("glm", &s);
    let out = refused(&s, env.run(&["-F", "cat.png", "glm:glm-4-plus", "what?"]));
    assert!(out.stderr.contains("takes text only"), "{}", out.stderr);
}

#[test]
fn gif_to_gemini_is_refused() {
    let s = Server::start(vec![]);
    let env = Env::for_provider("gemini-api", &s);
    env.project_file("a.gif", b"GIF89a\x01\0\x01\0\0\0\0;");
    let out = refused(&s, env.run(&["-F", "a.gif", "gemini-api:gm-test", "what?"]));
    assert!(out.stderr.contains("GIF image"), "{}", out.stderr);
}

#[test]
fn an_image_over_the_providers_limit_is_refused_with_the_limit() {
    let s = Server::start(vec![]);
    let env = Env::for_provider("anthropic", &s);
    let mut big = png();
    big.resize(5 * 1024 * 1024 + 1, 0);
    env.project_file("big.png", &big);
    let out = refused(
        &s,
        env.run(&["-F", "big.png", "anthropic:claude-test", "q"]),
    );
    assert!(
        out.stderr.contains("at most 5.0 MiB") && out.stderr.contains("big.png"),
        "{}",
        out.stderr
    );
    // Bedrock documents: 4.5 MiB.
    let s = Server::start(vec![]);
    let env = Env::for_provider("bedrock", &s);
    let mut doc = pdf();
    doc.resize(4 * 1024 * 1024 + 600 * 1024, b' ');
    env.project_file("long.pdf", &doc);
    let out = refused(
        &s,
        env.run(&["-F", "long.pdf", "bedrock:anthropic.claude-test", "q"]),
    );
    assert!(out.stderr.contains("at most 4.5 MiB"), "{}", out.stderr);
}

#[test]
fn a_file_larger_than_ai_reads_is_refused() {
    let s = Server::start(vec![]);
    let env = Env::for_provider("openai", &s);
    let mut huge = pdf();
    huge.resize(32 * 1024 * 1024 + 1, b' ');
    env.project_file("huge.pdf", &huge);
    let out = refused(&s, env.run(&["-F", "huge.pdf", "openai:gpt-test", "q"]));
    assert!(
        out.stderr.contains("larger than 32.0 MiB"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_image_alone_asks_for_a_prompt() {
    let env = Env::echo();
    env.project_file("cat.png", png());
    let out = env.run(&["-F", "cat.png", "echo"]).code(2);
    assert!(out.stderr.contains("no prompt given"), "{}", out.stderr);
    assert!(
        out.stderr.contains("-F cat.png \"what is in this?\""),
        "{}",
        out.stderr
    );
}

#[test]
fn images_in_a_folder_are_skipped_with_a_notice() {
    let env = Env::echo();
    env.project_file("docs/a.md", "A");
    env.project_file("docs/logo.png", png());
    let out = env.run(&["-F", "docs", "echo", "q"]).success();
    assert!(
        out.stderr
            .contains("skipped docs/logo.png: PNG image (name it with -F to attach it)"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("[attached"), "{}", out.stdout);
}

#[test]
fn a_custom_cli_backend_cannot_take_an_image() {
    let env = Env::new();
    env.write_config(
        r#"{"backends": {"mybot": {"program": "claude", "args": ["--print"]}}, "aliases": {"bot": ["mybot", "m"]}}"#,
    );
    env.project_file("cat.png", png());
    let out = env.run(&["-F", "cat.png", "bot", "what?"]).code(2);
    assert!(out.stderr.contains("is given text only"), "{}", out.stderr);
    assert!(env.calls().is_empty(), "{:?}", env.calls());
}

// ---- agent CLIs: given the file by path, the way each reads one ----

#[test]
fn claude_is_told_the_path_to_read() {
    let env = Env::new();
    env.project_file("cat.png", png());
    env.project_file("doc.pdf", pdf());
    env.run(&["-F", "cat.png,doc.pdf", "sonnet", "what?"])
        .success();
    assert_eq!(
        env.stdin_text("claude"),
        format!(
            "[attached: ./cat.png (image/png, {} B); read it from the working directory]\n\
             [attached: ./doc.pdf (application/pdf, {} B); read it from the working directory]\n\nwhat?",
            png().len(),
            pdf().len()
        )
    );
    // The bytes are not in its arguments.
    assert!(!env.argv("claude").iter().any(|a| a.contains("cat.png")));
}

#[test]
fn gemini_and_qwen_get_at_paths() {
    for (alias, program) in [("gemini", "gemini"), ("qwen", "qwen")] {
        let env = Env::new();
        env.project_file("my photo.png", png());
        env.run(&["-F", "my photo.png", alias, "what?"]).success();
        let stdin = env.stdin_text(program);
        assert!(
            stdin.starts_with(&format!(
                "[attached: my photo.png, image/png, {} B] @./my\\ photo.png\n\nwhat?",
                png().len()
            )),
            "{program}: {stdin}"
        );
    }
}

#[test]
fn codex_gets_image_options() {
    let env = Env::new();
    env.project_file("shots/a.png", png());
    env.project_file("b.gif", b"GIF89a\x01\0\x01\0\0\0\0;");
    env.run(&["-F", "shots/a.png,b.gif", "codex", "diff them"])
        .success();
    let argv = env.argv("codex");
    let at = |a: &str| {
        argv.iter()
            .position(|x| x == a)
            .unwrap_or_else(|| panic!("{a} in {argv:?}"))
    };
    assert!(at("--image=./shots/a.png") < at("-"), "{argv:?}");
    assert!(at("--image=./b.gif") < at("-"), "{argv:?}");
    assert_eq!(argv.last().map(String::as_str), Some("-"));
    let stdin = env.stdin_text("codex");
    assert!(
        stdin.starts_with("[attached: shots/a.png, image/png,"),
        "{stdin}"
    );
    assert!(stdin.ends_with("\n\ndiff them"), "{stdin}");
}

#[test]
fn codex_cannot_take_a_pdf() {
    let env = Env::new();
    env.project_file("doc.pdf", pdf());
    let out = env.run(&["-F", "doc.pdf", "codex", "sum up"]).code(2);
    assert!(
        out.stderr
            .contains("error: cannot attach doc.pdf (PDF): codex"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("hint: PDFs can be given to the CLIs claude, gemini, qwen"),
        "{}",
        out.stderr
    );
    assert!(env.calls().is_empty(), "{:?}", env.calls());
    assert!(env.chat_ids().is_empty());
}

#[test]
fn ollama_run_gets_a_dot_path_and_no_gif() {
    let env = Env::new();
    env.project_file("cat.png", png());
    env.project_file("a.gif", b"GIF89a\x01\0\x01\0\0\0\0;");
    env.run(&["-F", "cat.png", "ollama:llava", "what?"])
        .success();
    let stdin = env.stdin_text("ollama");
    assert!(stdin.contains("] ./cat.png\n\nwhat?"), "{stdin}");
    let out = env.run(&["-F", "a.gif", "ollama:llava", "what?"]).code(2);
    assert!(out.stderr.contains("GIF image"), "{}", out.stderr);
}

// ---- the chat records what was attached; later turns say so ----

fn sha256(bytes: &[u8]) -> String {
    use ring::digest;
    digest::digest(&digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn the_chat_records_attachments_and_later_turns_say_what_was_attached() {
    let s = Server::start(vec![
        Reply::sse(&[&oa_stream("a cat", 1, 1)]),
        Reply::sse(&[&oa_stream("grey", 1, 1)]),
    ]);
    let env = world("openai", &s);
    let out = env.run(&["-F", "cat.png", "openai:gpt-test", "what is it?"]);
    out.ok();
    let id = out.chat_id();
    let m = env.messages(&id);
    assert_eq!(
        m[0]["attachments"],
        json!([{"name": "cat.png", "type": "image/png", "size": png().len(), "sha256": sha256(&png())}])
    );
    // The bytes are not in the chat file, nor anywhere under the home folder.
    let text = String::from_utf8(env.bytes(&id)).unwrap();
    assert!(!text.contains(&base64(&png())), "{text}");
    assert!(!env.home.join("chats").join(format!("{id}.files")).exists());
    // The next turn says what was attached, and does not send it again.
    env.run(&["chat", &id, "what colour?"]).ok();
    let body = &s.requests()[1].json();
    assert_eq!(
        body["messages"][0],
        json!({"role": "user", "content": format!("[attached earlier: cat.png, image/png, {} B]\n\nwhat is it?", png().len())})
    );
    assert!(!body.to_string().contains(&base64(&png())));
    // chat show lists it.
    let shown = env.run(&["chat", "show", &id]).success();
    assert!(
        shown.stdout.contains(&format!(
            "attached: cat.png (image/png, {} B, sha256 {})",
            png().len(),
            &sha256(&png())[..12]
        )),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("kept as"), "{}", shown.stdout);
}

#[test]
fn a_cli_later_turn_gets_the_note_in_its_transcript() {
    let env = Env::new();
    env.project_file("doc.pdf", pdf());
    let out = env.run(&["-F", "doc.pdf", "sonnet", "sum up"]).success();
    let id = out.chat_id();
    env.run(&["chat", &id, "and the title?"]).success();
    let stdin = env.stdin_text("claude");
    assert!(
        stdin.contains(&format!(
            "[attached earlier: doc.pdf, application/pdf, {} B]",
            pdf().len()
        )),
        "{stdin}"
    );
    assert!(
        !stdin.contains("read it from the working directory"),
        "{stdin}"
    );
}

#[test]
fn a_kept_copy_is_in_the_chat_folder_sent_again_and_deleted_with_the_chat() {
    let s = Server::start(vec![
        Reply::sse(&[&an_start(1), &an_text("a cat"), &an_end(1)]),
        Reply::sse(&[&an_start(1), &an_text("grey"), &an_end(1)]),
    ]);
    let env = world("anthropic", &s);
    let out = env.run(&[
        "--keep-attachments",
        "-F",
        "cat.png",
        "anthropic:claude-test",
        "what is it?",
    ]);
    out.ok();
    let id = out.chat_id();
    let kept = format!("{}-cat.png", &sha256(&png())[..12]);
    let m = env.messages(&id);
    assert_eq!(m[0]["attachments"][0]["kept"], kept.as_str());
    let dir = env.home.join("chats").join(format!("{id}.files"));
    let path = dir.join(&kept);
    assert_eq!(std::fs::read(&path).unwrap(), png());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    // The next turn sends the kept copy again, whole.
    env.run(&["chat", &id, "what colour?"]).ok();
    let body = s.requests()[1].json();
    assert_eq!(
        body["messages"][0]["content"],
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64(&png())}},
            {"type": "text", "text": "what is it?"}
        ])
    );
    let shown = env.run(&["chat", "show", &id]).success();
    assert!(
        shown
            .stdout
            .contains(&format!("kept as {}", path.display())),
        "{}",
        shown.stdout
    );
    // A kept copy that changed is not sent (its hash no longer matches): the note instead.
    std::fs::write(&path, b"\x89PNG\r\n\x1a\nchanged").unwrap();
    let s2 = Server::start(vec![Reply::sse(&[
        &an_start(1),
        &an_text("ok"),
        &an_end(1),
    ])]);
    let mut env2 = env;
    env2.set("ANTHROPIC_BASE_URL", &s2.url());
    env2.run(&["chat", &id, "again?"]).ok();
    let first = s2.only().json()["messages"][0]["content"].clone();
    assert!(
        first
            .as_str()
            .is_some_and(|t| t.starts_with("[attached earlier: cat.png")),
        "{first}"
    );
    // Deleting the chat deletes its folder.
    env2.run(&["chat", "delete", &id]).success();
    assert!(!dir.exists());
}

#[test]
fn keep_attachments_needs_a_chat() {
    let env = Env::echo();
    env.project_file("cat.png", png());
    env.run(&[
        "--keep-attachments",
        "--no-chat",
        "-F",
        "cat.png",
        "echo",
        "q",
    ])
    .code(2);
}

#[test]
fn serve_shows_the_attachment_line_and_serves_no_bytes() {
    use crate::serve::{TOKEN, http, json, serve};
    let env = Env::echo();
    env.project_file("cat.png", png());
    let out = env.run(&["-F", "cat.png", "echo", "what is it?"]).success();
    assert!(
        out.stdout.contains("[attached: cat.png, image/png,"),
        "{}",
        out.stdout
    );
    let id = out.chat_id();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let (status, body) = http(s.port, "GET", &format!("/chats/{id}"), Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");
    let v = json(&body);
    assert_eq!(v["messages"][0]["attachments"][0]["name"], "cat.png");
    assert!(!body.contains(&base64(&png())));
    assert!(
        !body.contains(&env.path("cat.png").display().to_string()),
        "{body}"
    );
    // In the page: one line under "You".
    let Some(browser) = crate::support::webdriver::Browser::start() else {
        return;
    };
    let base = format!("http://127.0.0.1:{}", s.port);
    browser.go(&format!("{base}/#token={TOKEN}"));
    browser.wait("the page", "return document.body.dataset.ready === '1'");
    browser.wait(
        "the chat list",
        &format!("return document.querySelector('#chats li[data-id=\"{id}\"]') !== null"),
    );
    browser.click(&format!("#chats li[data-id='{id}'] button"));
    let line = browser.wait(
        "the attachment line",
        "const a = document.querySelector('.msg.user .attachment'); return a && a.textContent;",
    );
    assert_eq!(
        line,
        json!(format!("attached: cat.png (image/png, {} B)", png().len()))
    );
}

#[test]
fn dash_a_and_attach_are_dash_f() {
    let env = Env::echo();
    env.project_file("cat.png", png());
    env.project_file("doc.pdf", pdf());
    // The value after -a is a path, even one that starts like a prompt word.
    let out = env
        .run(&["-a", "cat.png", "echo", "--attach", "doc.pdf", "q"])
        .success();
    assert!(
        out.stdout.contains("[attached: cat.png, image/png,"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("[attached: doc.pdf, application/pdf,"),
        "{}",
        out.stdout
    );
}

/// Sixteen 10 MiB images were all read into memory (195 MB) before the total was checked,
/// and the message named a partial sum as the total. The sizes are added up before reading:
/// past 64 MiB the call is refused at the file that crosses it, and nothing is sent.
#[test]
fn many_large_images_are_refused_by_their_sizes_before_they_are_read() {
    let s = Server::start(vec![]);
    let env = Env::for_provider("openai", &s);
    let mut names = Vec::new();
    for i in 0..4 {
        let mut big = png();
        big.resize(20 * 1024 * 1024, 0);
        let name = format!("big{i}.png");
        env.project_file(&name, &big);
        names.push(name);
    }
    let out = refused(
        &s,
        env.run(&["-F", &names.join(","), "openai:gpt-test", "q"]),
    );
    assert!(
        out.stderr
            .contains("add up to more than 64.0 MiB, the most ai sends (reached at big3.png)"),
        "{}",
        out.stderr
    );
}

/// `--dry-run` shows an image or PDF by its start, size and hash, never its whole base64; the
/// request body it prints stays valid JSON.
#[test]
fn dry_run_shortens_the_base64_of_images_and_pdfs() {
    let mut big = png();
    big.resize(300_000, b'x');
    let hash = sha256(&big);
    for (provider, route) in [
        ("openai", "openai:gpt-test"),
        ("anthropic", "anthropic:claude-test"),
        ("gemini-api", "gemini-api:gm-test"),
        ("bedrock", "bedrock:anthropic.claude-test"),
        ("ollama-api", "ollama-api:llava"),
    ] {
        let s = Server::start(vec![]);
        let env = Env::for_provider(provider, &s);
        env.project_file("big.png", big.clone());
        let out = env
            .run(&["-F", "big.png", route, "--dry-run", "what is this?"])
            .success();
        assert!(
            out.stdout.len() < 20_000,
            "{provider}: {} bytes printed",
            out.stdout.len()
        );
        let short = format!("iVBORw0K…(300,000 bytes, sha256 {}…)", &hash[..12]);
        assert!(out.stdout.contains(&short), "{provider}: {}", out.stdout);
        let body = &out.stdout[out.stdout.find("\n{").expect("a JSON body")..];
        let v: Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("{provider}: not JSON ({e}): {body}"));
        assert!(v.is_object());
        assert!(s.requests().is_empty(), "{provider}: nothing is sent");
    }
}

/// A kept copy opens from the page of `ai serve` through a link signed for that one file:
/// served as what its first bytes say (`nosniff`, a disposition), and nothing else of the
/// chat's folder or outside it is reachable that way.
#[test]
fn serve_opens_a_kept_copy_through_its_signed_link() {
    use crate::serve::{TOKEN, http, request, serve};
    let env = Env::echo();
    env.project_file("cat.png", png());
    let out = env
        .run(&["--keep-attachments", "-F", "cat.png", "echo", "what is it?"])
        .success();
    let id = out.chat_id();
    let kept = format!("{}-cat.png", &sha256(&png())[..12]);
    let dir = env.home.join("chats").join(format!("{id}.files"));
    let s = serve(&env, &["--token", TOKEN], &[]);
    let (status, body) = http(s.port, "GET", &format!("/chats/{id}"), Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    let link = v["messages"][0]["attachments"][0]["link"]
        .as_str()
        .unwrap_or_else(|| panic!("a signed link: {body}"))
        .to_owned();
    let path = format!("/chats/{id}/files/{kept}");
    assert!(link.starts_with(&format!("{path}?sig=")), "{link}");
    // The link alone (no token) opens it.
    let a = request(s.port, "GET", &link, &[], b"");
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("content-type").as_deref(), Some("image/png"));
    assert_eq!(
        a.header("content-disposition"),
        Some(format!("inline; filename=\"{kept}\""))
    );
    // Each security header once, as every answer of the server carries it.
    assert_eq!(a.headers("x-content-type-options"), ["nosniff"]);
    assert_eq!(a.headers("cache-control"), ["no-store"]);
    assert_eq!(a.header("content-length"), Some(png().len().to_string()));
    assert_eq!(a.body, String::from_utf8_lossy(&png()));
    // Without the signature, or with this signature on another path: refused.
    assert_eq!(request(s.port, "GET", &path, &[], b"").status, 401);
    let sig = link.split_once('?').unwrap().1;
    std::fs::write(dir.join("other.png"), png()).unwrap();
    let other = format!("/chats/{id}/files/other.png?{sig}");
    assert_eq!(request(s.port, "GET", &other, &[], b"").status, 401);
    // With the token: never a path out of the folder, never a link in it.
    let outside = env.home.join("config.json");
    std::fs::write(&outside, "{}").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("link.png")).unwrap();
    for name in ["..%2F..%2Fconfig.json", "..", "link.png", "missing.png"] {
        let (status, body) = http(
            s.port,
            "GET",
            &format!("/chats/{id}/files/{name}"),
            Some(TOKEN),
            b"",
        );
        assert_eq!(status, 404, "{name}: {body}");
    }
    // A file in the folder that is neither an image nor a PDF is a download, never a page.
    std::fs::write(dir.join("x.html"), "<script>alert(1)</script>").unwrap();
    let a = request(
        s.port,
        "GET",
        &format!("/chats/{id}/files/x.html"),
        &[&format!("Authorization: Bearer {TOKEN}")],
        b"",
    );
    assert_eq!(a.status, 200);
    assert_eq!(
        a.header("content-type").as_deref(),
        Some("application/octet-stream")
    );
    assert!(
        a.header("content-disposition")
            .is_some_and(|d| d.starts_with("attachment;")),
        "{:?}",
        a.head
    );
    // A chat's folder of kept copies that is a link out of the chats folder: not followed.
    let elsewhere = env.root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("secret.png"), png()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, env.home.join("chats/linked1.files")).unwrap();
    let (status, body) = http(
        s.port,
        "GET",
        "/chats/linked1/files/secret.png",
        Some(TOKEN),
        b"",
    );
    assert_eq!(status, 404, "{body}");
    // In the page: the attachment line has an "open" link to the signed URL.
    let Some(browser) = crate::support::webdriver::Browser::start() else {
        return;
    };
    let base = format!("http://127.0.0.1:{}", s.port);
    browser.go(&format!("{base}/#token={TOKEN}"));
    browser.wait("the page", "return document.body.dataset.ready === '1'");
    browser.wait(
        "the chat list",
        &format!("return document.querySelector('#chats li[data-id=\"{id}\"]') !== null"),
    );
    browser.click(&format!("#chats li[data-id='{id}'] button"));
    let href = browser.wait(
        "the open link",
        "const a = document.querySelector('.msg.user .attachment a.kept'); return a && a.getAttribute('href');",
    );
    assert_eq!(href, json!(link));
}
