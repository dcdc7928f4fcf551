//! Hostile-test findings of the HTTP layer: `--timeout` as a deadline across retries (N8),
//! 200 replies that are not an event stream (N9), base URLs with a query or credentials (N20),
//! `.env` comments and FIFOs (N21, N15), misleading texts (N22), Gemini base URLs (issue 9).

use std::time::{Duration, Instant};

use crate::support::*;

const OA: &str = "openai:gpt-4o-mini";

fn overloaded(retry_after: &str) -> Reply {
    Reply::json(503, r#"{"error":{"message":"busy","type":"server_error"}}"#)
        .header("Retry-After", retry_after)
}

// N8 ----------------------------------------------------------------------------------------

/// The server asks for 40 s; `--timeout 2` gives up at once and says why.
#[test]
fn a_wait_beyond_the_deadline_is_not_taken() {
    let s = Server::start(vec![overloaded("40"), overloaded("40")]);
    let env = Env::for_provider("openai", &s);
    let started = Instant::now();
    let out = env.run(&["--no-chat", "--timeout", "2", OA, "hi"]);
    // Generous: the bug is a 40 s sleep.
    assert!(started.elapsed() < Duration::from_secs(20), "{out:#?}");
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1);
    assert!(
        out.stderr
            .contains("the server asks to wait 40 s; that is beyond --timeout"),
        "{out:#?}"
    );
    assert!(!out.stderr.contains("retrying in 40"), "{out:#?}");
}

/// Every retry counts against the one deadline: with 6 s waits and an 11 s deadline, the first
/// wait fits and the second would pass it, so there is no third request. (The 5 s the first
/// wait leaves are for starting and both requests, however slowly the machine runs; with 2 s
/// waits and 3 s, a loaded machine ran out of deadline during the second request.)
#[test]
fn retries_stop_at_the_deadline() {
    let s = Server::start(vec![overloaded("6"), overloaded("6"), overloaded("6")]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", "--timeout", "11", OA, "hi"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(s.requests().len(), 2, "{out:#?}");
    assert!(out.stderr.contains("retrying in 6.0s (1/2)"), "{out:#?}");
    assert!(out.stderr.contains("beyond --timeout"), "{out:#?}");
}

// N9 ----------------------------------------------------------------------------------------

fn assert_not_cut(out: &Out) {
    assert!(!out.stderr.contains("cut"), "{out:#?}");
    assert!(!out.stderr.contains("retrying"), "{out:#?}");
}

#[test]
fn an_html_page_is_named_and_not_retried() {
    let s = Server::start(vec![
        Reply::new(200)
            .header("Content-Type", "text/html; charset=utf-8")
            .body("<!doctype html><html><head><title>Sign in - Corp SSO</title></head><body>Please log in</body></html>"),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1);
    assert_not_cut(&out);
    let e = out.error();
    assert!(e.contains("an HTML page"), "{e}");
    assert!(e.contains("not an OpenAI-compatible API"), "{e}");
    assert!(e.contains("Sign in - Corp SSO"), "{e}");
    assert!(
        out.stderr.contains("hint: ") && out.stderr.contains("OPENAI_BASE_URL"),
        "{out:#?}"
    );
}

/// An S3-style bucket or proxy error: markup, but not a page.
#[test]
fn an_xml_document_is_named() {
    let s = Server::start(vec![
        Reply::new(200)
            .header("Content-Type", "application/xml")
            .body(r#"<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>"#),
    ]);
    let env = Env::for_provider("anthropic", &s);
    let out = env.run(&["--no-chat", "anthropic:claude-x", "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1);
    assert_not_cut(&out);
    let e = out.error();
    assert!(e.contains("an XML document, not the Anthropic API"), "{e}");
    assert!(e.contains("AccessDenied"), "{e}");
}

#[test]
fn a_json_error_with_status_200_is_shown() {
    let s = Server::start(vec![Reply::json(
        200,
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#,
    )]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1);
    assert_not_cut(&out);
    assert!(
        out.error().contains("You exceeded your current quota"),
        "{out:#?}"
    );
}

#[test]
fn a_json_document_instead_of_a_stream_is_named() {
    let s = Server::start(vec![Reply::json(200, r#"{"object":"list","data":[]}"#)]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1);
    assert_not_cut(&out);
    let e = out.error();
    assert!(e.contains("not an event stream"), "{e}");
    assert!(e.contains(r#"{"object":"list""#), "{e}");
}

/// A 302 that ureq follows with a GET lands on a JSON document: the same clear error.
#[test]
fn a_redirect_to_a_json_document_is_named() {
    let target = Server::start(vec![Reply::json(200, r#"{"models":[]}"#)]);
    let s = Server::start(vec![
        Reply::new(302).header("Location", &format!("{}/elsewhere", target.url())),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_not_cut(&out);
    assert!(out.error().contains("not an event stream"), "{out:#?}");
    assert_eq!(target.requests().len(), 1);
}

#[test]
fn a_compressed_body_is_named() {
    let s = Server::start(vec![
        Reply::new(200)
            .header("Content-Type", "text/event-stream")
            .header("Content-Encoding", "gzip")
            .body("\u{1f}\u{8b}garbage"),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1);
    assert_not_cut(&out);
    assert!(out.error().contains("gzip"), "{out:#?}");
}

// N20 ---------------------------------------------------------------------------------------

#[test]
fn a_query_in_the_base_url_stays_after_the_path() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let env = Env::empty();
    env.write_config(&format!(
        r#"{{"providers":{{"mine":{{"base_url":"{}/v1?x=1#frag"}}}}}}"#,
        s.url()
    ));
    let out = env.run(&["--no-chat", "mine:m", "hi"]);
    out.ok();
    assert_eq!(s.only().target, "/v1/chat/completions?x=1");
}

#[test]
fn url_credentials_are_never_shown() {
    let env = Env::empty();
    let base = closed_port_url().replace("http://", "http://user:hunter2@");
    env.write_config(&format!(
        r#"{{"providers":{{"mine":{{"base_url":"{base}/v1"}}}}}}"#
    ));
    let dry = env.run(&["--no-chat", "--dry-run", "mine:m", "hi"]);
    dry.ok();
    assert!(dry.stdout.contains("http://***@127.0.0.1"), "{dry:#?}");
    let failed = env.run(&["--no-chat", "mine:m", "hi"]);
    assert_eq!(failed.code, Some(1));
    for out in [&dry, &failed] {
        assert!(
            !out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"),
            "{out:#?}"
        );
    }
}

// N21, N15 ----------------------------------------------------------------------------------

#[test]
fn dotenv_inline_comments_are_not_part_of_the_value() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let mut env = Env::empty();
    env.set("OPENAI_BASE_URL", &format!("{}/v1", s.url()));
    std::fs::write(
        env.home.join(".env"),
        format!("OPENAI_API_KEY = \"{KEY}\" # the work key\nOTHER=a#b\n"),
    )
    .unwrap();
    env.run(&["--no-chat", OA, "hi"]).ok();
    let auth = s.only().header("authorization").map(str::to_owned);
    assert_eq!(auth.as_deref(), Some(format!("Bearer {KEY}").as_str()));
}

#[test]
fn a_fifo_as_dotenv_does_not_hang() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let env = Env::for_provider("openai", &s);
    let fifo = std::ffi::CString::new(env.home.join(".env").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let mut child = env.spawn(&["--no-chat", OA, "hi"]);
    // ai hung on a FIFO .env if it still runs after 20 s.
    child.wait_status_within(Duration::from_secs(20));
    let out = child.wait();
    assert!(out.status.success(), "{out:#?}");
}

// N22 ---------------------------------------------------------------------------------------

#[test]
fn status_408_is_a_timeout_not_a_refusal() {
    let s = Server::start(vec![Reply::json(
        408,
        r#"{"error":{"message":"Request timed out"}}"#,
    )]);
    let env = Env::for_provider("openai", &s);
    env.write_config(r#"{"providers":{"openai":{"retries":0}}}"#);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert!(!out.stderr.contains("refused"), "{out:#?}");
    assert!(out.error().contains("timed out"), "{out:#?}");
}

#[test]
fn a_429_asking_for_an_hour_says_so() {
    let s = Server::start(vec![
        Reply::json(
            429,
            r#"{"error":{"message":"slow down","type":"requests"}}"#,
        )
        .header("Retry-After", "3600"),
    ]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(s.requests().len(), 1);
    assert!(out.stderr.contains("asks to wait 1 h"), "{out:#?}");
    assert!(!out.stderr.contains("wait a little"), "{out:#?}");
}

#[test]
fn json_of_the_wrong_shape_is_not_called_invalid_json() {
    let s = Server::start(vec![Reply::sse(&[&data(r#"{"choices":"x"}"#)])]);
    let env = Env::for_provider("openai", &s);
    let out = env.run(&["--no-chat", OA, "hi"]);
    assert_eq!(out.code, Some(1));
    assert!(!out.stderr.contains("not valid JSON"), "{out:#?}");
    assert!(out.error().contains("unexpected shape"), "{out:#?}");
}

#[test]
fn huge_numbers_are_not_echoed_digit_by_digit() {
    let env = Env::empty();
    env.write_config(
        r#"{"providers":{"mine":{"base_url":"http://127.0.0.1:9/v1","timeout":-1e300}}}"#,
    );
    let out = env.run(&["--no-chat", "mine:m", "hi"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.error().contains("-1e300"), "{out:#?}");
    assert!(!out.stderr.contains("0000000000"), "{out:#?}");
}

// Gemini base URL (issue 9) -----------------------------------------------------------------

fn gemini_target(vars: &[(&str, &str)]) -> String {
    let s = Server::start(vec![Reply::sse(&[&gm_chunk("ok", Some((1, 1)))])]);
    let mut env = Env::empty();
    env.set("GEMINI_API_KEY", KEY);
    for (k, v) in vars {
        env.set(k, &v.replace("URL", &s.url()));
    }
    env.run(&["--no-chat", "gemini-api:gemini-2.5-flash", "hi"])
        .ok();
    s.only().target
}

#[test]
fn gemini_base_url_may_be_a_host_root_or_end_in_a_version() {
    let streamed = "/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    assert_eq!(
        gemini_target(&[("GEMINI_BASE_URL", "URL")]),
        format!("/v1beta{streamed}")
    );
    assert_eq!(
        gemini_target(&[("GEMINI_BASE_URL", "URL/")]),
        format!("/v1beta{streamed}")
    );
    assert_eq!(
        gemini_target(&[("GEMINI_BASE_URL", "URL/v1")]),
        format!("/v1{streamed}")
    );
    assert_eq!(
        gemini_target(&[("GEMINI_BASE_URL", "URL/proxy/v1beta")]),
        format!("/proxy/v1beta{streamed}")
    );
}

#[test]
fn google_gemini_base_url_is_honoured_and_gemini_base_url_wins() {
    let streamed = "/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    assert_eq!(
        gemini_target(&[("GOOGLE_GEMINI_BASE_URL", "URL/google")]),
        format!("/google/v1beta{streamed}")
    );
    assert_eq!(
        gemini_target(&[
            ("GOOGLE_GEMINI_BASE_URL", "URL/google"),
            ("GEMINI_BASE_URL", "URL/gemini/v1")
        ]),
        format!("/gemini/v1{streamed}")
    );
}
