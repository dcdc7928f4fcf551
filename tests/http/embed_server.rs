//! The fake embeddings API of `support::embedding` and `Server::respond`, checked on their own:
//! the tests of `ai kb` trust them to answer each protocol as the real services do.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support::*;

/// POST `body` to `url`; the status and the JSON answer.
fn post(url: &str, body: &Value) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .post(url)
        .header("content-type", "application/json")
        .send(body.to_string())
        .expect("the test server answers");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().expect("a body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("a vector")
        .iter()
        .map(|x| x.as_f64().expect("a number") as f32)
        .collect()
}

#[test]
fn vectors_are_deterministic_normalized_and_similar_for_shared_words() {
    let a = embedding::vector("Backups of the database every night", 64);
    assert_eq!(
        a,
        embedding::vector("backups OF the Database, every night!", 64)
    );
    assert_eq!(a.len(), 64);
    let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5);
    let near = embedding::vector("database backups", 64);
    let far = embedding::vector("Rezept für Apfelkuchen", 64);
    assert!(embedding::cosine(&a, &near) > embedding::cosine(&a, &far) + 0.2);
    // Task prefixes do not count; texts without words still get a unit vector.
    assert_eq!(
        embedding::vector("search_query: database backups", 64),
        near
    );
    let empty = embedding::vector("", 8);
    assert_eq!(empty.iter().filter(|x| **x == 1.0).count(), 1);
    assert_eq!(embedding::vector("…", 0).len(), 1);
}

#[test]
fn the_three_protocols_are_answered_by_path() {
    let s = embedding::server();
    let url = s.url();

    let (status, r) = post(
        &format!("{url}/v1/embeddings"),
        &json!({"model": "m", "input": ["alpha beta", "gamma"], "dimensions": 16}),
    );
    assert_eq!(status, 200);
    assert_eq!(r["data"][1]["index"], 1);
    assert_eq!(
        floats(&r["data"][0]["embedding"]),
        embedding::vector("alpha beta", 16)
    );

    let (status, r) = post(
        &format!("{url}/openai/deployments/d/embeddings?api-version=2024-10-21"),
        &json!({"input": "one"}),
    );
    assert_eq!(status, 200);
    assert_eq!(floats(&r["data"][0]["embedding"]).len(), embedding::DIMS);

    let (status, r) = post(
        &format!("{url}/v1beta/models/gemini-embedding-001:batchEmbedContents"),
        &json!({"requests": [
            {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "alpha"}]}, "taskType": "RETRIEVAL_QUERY", "outputDimensionality": 8},
            {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "beta"}]}, "taskType": "RETRIEVAL_QUERY"},
        ]}),
    );
    assert_eq!(status, 200);
    assert_eq!(
        floats(&r["embeddings"][0]["values"]),
        embedding::vector("alpha", 8)
    );
    assert_eq!(floats(&r["embeddings"][1]["values"]).len(), embedding::DIMS);

    let (status, r) = post(
        &format!("{url}/api/embed"),
        &json!({"model": "nomic-embed-text", "input": ["search_document: gamma"], "truncate": false, "dimensions": 4}),
    );
    assert_eq!(status, 200);
    assert_eq!(floats(&r["embeddings"][0]), embedding::vector("gamma", 4));

    let (status, _) = post(&format!("{url}/v1/chat/completions"), &json!({}));
    assert_eq!(status, 404);

    assert_eq!(
        embedding::hits(&s),
        4,
        "the 404 is not an embedding request"
    );
    assert_eq!(
        embedding::texts(&s),
        [
            "alpha beta",
            "gamma",
            "one",
            "alpha",
            "beta",
            "search_document: gamma"
        ]
    );
    assert_eq!(embedding::requests(&s)[3].target, "/api/embed");
}

#[test]
fn answers_can_be_wrapped_to_misbehave() {
    let calls = AtomicUsize::new(0);
    let s = Server::respond(move |req| match calls.fetch_add(1, Ordering::SeqCst) {
        0 => Reply::json(429, r#"{"error":{"message":"slow down"}}"#).header("Retry-After", "0"),
        1 => embedding::answer_forcing(req, Some(3)),
        2 => panic!("a responder that fails an assertion"),
        _ => embedding::answer(req),
    });
    let url = format!("{}/api/embed", s.url());
    let body = json!({"model": "m", "input": ["x"], "dimensions": 5});
    assert_eq!(post(&url, &body).0, 429);
    let (_, r) = post(&url, &body);
    assert_eq!(
        floats(&r["embeddings"][0]).len(),
        3,
        "forced, not the 5 asked for"
    );
    assert_eq!(
        post(&url, &body).0,
        598,
        "a panicking responder answers 598"
    );
    let (status, r) = post(&url, &body);
    assert_eq!((status, floats(&r["embeddings"][0]).len()), (200, 5));
    assert_eq!(s.requests().len(), 4);
}
