//! Knowledge bases with embeddings, end to end: `ai kb add … --embed PROVIDER:MODEL`, `ai kb
//! sync`, `ai kb search … --json` against the fake embeddings API of `support::embedding`, for
//! each protocol (the exact requests as the server recorded them), and the failures: a missing
//! key, a 429 before success, vectors of the wrong size, a provider without embeddings.
//!
//! Not registered in `tests/main.rs` yet: it waits for the `ai kb` commands. To enable it add
//! `#[path = "suite/kb_embed.rs"] mod kb_embed;` there.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::support::*;

const QUERY: &str = "apple pie with butter";

/// A small Zettelkasten, German and English, linking to each other; its folder.
fn notes(env: &Env) -> PathBuf {
    env.project_file(
        "notes/01_001_Datenbanksicherung_e0d27e3ad.md",
        "# Datenbanksicherung\n\nJede Nacht sichern wir die Datenbank mit pg_dump auf das NAS.\n",
    );
    env.project_file(
        "notes/01_002_Backups_of_the_database_a1b2c3d4e.md",
        "# Backups of the database\n\nEvery night the database is backed up with pg_dump to the \
         NAS. German notes: [Datenbanksicherung](01_001_Datenbanksicherung_e0d27e3ad.md).\n",
    );
    env.project_file(
        "notes/02_001_Apple_pie_recipe_f00dcafe1.md",
        "# Apple pie recipe\n\nApples, flour, butter and sugar; bake the pie for forty minutes.\n",
    );
    env.project.join("notes")
}

/// `ai kb add notes DIR --embed SPEC --dimensions 64`.
fn add(env: &Env, spec: &str) -> Out {
    let dir = notes(env);
    let dir = dir.to_str().expect("a UTF-8 temp path");
    env.run(&[
        "kb",
        "add",
        "notes",
        dir,
        "--embed",
        spec,
        "--dimensions",
        "64",
    ])
}

/// `ai kb search notes QUERY --json`, which must succeed; its results.
fn search(env: &Env) -> Vec<Value> {
    let out = env
        .run(&["kb", "search", "notes", QUERY, "--json"])
        .success();
    let results = out.json();
    let list = results.as_array().expect("a JSON array").clone();
    assert!(!list.is_empty(), "{out:#?}");
    for r in &list {
        for field in ["id", "title", "ordering", "path", "score", "passage"] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
    }
    list
}

fn body(r: &Recorded) -> Value {
    r.json()
}

/// Every text of the notes reached the server (in some passage).
fn assert_notes_embedded(server: &Server) {
    let sent = embedding::texts(server).join("\n");
    for needle in [
        "pg_dump auf das NAS",
        "backed up with pg_dump",
        "forty minutes",
    ] {
        assert!(sent.contains(needle), "{needle} not sent: {sent}");
    }
}

#[test]
fn openai_sync_and_search_send_the_openai_shape() {
    let server = embedding::server();
    let env = Env::for_provider("openai", &server);
    add(&env, "openai:text-embedding-3-small").success();
    let docs = embedding::requests(&server);
    assert!(!docs.is_empty());
    for r in &docs {
        assert_eq!(r.method, "POST");
        assert_eq!(r.target, "/v1/embeddings");
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        let b = body(r);
        assert_eq!(b["model"], "text-embedding-3-small");
        assert_eq!(b["dimensions"], 64);
        assert_eq!(b["encoding_format"], "float");
        assert!(b["input"].as_array().is_some_and(|a| !a.is_empty()), "{b}");
    }
    assert_notes_embedded(&server);

    let results = search(&env);
    assert_eq!(results[0]["id"], "f00dcafe1", "{results:#?}");
    let last = embedding::requests(&server)
        .pop()
        .expect("the query's request");
    assert_eq!(body(&last)["input"], serde_json::json!([QUERY]));
}

#[test]
fn a_sync_with_nothing_changed_sends_no_embedding_request() {
    let server = embedding::server();
    let env = Env::for_provider("openai", &server);
    add(&env, "openai:text-embedding-3-small").success();
    let before = embedding::hits(&server);
    env.run(&["kb", "sync", "notes"]).success();
    assert_eq!(embedding::hits(&server), before);
}

#[test]
fn gemini_sync_and_search_send_the_gemini_shape() {
    let server = embedding::server();
    let env = Env::for_provider("gemini-api", &server);
    add(&env, "gemini:gemini-embedding-001").success();
    let docs = embedding::requests(&server);
    assert!(!docs.is_empty());
    let mut titled = 0;
    for r in &docs {
        assert_eq!(
            r.target,
            "/v1beta/models/gemini-embedding-001:batchEmbedContents"
        );
        assert_eq!(r.header("x-goog-api-key"), Some(KEY));
        assert_eq!(r.header("authorization"), None);
        let b = body(r);
        let requests = b["requests"].as_array().expect("requests");
        assert!(!requests.is_empty() && requests.len() <= 100, "{b}");
        for q in requests {
            assert_eq!(q["model"], "models/gemini-embedding-001");
            assert_eq!(q["taskType"], "RETRIEVAL_DOCUMENT");
            assert_eq!(q["outputDimensionality"], 64);
            titled += usize::from(q["title"].is_string());
        }
    }
    assert!(titled > 0, "documents carry their note's title");
    assert_notes_embedded(&server);

    let results = search(&env);
    assert_eq!(results[0]["id"], "f00dcafe1", "{results:#?}");
    let last = body(&embedding::requests(&server).pop().expect("the query"));
    let q = &last["requests"][0];
    assert_eq!(q["taskType"], "RETRIEVAL_QUERY");
    assert_eq!(q["content"]["parts"][0]["text"], QUERY);
    assert!(q.get("title").is_none(), "{q}");
}

#[test]
fn ollama_sync_and_search_send_the_ollama_shape() {
    let server = embedding::server();
    let env = Env::for_provider("ollama-api", &server);
    add(&env, "ollama:nomic-embed-text").success();
    let docs = embedding::requests(&server);
    assert!(!docs.is_empty());
    for r in &docs {
        assert_eq!(r.target, "/api/embed");
        assert_eq!(r.header("authorization"), None);
        let b = body(r);
        assert_eq!(b["model"], "nomic-embed-text");
        assert_eq!(b["truncate"], false);
        assert_eq!(b["dimensions"], 64);
        for t in b["input"].as_array().expect("input") {
            // nomic-embed-text was trained with task prefixes.
            assert!(
                t.as_str()
                    .is_some_and(|t| t.starts_with("search_document: ")),
                "{t}"
            );
        }
    }
    assert_notes_embedded(&server);

    let results = search(&env);
    assert_eq!(results[0]["id"], "f00dcafe1", "{results:#?}");
    let last = body(&embedding::requests(&server).pop().expect("the query"));
    assert_eq!(
        last["input"],
        serde_json::json!([format!("search_query: {QUERY}")])
    );
}

#[test]
fn azure_sync_sends_the_deployment_path_and_api_key_header() {
    let server = embedding::server();
    let env = Env::for_provider("azure", &server);
    add(&env, "azure:emb-deploy").success();
    let docs = embedding::requests(&server);
    assert!(!docs.is_empty());
    for r in &docs {
        assert!(
            r.target
                .starts_with("/openai/deployments/emb-deploy/embeddings?api-version="),
            "{}",
            r.target
        );
        assert_eq!(r.header("api-key"), Some(KEY));
        assert_eq!(r.header("authorization"), None);
        assert_eq!(body(r)["model"], "emb-deploy");
    }
    assert_eq!(search(&env)[0]["id"], "f00dcafe1");
}

#[test]
fn a_missing_key_names_its_variable_and_sends_nothing() {
    let server = embedding::server();
    let mut env = Env::empty();
    env.set("OPENAI_BASE_URL", &format!("{}/v1", server.url()));
    let out = add(&env, "openai:text-embedding-3-small").code(3);
    assert!(out.error().contains("no API key for openai"), "{out:#?}");
    assert!(
        out.stderr.contains("hint:") && out.stderr.contains("OPENAI_API_KEY"),
        "{out:#?}"
    );
    assert_eq!(embedding::hits(&server), 0);
}

#[test]
fn a_rate_limit_is_waited_out() {
    let calls = AtomicUsize::new(0);
    let server = Server::respond(move |req| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::json(
                429,
                r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
            )
            .header("Retry-After", "0")
        } else {
            embedding::answer(req)
        }
    });
    let env = Env::for_provider("openai", &server);
    let out = add(&env, "openai:text-embedding-3-small").success();
    assert!(out.stderr.contains("429"), "the retry is told: {out:#?}");
    let reqs = embedding::requests(&server);
    assert!(reqs.len() >= 2);
    // The retry sends the same request again.
    assert_eq!(reqs[0].body, reqs[1].body);
    assert_notes_embedded(&server);
    assert_eq!(search(&env)[0]["id"], "f00dcafe1");
}

#[test]
fn vectors_of_another_size_than_asked_are_a_clear_error() {
    let server = Server::respond(|req| embedding::answer_forcing(req, Some(32)));
    let env = Env::for_provider("openai", &server);
    let out = add(&env, "openai:text-embedding-3-small").code(1);
    let e = out.error();
    assert!(e.contains("openai"), "{e}");
    assert!(e.contains("32 dimensions") && e.contains("64"), "{e}");
    assert!(out.stderr.contains("--dimensions 32"), "{out:#?}");
    assert_eq!(embedding::hits(&server), 1, "not retried");
}

#[test]
fn a_provider_without_embeddings_is_a_usage_error() {
    let server = embedding::server();
    let env = Env::for_provider("anthropic", &server);
    let out = add(&env, "anthropic:claude-sonnet-4-5").code(2);
    assert!(out.error().contains("anthropic"), "{out:#?}");
    assert!(
        out.stderr.contains("openai"),
        "the hint lists those that embed: {out:#?}"
    );
    assert_eq!(server.requests().len(), 0);
}

/// The embeddings API as OpenAI answers for `text-embedding-ada-002` (`refuse_size`): any
/// `dimensions` is refused with 400. Other paths (the chat model) answer a short streamed
/// reply. Once `refuse` is set, every embedding request is refused.
fn ada(refuse_size: bool, refuse: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Server {
    Server::respond(move |req| {
        if !req.target.ends_with("/embeddings") {
            return Reply::sse(&[&oa_stream("A grounded answer.", 1, 1)]);
        }
        let b = req.json();
        if (refuse_size && b.get("dimensions").is_some()) || refuse.load(Ordering::SeqCst) {
            return Reply::json(
                400,
                r#"{"error":{"message":"This model does not support specifying dimensions.","type":"invalid_request_error","param":null,"code":null}}"#,
            );
        }
        embedding::answer(req)
    })
}

#[test]
fn queries_send_dimensions_only_when_indexing_did() {
    // I3-1: indexing sent no size, every query sent the recorded one, and ada-002 refused it.
    let server = ada(true, Default::default());
    let env = Env::for_provider("openai", &server);
    let dir = notes(&env);
    env.run(&[
        "kb",
        "add",
        "notes",
        dir.to_str().unwrap(),
        "--embed",
        "openai:text-embedding-ada-002",
    ])
    .success();
    let out = env
        .run(&["kb", "search", "notes", QUERY, "--json"])
        .success();
    assert!(!out.stderr.contains("keywords only"), "{out:#?}");
    assert_eq!(out.json()[0]["id"], "f00dcafe1", "{out:#?}");
    let sent = embedding::requests(&server);
    assert_eq!(
        body(sent.last().unwrap())["input"],
        serde_json::json!([QUERY])
    );
    for r in &sent {
        assert!(body(r).get("dimensions").is_none(), "{}", body(r));
    }
}

#[test]
fn a_query_that_cannot_be_embedded_is_searched_by_keywords_with_a_warning() {
    // I3-1: a grounded turn exited 2 before the model was asked.
    let refuse = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = ada(false, refuse.clone());
    let env = Env::for_provider("openai", &server);
    add(&env, "openai:text-embedding-3-small").success();
    refuse.store(true, Ordering::SeqCst);
    let out = env
        .run(&["kb", "search", "notes", "apple pie", "--json"])
        .success();
    assert!(out.stderr.contains("by keywords only"), "{out:#?}");
    assert_eq!(out.json()[0]["id"], "f00dcafe1", "{out:#?}");
    let out = env
        .run(&["openai:gpt-test", "--kb", "notes", "apple pie?"])
        .success();
    assert_eq!(out.stdout, "A grounded answer.\n");
    assert!(out.stderr.contains("by keywords only"), "{out:#?}");
    let chat = server
        .requests()
        .into_iter()
        .rfind(|r| r.target.ends_with("/chat/completions"))
        .expect("the model was asked");
    assert!(
        chat.json().to_string().contains("forty minutes"),
        "not grounded"
    );
}

#[test]
fn a_bases_task_says_how_passages_and_queries_are_told_apart() {
    // I3-8: e5 servers that pick the form by `input_type` got ai's prefix on top of their own.
    for (task, model, passage, query, input_type) in [
        (
            "input_type",
            "multilingual-e5-small",
            "",
            "",
            Some(("passage", "query")),
        ),
        ("none", "multilingual-e5-small", "", "", None),
        ("prefix", "my-embedder", "passage: ", "query: ", None),
        (
            "prefix",
            "nomic-embed-text",
            "search_document: ",
            "search_query: ",
            None,
        ),
    ] {
        let server = embedding::server();
        let env = Env::for_provider("openai", &server);
        let dir = notes(&env);
        env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
            .success();
        let mut config = env.config();
        config["kb"]["bases"]["notes"]["embed"] = format!("openai:{model}").into();
        config["kb"]["bases"]["notes"]["task"] = task.into();
        env.write_config(&config.to_string());
        env.run(&["kb", "sync", "--full", "notes"]).success();
        search(&env);
        let sent = embedding::requests(&server);
        let (docs, q) = sent.split_at(sent.len() - 1);
        for r in docs {
            let b = body(r);
            for text in b["input"].as_array().unwrap() {
                let text = text.as_str().unwrap();
                assert!(text.starts_with(passage), "{task} {model}: {text:?}");
                if passage.is_empty() {
                    assert!(
                        !text.starts_with("passage: ") && !text.starts_with("query: "),
                        "{text:?}"
                    );
                }
            }
            assert_eq!(
                b.get("input_type").and_then(Value::as_str),
                input_type.map(|t| t.0),
                "{b}"
            );
        }
        let b = body(&q[0]);
        assert_eq!(
            b["input"],
            serde_json::json!([format!("{query}{QUERY}")]),
            "{task} {model}"
        );
        assert_eq!(
            b.get("input_type").and_then(Value::as_str),
            input_type.map(|t| t.1),
            "{b}"
        );
    }
}
