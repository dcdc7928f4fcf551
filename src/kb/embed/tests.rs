//! Specs and errors, request bodies, reply parsing (good and every bad shape), batching and
//! normalization as pure functions; then one real round trip per protocol, and retries,
//! deadlines and failures, against a tiny server on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::wire::{self, Ask, Shape, Wire};
use super::*;
use crate::backend::http::{Bad, Built};

/// A key no output may show.
const KEY: &str = "sk-unit-SECRET-98765";
/// A variable no test sets.
const UNSET: &str = "AI_TEST_EMBED_UNSET_VAR";

/// A config in a temp dir (so `.env` is the dir's, which has none).
fn config(json: &Value) -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config::parse(dir.path().join("config.json"), &json.to_string()).unwrap();
    (dir, cfg)
}

/// A config with one provider `t` of `protocol` at `base`, with the key.
fn provider_config(protocol: &str, base: &str, extra: Value) -> (tempfile::TempDir, Config) {
    let mut p = json!({"protocol": protocol, "base_url": base, "api_key": KEY, "retries": 2});
    if let (Some(p), Value::Object(extra)) = (p.as_object_mut(), extra) {
        p.extend(extra);
    }
    config(&json!({"providers": {"t": p}}))
}

fn err(r: Result<Embedder>) -> Error {
    match r {
        Ok(e) => panic!("expected an error, got {e:?}"),
        Err(e) => e,
    }
}

fn inputs<'a>(texts: &[&'a str]) -> Vec<Input<'a>> {
    texts
        .iter()
        .map(|t| Input {
            text: t,
            title: None,
        })
        .collect()
}

// ---- specs --------------------------------------------------------------------------------

#[test]
fn specs_resolve_and_normalize() {
    let (_d, cfg) = config(&json!({"providers": {
        "gemini-api": {"api_key": KEY},
        "mine": {"base_url": "http://127.0.0.1:9/v1"},
    }}));
    let e = Embedder::new(" gemini:models/gemini-embedding-001 ", Some(768), &cfg).unwrap();
    assert_eq!(e.spec(), "gemini-api:gemini-embedding-001");
    assert_eq!((e.max_batch(), e.dimensions()), (100, Some(768)));
    let e = Embedder::new("ollama:bge-m3:latest", None, &cfg).unwrap();
    assert_eq!(e.spec(), "ollama-api:bge-m3:latest");
    assert_eq!(e.max_batch(), 64);
    let e = Embedder::new("mine:e5-small", None, &cfg).unwrap();
    assert_eq!(e.spec(), "mine:e5-small");
    assert_eq!(e.max_input_tokens(), 448);
    // The Debug form never shows the key.
    let e = Embedder::new("gemini-api:x", None, &cfg).unwrap();
    assert!(!format!("{e:?}").contains(KEY));
}

#[test]
fn bad_specs_are_usage_errors() {
    let (_d, cfg) = config(&json!({}));
    for spec in ["", "openai", "openai:", ":model", "  :  "] {
        let e = err(Embedder::new(spec, None, &cfg));
        assert_eq!(e.exit_code(), crate::error::code::USAGE, "{spec}: {e}");
        assert!(e.to_string().contains("PROVIDER:MODEL"), "{e}");
        assert!(
            e.hint_text()
                .unwrap()
                .contains("openai:text-embedding-3-small")
        );
    }
}

#[test]
fn unknown_and_chat_only_providers_list_the_ones_that_embed() {
    let (_d, cfg) = config(&json!({"providers": {
        "gemini-api": {"api_key": KEY},
        "local": {"base_url": "http://127.0.0.1:9/v1"},
        "claude-proxy": {"protocol": "anthropic", "base_url": "http://127.0.0.1:9"},
    }}));
    let e = err(Embedder::new("nosuch:model", None, &cfg));
    assert_eq!(e.exit_code(), crate::error::code::NOT_FOUND, "{e}");
    assert!(
        e.to_string()
            .contains("unknown embedding provider 'nosuch'"),
        "{e}"
    );
    let hint = e.hint_text().unwrap().to_owned();
    for name in ["openai", "azure", "gemini", "ollama", "local"] {
        assert!(hint.contains(name), "{hint}");
    }
    assert!(!hint.contains("-api"), "as specs name them: {hint}");
    assert!(
        !hint.contains("anthropic") && !hint.contains("bedrock") && !hint.contains("claude-proxy")
    );
    for spec in [
        "anthropic:claude-x",
        "bedrock:titan",
        "claude-proxy:x",
        "claude:opus",
        "codex:x",
        "echo:x",
    ] {
        let e = err(Embedder::new(spec, None, &cfg));
        assert_eq!(e.exit_code(), crate::error::code::USAGE, "{spec}: {e}");
        assert_eq!(e.hint_text(), Some(hint.as_str()), "{spec}");
    }
}

#[test]
fn a_missing_key_names_its_variable() {
    let (dir, cfg) = config(&json!({"providers": {
        "openai": {"api_key_env": UNSET},
        "azure": {"api_key_env": UNSET, "base_url": "http://127.0.0.1:9"},
    }}));
    for spec in ["openai:text-embedding-3-small", "azure:my-deployment"] {
        let e = err(Embedder::new(spec, None, &cfg));
        assert_eq!(e.exit_code(), crate::error::code::CONFIG, "{e}");
        assert!(e.to_string().contains("no API key"), "{e}");
        let hint = e.hint_text().unwrap();
        assert!(hint.contains(UNSET), "{hint}");
        assert!(
            hint.contains(&dir.path().join(".env").display().to_string()),
            "{hint}"
        );
    }
}

#[test]
fn dimensions_out_of_range_are_refused() {
    let (_d, cfg) = provider_config("openai", "http://127.0.0.1:9/v1", json!({}));
    for d in [0, MAX_DIMENSIONS + 1] {
        let e = err(Embedder::new("t:m", Some(d), &cfg));
        assert_eq!(e.exit_code(), crate::error::code::USAGE, "{e}");
    }
    assert!(Embedder::new("t:m", Some(MAX_DIMENSIONS), &cfg).is_ok());
}

#[test]
fn limits_follow_the_protocol_and_model() {
    let (_d, cfg) = config(&json!({"providers": {
        "openai": {"api_key": KEY},
        "gemini-api": {"api_key": KEY},
    }}));
    let e = Embedder::new("openai:text-embedding-3-small", None, &cfg).unwrap();
    assert_eq!(
        (e.max_batch(), e.max_batch_tokens(), e.max_input_tokens()),
        (256, 100_000, 7168)
    );
    let e = Embedder::new("gemini:gemini-embedding-001", None, &cfg).unwrap();
    assert_eq!((e.max_batch(), e.max_input_tokens()), (100, 1792));
    let e = Embedder::new("ollama:nomic-embed-text", None, &cfg).unwrap();
    assert_eq!((e.max_batch(), e.max_input_tokens()), (64, 1792));
    let e = Embedder::new("ollama:mxbai-embed-large", None, &cfg).unwrap();
    assert_eq!(e.max_input_tokens(), 448);
    let e = Embedder::new("ollama:snowflake-arctic-embed2", None, &cfg).unwrap();
    assert_eq!(e.max_input_tokens(), 1792);
    let e = Embedder::new("ollama:all-minilm:l6-v2", None, &cfg).unwrap();
    assert_eq!(e.max_input_tokens(), 224);
    assert!(e.max_input_tokens() <= e.max_batch_tokens());
}

// ---- request bodies -----------------------------------------------------------------------

fn resolved(protocol: &str, base: &str, extra: Value) -> Resolved {
    let (_d, cfg) = provider_config(protocol, base, extra);
    provider::resolve("t", &cfg, &Env::load(&cfg)).unwrap()
}

fn body(b: &Built) -> Value {
    serde_json::from_slice(&b.body).unwrap()
}

fn header_of<'a>(b: &'a Built, name: &str) -> Option<&'a str> {
    b.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn openai_request() {
    let p = resolved(
        "openai",
        "http://h/v1?org=x",
        json!({"headers": {"X-Extra": "1"}}),
    );
    let ask = Ask {
        wire: Wire::Openai,
        model: "text-embedding-3-small",
        dimensions: Some(64),
        purpose: Purpose::Document,
        task: None,
    };
    let b = wire::request(&p, &ask, &inputs(&["a", "b"]));
    assert_eq!(b.url, "http://h/v1/embeddings?org=x");
    assert_eq!(
        header_of(&b, "authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(header_of(&b, "x-extra"), Some("1"));
    assert_eq!(
        body(&b),
        json!({"model": "text-embedding-3-small", "input": ["a", "b"], "dimensions": 64, "encoding_format": "float"})
    );
    let ask = Ask {
        dimensions: None,
        ..ask
    };
    assert!(
        body(&wire::request(&p, &ask, &inputs(&["a"])))
            .get("dimensions")
            .is_none()
    );
}

#[test]
fn azure_request() {
    let p = resolved(
        "azure",
        "https://r.openai.azure.com/",
        json!({"api_version": "2024-10-21"}),
    );
    let ask = Ask {
        wire: Wire::Azure,
        model: "my emb",
        dimensions: None,
        purpose: Purpose::Query,
        task: None,
    };
    let b = wire::request(&p, &ask, &inputs(&["q"]));
    assert_eq!(
        b.url,
        "https://r.openai.azure.com/openai/deployments/my%20emb/embeddings?api-version=2024-10-21"
    );
    assert_eq!(header_of(&b, "api-key"), Some(KEY));
    assert_eq!(header_of(&b, "authorization"), None);
    assert_eq!(body(&b)["input"], json!(["q"]));
}

#[test]
fn gemini_request() {
    let p = resolved("gemini", "http://h:1", json!({}));
    let ask = Ask {
        wire: Wire::Gemini,
        model: "gemini-embedding-001",
        dimensions: Some(768),
        purpose: Purpose::Document,
        task: None,
    };
    let docs = [
        Input {
            text: "one",
            title: Some("Title"),
        },
        Input {
            text: "two",
            title: Some(" "),
        },
        Input {
            text: "three",
            title: None,
        },
    ];
    let b = wire::request(&p, &ask, &docs);
    assert_eq!(
        b.url,
        "http://h:1/v1beta/models/gemini-embedding-001:batchEmbedContents"
    );
    assert_eq!(header_of(&b, "x-goog-api-key"), Some(KEY));
    let want = |text: &str, title: Option<&str>, task: &str| {
        let mut r = json!({"model": "models/gemini-embedding-001", "content": {"parts": [{"text": text}]}, "taskType": task, "outputDimensionality": 768});
        if let Some(t) = title {
            r["title"] = json!(t);
        }
        r
    };
    assert_eq!(
        body(&b),
        json!({"requests": [want("one", Some("Title"), "RETRIEVAL_DOCUMENT"), want("two", None, "RETRIEVAL_DOCUMENT"), want("three", None, "RETRIEVAL_DOCUMENT")]})
    );
    // A query never carries a title.
    let ask = Ask {
        purpose: Purpose::Query,
        task: None,
        ..ask
    };
    let b = wire::request(&p, &ask, &docs[..1]);
    assert_eq!(
        body(&b),
        json!({"requests": [want("one", None, "RETRIEVAL_QUERY")]})
    );
}

#[test]
fn ollama_request_and_prefixes() {
    let p = resolved("ollama", "127.0.0.1:11434", json!({}));
    let ask = Ask {
        wire: Wire::Ollama,
        model: "nomic-embed-text",
        dimensions: None,
        purpose: Purpose::Query,
        task: None,
    };
    let b = wire::request(&p, &ask, &inputs(&["where"]));
    assert_eq!(b.url, "http://127.0.0.1:11434/api/embed");
    assert_eq!(
        body(&b),
        json!({"model": "nomic-embed-text", "input": ["search_query: where"], "truncate": false})
    );
    let ask = Ask {
        model: "all-minilm",
        dimensions: Some(32),
        ..ask
    };
    assert_eq!(
        body(&wire::request(&p, &ask, &inputs(&["x"]))),
        json!({"model": "all-minilm", "input": ["x"], "truncate": false, "dimensions": 32})
    );
    assert_eq!(
        wire::prefix("nomic-embed-text:v1.5", Purpose::Document),
        "search_document: "
    );
    assert_eq!(wire::prefix("mxbai-embed-large", Purpose::Document), "");
    assert!(wire::prefix("mxbai-embed-large", Purpose::Query).starts_with("Represent"));
    assert_eq!(
        wire::prefix("multilingual-e5-small", Purpose::Query),
        "query: "
    );
    assert_eq!(wire::prefix("e5-small-query", Purpose::Query), "");
    assert_eq!(wire::prefix("text-embedding-3-small", Purpose::Query), "");
}

// ---- replies ------------------------------------------------------------------------------

fn parse(w: Wire, text: &str) -> Result<Vec<Vec<f32>>, String> {
    wire::parse(w, text.as_bytes()).map_err(|b| match b {
        Bad::Invalid(why) => format!("invalid: {why}"),
        Bad::Provider(e) => format!("provider: {}", e.message),
    })
}

#[test]
fn good_replies_parse_in_input_order() {
    let oa = r#"{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0,2]},{"index":0,"embedding":[1.5,-1e-3]}],"usage":{"prompt_tokens":2}}"#;
    assert_eq!(
        parse(Wire::Openai, oa).unwrap(),
        vec![vec![1.5, -1e-3], vec![0.0, 2.0]]
    );
    let no_index = r#"{"data":[{"embedding":[1]},{"embedding":[2]}]}"#;
    assert_eq!(
        parse(Wire::Azure, no_index).unwrap(),
        vec![vec![1.0], vec![2.0]]
    );
    let gm = r#"{"embeddings":[{"values":[3,4]},{"values":[0,1]}]}"#;
    assert_eq!(
        parse(Wire::Gemini, gm).unwrap(),
        vec![vec![3.0, 4.0], vec![0.0, 1.0]]
    );
    let ol = r#"{"model":"m","embeddings":[[0.6,0.8]],"prompt_eval_count":3}"#;
    assert_eq!(parse(Wire::Ollama, ol).unwrap(), vec![vec![0.6, 0.8]]);
}

#[test]
fn bad_replies_are_described() {
    let cases = [
        (Wire::Openai, "", "invalid: not JSON"),
        (Wire::Openai, "not json", "invalid: not JSON"),
        (
            Wire::Openai,
            r#"{"data":[{"index":0,"embedding":[1]}"#,
            "invalid: not JSON",
        ),
        (
            Wire::Openai,
            r#"{"data":[{"index":0,"embedding":"AAAA"}]}"#,
            "invalid: not the expected shape",
        ),
        (
            Wire::Openai,
            r#"{"data":[{"index":0,"embedding":[1,null]}]}"#,
            "invalid: not the expected shape",
        ),
        (
            Wire::Openai,
            r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#,
            "appears twice",
        ),
        (
            Wire::Openai,
            r#"{"data":[{"index":5,"embedding":[1]}]}"#,
            "out of range",
        ),
        (
            Wire::Openai,
            r#"{"data":[{"index":-1,"embedding":[1]}]}"#,
            "invalid: not the expected shape",
        ),
        (
            Wire::Openai,
            r#"{"embeddings":[[1]]}"#,
            "invalid: not the expected shape",
        ),
        (
            Wire::Gemini,
            r#"{"embedding":{"values":[1]}}"#,
            "invalid: not the expected shape",
        ),
        (
            Wire::Ollama,
            r#"[[1,2]]"#,
            "invalid: not the expected shape",
        ),
        (
            Wire::Ollama,
            r#"{"error":"model \"x\" not found, try pulling it first"}"#,
            "provider: model \"x\" not found",
        ),
        (
            Wire::Openai,
            r#"{"error":{"message":"busy","type":"server_error"}}"#,
            "provider: busy",
        ),
    ];
    for (w, text, want) in cases {
        let got = parse(w, text).expect_err(text);
        assert!(got.contains(want), "{text}: {got}");
    }
}

#[test]
fn vectors_are_checked_then_normalized() {
    let v = wire::finish(vec![vec![3.0, 4.0], vec![0.0, -2.0]], 2, Some(2)).unwrap();
    assert_eq!(v, vec![vec![0.6, 0.8], vec![0.0, -1.0]]);
    type Case = (Vec<Vec<f32>>, usize, Option<u32>, Shape);
    let cases: [Case; 7] = [
        (vec![vec![1.0]], 2, None, Shape::Count { got: 1, want: 2 }),
        (
            vec![vec![1.0], vec![1.0]],
            1,
            None,
            Shape::Count { got: 2, want: 1 },
        ),
        (vec![vec![1.0], vec![]], 2, None, Shape::Empty { at: 1 }),
        (
            vec![vec![1.0, 2.0], vec![1.0]],
            2,
            None,
            Shape::Mixed { first: 2, other: 1 },
        ),
        (
            vec![vec![1.0, 2.0]],
            1,
            Some(3),
            Shape::Dimensions { got: 2, want: 3 },
        ),
        (
            vec![vec![1.0], vec![f32::INFINITY]],
            2,
            None,
            Shape::NotFinite { at: 1 },
        ),
        (vec![vec![0.0, 0.0]], 1, None, Shape::Zero { at: 0 }),
    ];
    for (vectors, want, dims, shape) in cases {
        assert_eq!(wire::finish(vectors, want, dims), Err(shape));
    }
    assert_eq!(wire::finish(Vec::new(), 0, Some(8)), Ok(Vec::new()));
    // A number past f32's range arrives as infinity.
    let big = parse(Wire::Ollama, r#"{"embeddings":[[1e39,1]]}"#).unwrap();
    assert_eq!(wire::finish(big, 1, None), Err(Shape::NotFinite { at: 0 }));
    // Tiny and huge finite values normalize without overflow or underflow to zero.
    let v = wire::finish(vec![vec![f32::MAX, f32::MAX], vec![1e-30, 0.0]], 2, None).unwrap();
    assert!((v[0][0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    assert_eq!(v[1], vec![1.0, 0.0]);
}

#[test]
fn shapes_read_well() {
    assert_eq!(
        Shape::Count { got: 1, want: 2 }.to_string(),
        "1 vectors for 2 inputs"
    );
    assert_eq!(
        Shape::Dimensions { got: 64, want: 32 }.to_string(),
        "vectors of 64 dimensions, not the 32 asked for"
    );
    assert_eq!(
        Shape::Zero { at: 0 }.to_string(),
        "a zero vector for input 1"
    );
}

// ---- batching -----------------------------------------------------------------------------

#[test]
fn batches_are_bounded_by_count_and_tokens() {
    assert_eq!(batches(&[], 10, 100), Vec::<std::ops::Range<usize>>::new());
    assert_eq!(batches(&[1, 1, 1, 1, 1], 2, 100), vec![0..2, 2..4, 4..5]);
    assert_eq!(batches(&[40, 40, 40, 10], 10, 100), vec![0..2, 2..4]);
    // An item over the token bound goes alone; its neighbours are not dragged along.
    assert_eq!(batches(&[10, 500, 10], 10, 100), vec![0..1, 1..2, 2..3]);
    assert_eq!(batches(&[100, 0, 1], 10, 100), vec![0..2, 2..3]);
    // A zero count still makes progress.
    assert_eq!(batches(&[1, 1], 0, 100), vec![0..1, 1..2]);
    assert_eq!(
        batches(&[usize::MAX, usize::MAX], 10, usize::MAX),
        vec![0..1, 1..2]
    );
}

#[test]
fn batches_cover_every_item_once_within_bounds() {
    let mut seed = 7u64;
    for _ in 0..200 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = (seed >> 33) as usize % 40;
        let tokens: Vec<usize> = (0..n)
            .map(|i| ((seed >> (i % 32)) % 300) as usize)
            .collect();
        let (count, max) = (
            1 + (seed >> 40) as usize % 7,
            50 + (seed >> 45) as usize % 400,
        );
        let bs = batches(&tokens, count, max);
        let mut next = 0;
        for b in &bs {
            assert_eq!(b.start, next);
            assert!(!b.is_empty() && b.len() <= count);
            let sum: usize = tokens[b.clone()].iter().sum();
            assert!(sum <= max || b.len() == 1, "{tokens:?} {bs:?}");
            next = b.end;
        }
        assert_eq!(next, n);
    }
}

#[test]
fn token_estimates_are_cautious() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("a"), 1);
    assert_eq!(estimate_tokens("four"), 2);
    assert!(estimate_tokens("Datenbanksicherung für Übergrößen") >= 10);
}

// ---- waiting ------------------------------------------------------------------------------

#[test]
fn waiting_ends_at_ctrl_c_and_when_the_worker_dies() {
    let (_tx, rx) = mpsc::sync_channel::<Result<u8>>(1);
    let started = Instant::now();
    assert!(matches!(wait(&rx, || true), Err(Error::Interrupted)));
    let calls = std::sync::atomic::AtomicU32::new(0);
    let stop = || calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 2;
    assert!(matches!(wait(&rx, stop), Err(Error::Interrupted)));
    assert!(started.elapsed() < Duration::from_secs(2));
    let (tx, rx) = mpsc::sync_channel::<Result<u8>>(1);
    drop(tx);
    let e = wait(&rx, || false).unwrap_err();
    assert!(e.to_string().contains("stopped unexpectedly"), "{e}");
    let (tx, rx) = mpsc::sync_channel::<Result<u8>>(1);
    tx.send(Ok(5)).unwrap();
    assert_eq!(wait(&rx, || false).unwrap(), 5);
}

// ---- round trips --------------------------------------------------------------------------

/// One scripted answer: status, extra header lines, body, and a pause before it.
struct Answer {
    status: u16,
    headers: &'static str,
    body: String,
    pause_ms: u64,
}

fn answer(status: u16, body: impl Into<String>) -> Answer {
    Answer {
        status,
        headers: "Content-Type: application/json\r\n",
        body: body.into(),
        pause_ms: 0,
    }
}

/// Requests as received: target, headers (lower-cased names), body.
type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>, Value)>>>;

/// A server on 127.0.0.1 that answers the N-th connection with the N-th answer.
fn serve(answers: Vec<Answer>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for a in answers {
            let Ok((conn, _)) = listener.accept() else {
                return;
            };
            let mut r = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let target = line.split_whitespace().nth(1).unwrap_or("").to_owned();
            let mut headers = Vec::new();
            loop {
                let mut h = String::new();
                r.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
                }
            }
            let len = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; len];
            r.read_exact(&mut body).unwrap();
            let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
            log.lock().unwrap().push((target, headers, json));
            std::thread::sleep(Duration::from_millis(a.pause_ms));
            let mut conn = conn;
            let _ = write!(
                conn,
                "HTTP/1.1 {} X\r\nConnection: close\r\nContent-Length: {}\r\n{}\r\n{}",
                a.status,
                a.body.len(),
                a.headers,
                a.body
            );
        }
    });
    (url, seen)
}

fn embedder(
    protocol: &str,
    base: &str,
    model: &str,
    dims: Option<u32>,
) -> (tempfile::TempDir, Embedder) {
    let (dir, cfg) = provider_config(protocol, base, json!({}));
    let e = Embedder::new(&format!("t:{model}"), dims, &cfg)
        .unwrap()
        .with_ui(Ui::new(true));
    (dir, e)
}

#[test]
fn round_trip_each_protocol() {
    let (url, seen) = serve(vec![
        answer(
            200,
            r#"{"data":[{"index":1,"embedding":[0,3]},{"index":0,"embedding":[4,0]}]}"#,
        ),
        answer(200, r#"{"embeddings":[{"values":[1,1]}]}"#),
        answer(200, r#"{"embeddings":[[0,0,2]]}"#),
        answer(200, r#"{"data":[{"index":0,"embedding":[5]}]}"#),
    ]);
    let (_a, e) = embedder(
        "openai",
        &format!("{url}/v1"),
        "text-embedding-3-small",
        Some(2),
    );
    let v = e
        .embed(&inputs(&["a", "b"]), Purpose::Document, None)
        .unwrap();
    assert_eq!(v, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
    let (_b, e) = embedder("gemini", &url, "gemini-embedding-001", None);
    let doc = [Input {
        text: "t",
        title: Some("T"),
    }];
    let v = e.embed(&doc, Purpose::Document, None).unwrap();
    assert!((v[0][0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    let (_c, e) = embedder("ollama", &url, "nomic-embed-text", None);
    assert_eq!(
        e.embed(&inputs(&["q"]), Purpose::Query, None).unwrap(),
        vec![vec![0.0, 0.0, 1.0]]
    );
    let (_d, e) = embedder("azure", &url, "dep", None);
    assert_eq!(
        e.embed(&inputs(&["z"]), Purpose::Query, None).unwrap(),
        vec![vec![1.0]]
    );

    let seen = seen.lock().unwrap();
    let targets: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        targets,
        [
            "/v1/embeddings",
            "/v1beta/models/gemini-embedding-001:batchEmbedContents",
            "/api/embed",
            "/openai/deployments/dep/embeddings?api-version=2024-10-21",
        ]
    );
    let h = |i: usize, k: &str| {
        seen[i]
            .1
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(h(0, "authorization"), Some(format!("Bearer {KEY}")));
    assert_eq!(h(1, "x-goog-api-key").as_deref(), Some(KEY));
    assert_eq!(h(3, "api-key").as_deref(), Some(KEY));
    assert_eq!(h(0, "content-type").as_deref(), Some("application/json"));
    assert_eq!(seen[0].2["dimensions"], 2);
    assert_eq!(seen[1].2["requests"][0]["title"], "T");
    assert_eq!(seen[2].2["input"], json!(["search_query: q"]));
    assert_eq!(seen[2].2["truncate"], false);
}

#[test]
fn rate_limits_and_server_errors_are_retried() {
    let (url, seen) = serve(vec![
        Answer {
            headers: "Retry-After: 0\r\n",
            ..answer(429, r#"{"error":{"message":"slow down"}}"#)
        },
        Answer {
            headers: "Retry-After: 0\r\n",
            ..answer(503, "upstream trouble")
        },
        answer(200, r#"{"embeddings":[[1,0]]}"#),
    ]);
    let (_d, e) = embedder("ollama", &url, "m", None);
    assert_eq!(
        e.embed(&inputs(&["x"]), Purpose::Document, None).unwrap(),
        vec![vec![1.0, 0.0]]
    );
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[test]
fn retries_end_with_a_clear_error() {
    let busy = || Answer {
        headers: "Retry-After: 0\r\n",
        ..answer(500, r#"{"error":{"message":"boom"}}"#)
    };
    let (url, seen) = serve(vec![busy(), busy(), busy(), busy()]);
    let (_d, e) = embedder("openai", &url, "m", None);
    let err = e
        .embed(&inputs(&["x"]), Purpose::Document, None)
        .unwrap_err();
    assert_eq!(seen.lock().unwrap().len(), 3, "one try and two retries");
    assert!(
        err.to_string().contains("t had a server error (500: boom)"),
        "{err}"
    );
}

#[test]
fn a_rejected_key_names_its_variable_and_is_never_shown() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let (url, seen) = serve(vec![answer(401, body)]);
    let (dir, cfg) = config(
        &json!({"providers": {"t": {"base_url": url, "api_key_env": "AI_TEST_EMBED_KEY_VAR", "api_key": KEY}}}),
    );
    let _ = dir;
    // The variable is unset, the config's key is used; messages name the variable.
    let e = Embedder::new("t:m", None, &cfg)
        .unwrap()
        .with_ui(Ui::new(true));
    let err = e
        .embed(&inputs(&["x"]), Purpose::Document, None)
        .unwrap_err();
    assert_eq!(err.exit_code(), crate::error::code::CONFIG);
    assert!(err.to_string().contains("rejected the API key"), "{err}");
    assert!(!err.to_string().contains(KEY), "{err}");
    assert!(err.hint_text().unwrap().contains("AI_TEST_EMBED_KEY_VAR"));
    assert_eq!(seen.lock().unwrap().len(), 1, "a 401 is not retried");
}

#[test]
fn bad_answers_are_errors_naming_the_provider_not_retried() {
    let html = Answer {
        headers: "Content-Type: text/html\r\n",
        ..answer(200, "<html><title>Sign in</title></html>")
    };
    let cases: Vec<(Answer, Option<u32>, &str, &str)> = vec![
        (
            html,
            None,
            "invalid response from t: an HTML page, not an Ollama server: \"Sign in\"",
            "base URL",
        ),
        (
            answer(200, "{\"embeddings\": [[1,2],[3]]}"),
            None,
            "invalid embeddings from t for m: 2 vectors for 1 inputs",
            "base URL",
        ),
        (
            answer(200, "{\"embeddings\": [[1,2,3]]}"),
            Some(2),
            "vectors of 3 dimensions, not the 2 asked for",
            "--dimensions 3",
        ),
        (
            answer(200, "{\"embeddings\": [[0,0]]}"),
            None,
            "a zero vector",
            "base URL",
        ),
        (
            answer(200, "{\"embeddings\": [[1e39]]}"),
            None,
            "not finite",
            "base URL",
        ),
        (
            answer(200, "{\"embed"),
            None,
            "invalid response from t: not JSON",
            "base URL",
        ),
        (
            answer(200, "{\"vectors\": []}"),
            None,
            "not the expected shape",
            "base URL",
        ),
        (
            answer(
                404,
                r#"{"error":"model \"m\" not found, try pulling it first"}"#,
            ),
            None,
            "does not know the model 'm'",
            "ollama pull m",
        ),
        (
            answer(
                400,
                r#"{"error":"the input length exceeds the context length"}"#,
            ),
            None,
            "a passage is too long for m",
            "tokens",
        ),
        (
            answer(
                200,
                r#"{"error":{"message":"no such model","type":"invalid_request_error"}}"#,
            ),
            None,
            "t reported an error: no such model",
            "serves embeddings",
        ),
    ];
    for (a, dims, msg, hint) in cases {
        let (url, seen) = serve(vec![a]);
        let (_d, e) = embedder("ollama", &url, "m", dims);
        let err = e
            .embed(&inputs(&["x"]), Purpose::Document, None)
            .unwrap_err();
        assert!(err.to_string().contains(msg), "{msg}: {err}");
        assert!(
            err.hint_text().unwrap_or("").contains(hint),
            "{hint}: {:?}",
            err.hint_text()
        );
        assert_eq!(seen.lock().unwrap().len(), 1, "{msg}: not retried");
    }
}

#[test]
fn an_unsupported_dimensions_answer_is_a_usage_error() {
    let bodies = [
        r#"{"error":{"message":"This model does not support specifying dimensions.","type":"invalid_request_error"}}"#,
        r#"{"error":{"code":400,"message":"Requested output dimensionality exceeds the maximum","status":"INVALID_ARGUMENT"}}"#,
    ];
    for body in bodies {
        let (url, seen) = serve(vec![answer(400, body)]);
        let (_d, e) = embedder("openai", &url, "text-embedding-ada-002", Some(64));
        let err = e
            .embed(&inputs(&["x"]), Purpose::Document, None)
            .unwrap_err();
        assert_eq!(err.exit_code(), crate::error::code::USAGE, "{err}");
        assert!(
            err.to_string().contains("vectors of 64 dimensions"),
            "{err}"
        );
        assert!(err.hint_text().unwrap().contains("--dimensions"));
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}

#[test]
fn the_deadline_bounds_the_request() {
    let slow = Answer {
        pause_ms: 3000,
        ..answer(200, r#"{"data":[{"index":0,"embedding":[1]}]}"#)
    };
    let (url, _seen) = serve(vec![slow]);
    assert!(later(Instant::now(), Duration::MAX) > Instant::now());
    let (_d, e) = embedder("openai", &url, "m", None);
    let started = Instant::now();
    let err = e
        .embed(
            &inputs(&["x"]),
            Purpose::Document,
            Some(started + Duration::from_millis(300)),
        )
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    assert!(err.to_string().contains("no answer from t"), "{err}");
    // A deadline already past sends nothing.
    let err = e
        .embed(&inputs(&["x"]), Purpose::Document, Some(Instant::now()))
        .unwrap_err();
    assert!(err.to_string().contains("no time is left"), "{err}");
}

#[test]
fn empty_inputs_and_big_batches() {
    let (url, seen) = serve(vec![
        answer(200, r#"{"embeddings":[[1]]}"#),
        answer(200, r#"{"embeddings":[[2]]}"#),
    ]);
    let (_d, e) = embedder("ollama", &url, "m", None);
    assert_eq!(
        e.embed(&[], Purpose::Document, None).unwrap(),
        Vec::<Vec<f32>>::new()
    );
    let err = e
        .embed(&inputs(&["a", " \n"]), Purpose::Document, None)
        .unwrap_err();
    assert!(err.to_string().contains("input 2 of 2 is empty"), "{err}");
    assert!(seen.lock().unwrap().is_empty());
    // More than max_batch inputs go in several requests (here the server answers two of one).
    let many: Vec<String> = (0..65).map(|i| format!("t{i}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let err = e
        .embed(&inputs(&refs), Purpose::Document, None)
        .unwrap_err();
    assert!(err.to_string().contains("1 vectors for 64 inputs"), "{err}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].2["input"].as_array().unwrap().len(), 64);
}

#[test]
fn a_huge_timeout_in_config_does_not_overflow() {
    let (url, _seen) = serve(vec![
        answer(200, r#"{"embeddings":[[2]]}"#),
        answer(200, r#"{"embeddings":[[3]]}"#),
    ]);
    let (_d, cfg) = provider_config("ollama", &url, json!({"timeout": 1e18}));
    let e = Embedder::new("t:m", None, &cfg)
        .unwrap()
        .with_ui(Ui::new(true));
    let soon = Some(Instant::now() + Duration::from_secs(30));
    for deadline in [soon, None] {
        let v = e.embed(&inputs(&["x"]), Purpose::Query, deadline).unwrap();
        assert_eq!(v, vec![vec![1.0]]);
    }
}
