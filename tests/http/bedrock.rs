//! Amazon Bedrock (Converse and ConverseStream) against the scripted server: the request and
//! its auth (a bearer API key, or SigV4 checked here against AWS's published test vector and
//! then against what `ai` sent), binary event-stream frames built by the test, usage,
//! exceptions in the stream, damaged and cut streams, throttling, and the keys never shown.

use ring::{digest, hmac};
use serde_json::json;

use crate::support::*;

const MODEL: &str = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const ROUTE: &str = "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0";
const STREAM_PATH: &str = "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse-stream";
const ACCESS_KEY: &str = "AKIDTESTACCESSKEY42";
const SESSION: &str = "session-token-SECRET-77";

fn frames(v: Vec<Vec<u8>>) -> Reply {
    Reply::eventstream(&v)
}

/// A world with AWS credentials instead of a Bedrock API key; the secret key is [`KEY`].
fn sigv4_env(s: &Server) -> Env {
    let mut env = Env::empty();
    env.set("BEDROCK_BASE_URL", &s.url())
        .set("AWS_REGION", "eu-west-3")
        .set("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .set("AWS_SECRET_ACCESS_KEY", KEY)
        .set("AWS_SESSION_TOKEN", SESSION);
    env
}

#[test]
fn converse_stream_with_a_bearer_key() {
    let s = Server::start(vec![frames(br_stream("Hello, world", 12, 3))]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "--system", "be brief", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "Hello, world\n");
    let r = s.only();
    assert_eq!(r.method, "POST");
    assert_eq!(r.target, STREAM_PATH);
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(
        r.header("x-amz-date").is_none(),
        "a bearer key is not signed"
    );
    assert_eq!(
        r.json(),
        json!({
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "system": [{"text": "be brief"}],
            "inferenceConfig": {"maxTokens": 4096}
        })
    );
    let m = env.only_messages();
    assert_eq!(m[1]["content"], "Hello, world");
    assert_eq!(m[1]["usage"], json!({"input": 12, "output": 3}));
    assert_eq!(m[1]["provider"], "bedrock");
    assert_eq!(m[1]["model"], MODEL);
}

#[test]
fn text_in_pieces_and_an_inference_profile() {
    let mut v = vec![br_event("messageStart", r#"{"role":"assistant"}"#)];
    for piece in ["Hel", "lo", ", ", "world"] {
        v.push(br_text(piece));
        // Event types added later, and extra headers, are ignored.
        v.push(es_frame(
            &[
                (":message-type", "event"),
                (":event-type", "someFutureEvent"),
                ("x-extra", "1"),
            ],
            "{}",
        ));
    }
    v.extend(br_end(1, 2));
    // Frames split across writes: the reader must join them.
    let joined: Vec<u8> = v.concat();
    let (a, b) = joined.split_at(7);
    let (b, c) = b.split_at(b.len() / 2);
    let s = Server::start(vec![frames(vec![a.to_vec(), b.to_vec(), c.to_vec()])]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[
        "--json",
        "bedrock:us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "hi",
    ]);
    out.ok();
    let v = out.json();
    assert_eq!(v["reply"], "Hello, world");
    assert_eq!(v["usage"], json!({"input": 1, "output": 2}));
    assert_eq!(
        s.only().target,
        "/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream"
    );
}

#[test]
fn converse_without_streaming() {
    let s = Server::start(vec![Reply::json(
        200,
        r#"{"output":{"message":{"role":"assistant","content":[{"text":"whole "},{"text":"answer"}]}},"stopReason":"end_turn","usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7},"metrics":{"latencyMs":9}}"#,
    )]);
    let env = Env::for_provider("bedrock", &s);
    env.write_config(r#"{"providers":{"bedrock":{"stream":false,"max_tokens":99}}}"#);
    let out = env.run(&[ROUTE, "hi"]);
    out.ok();
    assert_eq!(out.stdout, "whole answer\n");
    let r = s.only();
    assert_eq!(
        r.target,
        "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse"
    );
    assert_eq!(r.json()["inferenceConfig"]["maxTokens"], 99);
    assert_eq!(
        env.only_messages()[1]["usage"],
        json!({"input": 5, "output": 2})
    );
}

#[test]
fn an_exception_before_text_is_retried_and_one_after_is_an_error() {
    // throttlingException as the first frame: nothing printed, so it is tried again.
    let s = Server::start(vec![
        frames(vec![br_exception(
            "throttlingException",
            "Too many requests",
        )]),
        frames(br_stream("second try", 1, 1)),
    ]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]);
    out.ok();
    assert_eq!(out.stdout, "second try\n");
    assert_eq!(s.requests().len(), 2);
    assert!(out.stderr.contains("retrying"), "{out:#?}");

    // modelStreamErrorException after text: never retried, an error naming it.
    let s = Server::start(vec![frames(vec![
        br_event("messageStart", r#"{"role":"assistant"}"#),
        br_text("partial"),
        br_exception("modelStreamErrorException", "the model stopped"),
    ])]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]).code(1);
    assert!(out.stdout.starts_with("partial"), "{out:#?}");
    assert!(out.error().contains("the model stopped"), "{out:#?}");
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn a_validation_exception_in_the_stream_is_explained() {
    let s = Server::start(vec![frames(vec![br_exception(
        "validationException",
        "The provided model identifier is invalid.",
    )])]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]).code(1);
    assert!(
        out.error().contains("model identifier is invalid"),
        "{out:#?}"
    );
    assert!(out.stderr.contains("hint: check the model ID"), "{out:#?}");
    assert_eq!(s.requests().len(), 1, "a validation error is not retried");
}

#[test]
fn a_frame_with_a_bad_checksum_is_refused() {
    let mut bad = br_text("tampered");
    let at = bad.len() - 6;
    bad[at] ^= 0x20;
    let s = Server::start(vec![frames(vec![
        br_event("messageStart", r#"{"role":"assistant"}"#),
        bad,
    ])]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]).code(1);
    assert!(out.error().contains("bad checksum"), "{out:#?}");
    assert!(!out.stdout.contains("tampered"), "{out:#?}");
}

#[test]
fn a_stream_cut_short_is_an_error() {
    // Cut inside the second text frame, after the first was printed.
    let second = br_text("never whole");
    let s = Server::start(vec![
        frames(vec![
            br_event("messageStart", r#"{"role":"assistant"}"#),
            br_text("begun "),
        ])
        .bytes(&second[..second.len() / 2])
        .cut(),
    ]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]).code(1);
    assert!(out.stdout.starts_with("begun"), "{out:#?}");
    assert!(out.error().contains("bedrock"), "{out:#?}");
    assert_eq!(s.requests().len(), 1, "text was printed: no retry");
    // Cut between frames, before `messageStop`: the same.
    let s = Server::start(vec![frames(vec![
        br_event("messageStart", r#"{"role":"assistant"}"#),
        br_text("half"),
    ])]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]).code(1);
    assert!(
        out.error().contains("ended before it was complete"),
        "{out:#?}"
    );
}

#[test]
fn throttling_and_model_timeouts_are_retried() {
    let throttled = Reply::json(
        429,
        r#"{"message":"Too many requests, please wait before trying again."}"#,
    )
    .header(
        "x-amzn-ErrorType",
        "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
    );
    let timed_out = Reply::json(
        408,
        r#"{"message":"Model has timed out in processing the request."}"#,
    )
    .header(
        "x-amzn-ErrorType",
        "ModelTimeoutException:http://internal.amazon.com/coral/com.amazon.bedrock/",
    );
    let s = Server::start(vec![
        throttled.clone(),
        timed_out,
        frames(br_stream("ok", 1, 1)),
    ]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]);
    out.ok();
    assert_eq!(out.stdout, "ok\n");
    assert_eq!(s.requests().len(), 3);
    // Throttled past the retries: the error says so and what to do.
    let s = Server::start(vec![throttled.clone(), throttled.clone(), throttled]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]).code(1);
    assert!(out.error().contains("throttling"), "{out:#?}");
    assert!(out.stderr.contains("max_requests_per_minute"), "{out:#?}");
}

#[test]
fn validation_and_access_errors_have_hints() {
    let s = Server::start(vec![
        Reply::json(400, r#"{"message":"Invocation of model ID anthropic.claude-3-7-sonnet-20250219-v1:0 with on-demand throughput isn't supported. Retry your request with the ID or ARN of an inference profile that contains this model."}"#)
            .header("x-amzn-ErrorType", "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
        Reply::json(403, r#"{"Message":"You don't have access to the model with the specified model ID."}"#)
            .header("x-amzn-ErrorType", "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/"),
    ]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]).code(1);
    assert!(out.error().contains("inference profile"), "{out:#?}");
    assert!(
        out.stderr.contains(&format!("bedrock:us.{MODEL}")),
        "{out:#?}"
    );
    let out = env.run(&[ROUTE, "hi"]).code(3);
    assert!(out.error().contains("denied access"), "{out:#?}");
    assert!(out.stderr.contains("Model access"), "{out:#?}");
    assert!(out.stderr.contains("us-east-1"), "{out:#?}");
    assert_eq!(s.requests().len(), 2, "neither is retried");
}

// ---- SigV4 ----------------------------------------------------------------------------

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

fn mac(key: &[u8], data: &str) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
        .as_ref()
        .to_vec()
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Check a recorded request's SigV4 signature with `secret`, as AWS would: rebuild the
/// canonical request from what arrived (method, path, query, the signed headers, the body).
fn verify(r: &Recorded, secret: &str) -> Result<(), String> {
    let auth = r.header("authorization").ok_or("no authorization")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 Credential=")
        .ok_or(format!("not SigV4: {auth}"))?;
    let (cred, rest) = rest
        .split_once(", SignedHeaders=")
        .ok_or("no SignedHeaders")?;
    let (signed, sig) = rest.split_once(", Signature=").ok_or("no Signature")?;
    let scope: Vec<&str> = cred.splitn(2, '/').collect();
    let scope = scope.get(1).ok_or("no scope")?;
    let parts: Vec<&str> = scope.split('/').collect();
    let [date, region, service, "aws4_request"] = parts[..] else {
        return Err(format!("bad scope {scope}"));
    };
    let (path, query) = r.target.split_once('?').unwrap_or((&r.target, ""));
    let uri: Vec<String> = path.split('/').map(encode).collect();
    let mut q: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
    q.sort();
    let mut headers = String::new();
    for name in signed.split(';') {
        let v = r
            .header(name)
            .ok_or(format!("signed header {name} not sent"))?;
        headers.push_str(&format!("{name}:{}\n", v.trim()));
    }
    let canonical = format!(
        "{}\n{}\n{}\n{headers}\n{signed}\n{}",
        r.method,
        uri.join("/"),
        q.join("&"),
        hex(digest::digest(&digest::SHA256, &r.body).as_ref())
    );
    let amz_date = r.header("x-amz-date").ok_or("no x-amz-date")?;
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref())
    );
    let mut key = mac(format!("AWS4{secret}").as_bytes(), date);
    for p in [region, service, "aws4_request"] {
        key = mac(&key, p);
    }
    let want = hex(&mac(&key, &to_sign));
    if want == sig {
        Ok(())
    } else {
        Err(format!("signature {sig}, expected {want}\n{canonical}"))
    }
}

#[test]
fn the_verifier_agrees_with_the_aws_test_suite() {
    // get-vanilla and post-vanilla from AWS's aws-sig-v4-test-suite.
    for (method, sig) in [
        (
            "GET",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
        (
            "POST",
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
        ),
    ] {
        let r = Recorded {
            method: method.into(),
            target: "/".into(),
            headers: vec![
                ("Host".into(), "example.amazonaws.com".into()),
                ("X-Amz-Date".into(), "20150830T123600Z".into()),
                (
                    "Authorization".into(),
                    format!(
                        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature={sig}"
                    ),
                ),
            ],
            body: Vec::new(),
        };
        verify(&r, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY").unwrap();
        assert!(verify(&r, "another secret").is_err());
    }
}

#[test]
fn aws_credentials_sign_every_request_with_sigv4() {
    let s = Server::start(vec![
        Reply::json(429, r#"{"message":"slow down"}"#)
            .header("x-amzn-ErrorType", "ThrottlingException"),
        frames(br_stream("signed", 2, 1)),
    ]);
    let env = sigv4_env(&s);
    let out = env.run(&[ROUTE, "hi"]);
    out.ok();
    assert_eq!(out.stdout, "signed\n");
    let reqs = s.requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        let auth = r.header("authorization").expect("authorization");
        let date = r.header("x-amz-date").expect("x-amz-date");
        assert_eq!(date.len(), 16, "{date}");
        assert!(
            auth.starts_with(&format!(
                "AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{}/eu-west-3/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=",
                &date[..8]
            )),
            "{auth}"
        );
        assert_eq!(r.header("x-amz-security-token"), Some(SESSION));
        verify(r, KEY).unwrap();
        // The secret key itself is never sent.
        assert!(!format!("{:?}", r.headers).contains(KEY));
    }
    for secret in [ACCESS_KEY, SESSION] {
        assert!(!out.stdout.contains(secret) && !out.stderr.contains(secret));
        for file in files(&env.home) {
            let text =
                String::from_utf8_lossy(&std::fs::read(&file).unwrap_or_default()).into_owned();
            assert!(!text.contains(secret), "{secret} in {}", file.display());
        }
    }
}

fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out
}

#[test]
fn dry_run_hides_every_key() {
    let s = Server::start(vec![]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&["--dry-run", ROUTE, "hi"]);
    out.ok();
    assert_eq!(
        out.stdout.lines().next(),
        Some(format!("POST {}{STREAM_PATH}", s.url()).as_str())
    );
    assert!(
        out.stdout.lines().any(|l| l == "authorization: Bearer ***"),
        "{out:#?}"
    );

    let env = sigv4_env(&s);
    let out = env.run(&["--dry-run", ROUTE, "hi"]);
    out.ok();
    let auth = out
        .stdout
        .lines()
        .find(|l| l.starts_with("authorization: "))
        .expect("authorization line");
    assert!(
        auth.starts_with("authorization: AWS4-HMAC-SHA256 Credential=***/"),
        "{auth}"
    );
    assert!(auth.ends_with("Signature=***"), "{auth}");
    assert!(
        out.stdout.lines().any(|l| l == "x-amz-security-token: ***"),
        "{out:#?}"
    );
    for secret in [ACCESS_KEY, SESSION, KEY] {
        assert!(!out.stdout.contains(secret), "{secret} in {}", out.stdout);
    }
    assert!(s.requests().is_empty(), "a dry run sends nothing");
}

#[test]
fn list_and_missing_settings() {
    let s = Server::start(vec![]);
    // No key, no credentials.
    let mut env = Env::empty();
    env.set("AWS_REGION", "us-east-1");
    let out = env.run(&["list"]);
    out.ok();
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("bedrock"))
        .expect("a bedrock row");
    assert!(
        line.contains(
            "needs AWS_BEARER_TOKEN_BEDROCK, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        ),
        "{line}"
    );
    let out = env.run(&[ROUTE, "hi"]).code(3);
    assert!(
        out.error()
            .contains("no API key or AWS credentials for bedrock"),
        "{out:#?}"
    );
    // Credentials, no region.
    let mut env = Env::empty();
    env.set("AWS_BEARER_TOKEN_BEDROCK", KEY);
    let out = env.run(&[ROUTE, "hi"]).code(3);
    assert!(
        out.error().contains("no AWS region for bedrock"),
        "{out:#?}"
    );
    assert!(out.stderr.contains("AWS_REGION"), "{out:#?}");
    // The region from config.
    let mut env = Env::empty();
    env.set("AWS_BEARER_TOKEN_BEDROCK", KEY);
    env.write_config(r#"{"providers":{"bedrock":{"region":"ap-south-1"}}}"#);
    let out = env.run(&["--dry-run", ROUTE, "hi"]);
    out.ok();
    assert!(
        out.stdout
            .starts_with("POST https://bedrock-runtime.ap-south-1.amazonaws.com/model/"),
        "{out:#?}"
    );
    let out = env.run(&["list"]);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("bedrock") && l.contains("key set")),
        "{out:#?}"
    );
    drop(s);
}

#[test]
fn rejected_credentials_name_what_to_set() {
    let s = Server::start(vec![
        Reply::json(
            403,
            &format!(r#"{{"message":"The security token included in the request is invalid. Key {ACCESS_KEY}"}}"#),
        )
        .header("x-amzn-ErrorType", "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/"),
        Reply::json(403, r#"{"message":"Forbidden"}"#),
    ]);
    let env = sigv4_env(&s);
    let out = env.run(&[ROUTE, "hi"]).code(3);
    assert!(out.error().contains("rejected the credentials"), "{out:#?}");
    assert!(
        out.stderr
            .contains("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
        "{out:#?}"
    );
    assert!(
        !out.stderr.contains(ACCESS_KEY),
        "an echoed key is hidden: {out:#?}"
    );
    // A 403 of no known type: still about the credentials in use, not an API key.
    let out = env.run(&[ROUTE, "hi"]).code(3);
    assert!(
        out.error().contains("rejected the AWS credentials"),
        "{out:#?}"
    );
    assert_eq!(s.requests().len(), 2, "neither is retried");
}

#[test]
fn a_second_bedrock_provider_from_config() {
    let s = Server::start(vec![frames(br_stream("from work", 1, 1))]);
    let mut env = Env::empty();
    env.write_config(&format!(
        r#"{{"providers":{{"work":{{"protocol":"bedrock","base_url":"{}","region":"us-east-2","api_key_env":"WORK_BEDROCK_KEY"}}}}}}"#,
        s.url()
    ));
    let out = env.run(&["work:amazon.nova-pro-v1:0", "hi"]).code(3);
    assert!(
        out.error()
            .contains("no API key or AWS credentials for work"),
        "{out:#?}"
    );
    env.set("WORK_BEDROCK_KEY", KEY);
    let out = env.run(&["work:amazon.nova-pro-v1:0", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "from work\n");
    let r = s.only();
    assert_eq!(r.target, "/model/amazon.nova-pro-v1%3A0/converse-stream");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn usage_of_an_odd_shape_is_left_out_not_the_stream() {
    let mut v = vec![br_text("fine")];
    v.push(br_event("messageStop", r#"{"stopReason":"end_turn"}"#));
    v.push(br_event(
        "metadata",
        r#"{"usage":{"inputTokens":-5,"outputTokens":"7"}}"#,
    ));
    let s = Server::start(vec![frames(v)]);
    let env = Env::for_provider("bedrock", &s);
    let out = env.run(&[ROUTE, "hi"]);
    out.ok();
    assert_eq!(out.stdout, "fine\n");
}
