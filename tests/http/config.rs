//! Where providers get their base URL and key: environment, `<home>/.env`, config.json with
//! `${VAR}`, and OpenAI-compatible servers declared in config.

use serde_json::json;

use crate::support::*;

#[test]
fn vars_in_api_key_and_base_url() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("expanded", 1, 1)])]);
    let mut env = Env::empty();
    env.set("MY_OPENAI_KEY", KEY)
        .set("MY_OPENAI_BASE", &format!("{}/v1", s.url()));
    env.write_config(
        r#"{"providers":{"openai":{"base_url":"${MY_OPENAI_BASE}","api_key":"${MY_OPENAI_KEY}"}}}"#,
    );
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "expanded\n");
    let r = s.only();
    assert_eq!(r.target, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn dotenv_in_home_supplies_the_key() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("from dotenv", 1, 1)])]);
    let mut env = Env::empty();
    env.set("OPENAI_BASE_URL", &format!("{}/v1", s.url()));
    std::fs::write(
        env.home.join(".env"),
        format!("# keys\nexport OPENAI_API_KEY=\"{KEY}\"\n"),
    )
    .expect("write .env");
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "from dotenv\n");
    assert_eq!(
        s.only().header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn the_environment_wins_over_dotenv() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("env wins", 1, 1)])]);
    let mut env = Env::empty();
    env.set("OPENAI_BASE_URL", &format!("{}/v1", s.url()))
        .set("OPENAI_API_KEY", KEY);
    std::fs::write(
        env.home.join(".env"),
        "OPENAI_API_KEY=sk-from-dotenv-0000\n",
    )
    .expect("write .env");
    env.run(&["openai:gpt-test", "hi"]).ok();
    assert_eq!(
        s.only().header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn dotenv_supplies_the_base_url_too() {
    let s = Server::start(vec![Reply::sse(&[&format!(
        "{}{}{}",
        an_start(1),
        an_text("via dotenv"),
        an_end(1)
    )])]);
    let env = Env::empty();
    std::fs::write(
        env.home.join(".env"),
        format!("ANTHROPIC_API_KEY={KEY}\nANTHROPIC_BASE_URL={}\n", s.url()),
    )
    .expect("write .env");
    let out = env.run(&["anthropic:claude-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "via dotenv\n");
    assert_eq!(s.only().header("x-api-key"), Some(KEY));
}

#[test]
fn environment_base_url_overrides_config() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("from env url", 1, 1)])]);
    let env = Env::for_provider("openai", &s);
    env.write_config(&format!(
        r#"{{"providers":{{"openai":{{"base_url":"{}/v1"}}}}}}"#,
        closed_port_url()
    ));
    let out = env.run(&["openai:gpt-test", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "from env url\n");
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn a_declared_compatible_provider() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("local model", 5, 2)])]);
    let mut env = Env::empty();
    env.set("LMSTUDIO_KEY", KEY);
    env.write_config(&format!(
        r#"{{"providers":{{"lmstudio":{{"base_url":"{}/v1/","api_key_env":"LMSTUDIO_KEY","headers":{{"X-Client":"tests"}}}}}}}}"#,
        s.url()
    ));
    let out = env.run(&["lmstudio:qwen", "--system", "be brief", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "local model\n");
    let r = s.only();
    assert_eq!(r.target, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("x-client"), Some("tests"));
    let b = r.json();
    assert_eq!(b["model"], "qwen");
    assert_eq!(
        b["messages"][0],
        json!({"role":"system","content":"be brief"})
    );
    assert_eq!(b["max_tokens"], 4096);
    assert_eq!(b["stream"], true);
    let m = env.only_messages();
    assert_eq!(m[1]["provider"], "lmstudio");
    assert_eq!(m[1]["usage"], json!({"input": 5, "output": 2}));
}

#[test]
fn a_declared_provider_without_a_key() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("no key needed", 1, 1)])]);
    let env = Env::empty();
    env.write_config(&format!(
        r#"{{"providers":{{"llamacpp":{{"base_url":"{}/v1"}}}}}}"#,
        s.url()
    ));
    env.run(&["llamacpp:any", "hi"]).ok();
    assert_eq!(s.only().header("authorization"), None);
}

#[test]
fn max_tokens_and_field_from_config() {
    let s = Server::start(vec![Reply::sse(&[&oa_stream("ok", 1, 1)])]);
    let mut env = Env::for_provider("openai", &s);
    env.set("EXTRA_HEADER", "from-env");
    env.write_config(
        r#"{"providers":{"openai":{"max_tokens":123,"max_tokens_field":"max_tokens","headers":{"X-Extra":"${EXTRA_HEADER}"}}}}"#,
    );
    env.run(&["openai:gpt-test", "hi"]).ok();
    let r = s.only();
    assert_eq!(r.header("x-extra"), Some("from-env"));
    let b = r.json();
    assert_eq!(b["max_tokens"], 123);
    assert!(b.get("max_completion_tokens").is_none(), "{b}");
}

#[test]
fn missing_key_names_the_variable() {
    let s = Server::start(vec![]);
    let mut env = Env::empty();
    env.set("OPENAI_BASE_URL", &format!("{}/v1", s.url()));
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.error().contains("no API key"), "{out:#?}");
    assert!(
        out.stderr
            .lines()
            .any(|l| l.starts_with("hint:") && l.contains("OPENAI_API_KEY")),
        "{out:#?}"
    );
    assert!(s.requests().is_empty());
}

#[test]
fn missing_key_of_a_declared_provider_names_its_variable() {
    let s = Server::start(vec![]);
    let env = Env::empty();
    env.write_config(&format!(
        r#"{{"providers":{{"lmstudio":{{"base_url":"{}/v1","api_key_env":"LMSTUDIO_KEY"}}}}}}"#,
        s.url()
    ));
    let out = env.run(&["lmstudio:qwen", "hi"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.stderr.contains("LMSTUDIO_KEY"), "{out:#?}");
    assert!(s.requests().is_empty());
}

#[test]
fn azure_without_endpoint_names_the_variable() {
    let mut env = Env::empty();
    env.set("AZURE_OPENAI_API_KEY", KEY);
    let out = env.run(&["azure:dep", "hi"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.stderr.contains("AZURE_OPENAI_ENDPOINT"), "{out:#?}");
}

#[test]
fn an_invalid_providers_entry_is_a_config_error() {
    let env = Env::empty();
    env.write_config(r#"{"providers":{"openai":{"base_ulr":"http://127.0.0.1:1/v1"}}}"#);
    let mut env = env;
    env.set("OPENAI_API_KEY", KEY);
    let out = env.run(&["openai:gpt-test", "hi"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.stderr.contains("base_ulr"), "{out:#?}");
}
