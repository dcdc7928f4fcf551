//! `ai init` lists OpenRouter's free models and Ollama's local ones over HTTP; `ai list` shows
//! which HTTP providers have a key.

use serde_json::{Value, json};

use crate::support::*;

fn openrouter_models() -> Reply {
    Reply::json(
        200,
        &json!({"data": [
            {"id": "vendor/some-model:free", "name": "Some Model (free)", "context_length": 8192},
            {"id": "vendor/paid-model", "name": "Paid", "context_length": 8192},
            {"id": "other/tiny-thing:free", "name": "Tiny", "context_length": 4096},
            {"id": "third/kept-alias:free", "name": "Kept", "context_length": 4096}
        ]})
        .to_string(),
    )
}

#[test]
fn init_adds_openrouter_free_models() {
    let s = Server::start(vec![openrouter_models()]);
    let mut env = Env::empty();
    env.set("OPENROUTER_API_KEY", KEY)
        .set("OPENROUTER_BASE_URL", &format!("{}/api/v1", s.url()))
        // Nothing answers here, so no local Ollama is asked.
        .set("OLLAMA_HOST", &closed_port_url());
    env.write_config(r#"{"aliases":{"kept-alias":["echo","echo"]}}"#);
    let out = env.run(&["init"]);
    out.ok();

    let r = s.only();
    assert_eq!(r.method, "GET");
    assert_eq!(r.target, "/api/v1/models");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    let config = env.config();
    let aliases = &config["aliases"];
    assert_eq!(
        aliases["some-model"],
        json!(["openrouter", "vendor/some-model:free"])
    );
    assert_eq!(
        aliases["tiny-thing"],
        json!(["openrouter", "other/tiny-thing:free"])
    );
    assert!(aliases.get("paid-model").is_none(), "{config:#}");
    assert!(
        !aliases
            .as_object()
            .expect("aliases")
            .values()
            .any(|v| v[1] == "vendor/paid-model"),
        "{config:#}"
    );
    // An alias the user already had is left alone.
    assert_eq!(aliases["kept-alias"], json!(["echo", "echo"]));

    // The new alias works.
    let chat = Server::start(vec![Reply::sse(&[&oa_stream("free answer", 1, 1)])]);
    env.set("OPENROUTER_BASE_URL", &format!("{}/api/v1", chat.url()));
    let out = env.run(&["some-model", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "free answer\n");
    assert_eq!(chat.only().json()["model"], "vendor/some-model:free");
}

#[test]
fn init_adds_ollama_models_over_http() {
    let s = Server::start(vec![Reply::json(
        200,
        &json!({"models": [
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 1, "digest": "d"},
            {"name": "mistral-small:24b", "model": "mistral-small:24b", "size": 1, "digest": "e"}
        ]})
        .to_string(),
    )]);
    let mut env = Env::empty();
    env.set("OLLAMA_HOST", &s.host_port());
    let out = env.run(&["init"]);
    out.ok();
    let r = s.only();
    assert_eq!(r.method, "GET");
    assert_eq!(r.target, "/api/tags");

    let config = env.config();
    let aliases = &config["aliases"];
    let provider = aliases["llama3.2"][0].as_str().unwrap_or("");
    // The HTTP API, unless an `ollama` CLI happens to be installed on this machine.
    assert!(
        provider == "ollama-api" || provider == "ollama",
        "{config:#}"
    );
    assert_eq!(aliases["llama3.2"][1], "llama3.2:latest");
    assert_eq!(aliases["mistral-small-24b"][1], "mistral-small:24b");
    assert!(out.stdout.contains("llama3.2"), "{out:#?}");
}

#[test]
fn init_survives_a_failing_models_list() {
    let s = Server::start(vec![Reply::json(
        401,
        r#"{"error":{"code":401,"message":"No auth credentials found"}}"#,
    )]);
    let mut env = Env::empty();
    env.set("OPENROUTER_API_KEY", KEY)
        .set("OPENROUTER_BASE_URL", &s.url())
        .set("OLLAMA_HOST", &closed_port_url());
    let out = env.run(&["init"]);
    out.ok();
    assert!(
        out.stdout.contains("openrouter models: not fetched"),
        "{out:#?}"
    );
    assert!(env.home.join("config.json").exists());
}

fn rows(out: &Out) -> Vec<Value> {
    out.json().as_array().expect("a JSON array").clone()
}

#[test]
fn list_shows_which_providers_have_keys() {
    // Ollama needs no key, only a server that listens: `ai list` checks that it accepts a
    // connection (a listener on loopback here; the alias with a closed port is not ready).
    let ollama = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
    let mut env = Env::empty();
    env.set("OPENROUTER_API_KEY", KEY).set(
        "OLLAMA_HOST",
        &format!("http://{}", ollama.local_addr().expect("its address")),
    );
    env.write_config(
        r#"{"aliases":{"gpt4o":["openai","gpt-4o"],"local":["ollama-api","llama3.2"]}}"#,
    );

    let out = env.run(&["list", "--json"]);
    out.ok();
    let rows = rows(&out);
    let openrouter: Vec<&Value> = rows
        .iter()
        .filter(|r| r["provider"] == "openrouter")
        .collect();
    assert!(!openrouter.is_empty(), "{rows:#?}");
    for r in &openrouter {
        assert_eq!(r["usable"], true, "{r}");
        assert!(
            r["status"]
                .as_str()
                .unwrap_or("")
                .contains("OPENROUTER_API_KEY"),
            "{r}"
        );
    }
    let gpt = rows
        .iter()
        .find(|r| r["alias"] == "gpt4o")
        .expect("gpt4o row");
    assert_eq!(gpt["provider"], "openai");
    assert_eq!(gpt["usable"], false);
    assert!(
        gpt["status"]
            .as_str()
            .unwrap_or("")
            .contains("OPENAI_API_KEY"),
        "{gpt}"
    );
    let local = rows
        .iter()
        .find(|r| r["alias"] == "local")
        .expect("local row");
    assert_eq!(local["usable"], true, "Ollama needs no key: {local}");

    let out = env.run(&["list"]);
    out.ok();
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("gpt4o"))
        .expect("gpt4o line");
    assert!(line.contains("needs OPENAI_API_KEY"), "{line}");
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("openrouter"))
        .expect("openrouter line");
    assert!(line.contains("ready"), "{line}");
}
