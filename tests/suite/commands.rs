//! `ai init`, `ai list`, `ai default`.

use serde_json::{Value, json};

use crate::support::{Env, args};

const OLLAMA_LIST: &str = r#"if [ "$1" = list ]; then
printf 'NAME                  ID              SIZE      MODIFIED\n'
printf 'llama3.2:latest       a80c4f17acd5    2.0 GB    2 days ago\n'
printf 'qwen2.5-coder:7b      2b0496514337    4.7 GB    3 weeks ago\n'
exit 0
fi
"#;

/// claude and ollama installed, nothing else findable.
fn claude_and_ollama() -> Env {
    let env = Env::bare();
    env.install("claude");
    env.install("ollama");
    env.script("ollama", OLLAMA_LIST);
    env
}

#[test]
fn init_detects_clis_and_ollama_models() {
    let env = claude_and_ollama();
    let out = env.ai().arg("init").run();
    assert!(out.status.success(), "{}", out.stderr);
    let report = out.stdout;
    assert!(report.contains("backend CLIs: claude, ollama"), "{report}");
    assert!(
        report.contains("not found: codex, gemini, qwen"),
        "{report}"
    );
    assert!(
        report.contains(&env.config_path().display().to_string()),
        "{report}"
    );

    assert_eq!(env.argv("ollama"), args(&["list"]));
    assert_eq!(env.stdin_source("ollama"), "/dev/null");
    let c = env.config();
    assert_eq!(c["installed_tools"], json!(["claude", "ollama"]));
    assert_eq!(
        c["aliases"]["llama3.2"],
        json!(["ollama", "llama3.2:latest"])
    );
    assert_eq!(
        c["aliases"]["qwen2.5-coder-7b"],
        json!(["ollama", "qwen2.5-coder:7b"])
    );
    assert_eq!(
        c["models"]["ollama"],
        json!(["llama3.2:latest", "qwen2.5-coder:7b"])
    );

    // The new alias works.
    let out = env.ai().args(["llama3.2", "hi"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("ollama"), args(&["run", "llama3.2:latest"]));
    assert_eq!(env.stdin_text("ollama"), "hi");
}

#[test]
fn init_twice_is_stable_and_keeps_user_aliases() {
    let env = claude_and_ollama();
    env.write_config(r#"{"aliases": {"llama3.2": ["claude", "opus"]}, "x": true}"#);
    env.ai().arg("init").run().success();
    let first = env.config();
    // A user's alias of the same name is not overwritten.
    assert_eq!(first["aliases"]["llama3.2"], json!(["claude", "opus"]));
    assert_eq!(first["x"], json!(true));
    env.ai().arg("init").run().success();
    assert_eq!(env.config(), first);
}

#[test]
fn init_with_nothing_installed() {
    let env = Env::bare();
    let out = env.ai().arg("init").run();
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stdout.contains("none found"), "{}", out.stdout);
    assert_eq!(env.config()["installed_tools"], json!([]));
}

#[test]
fn init_survives_a_failing_ollama_list() {
    let env = claude_and_ollama();
    env.script(
        "ollama",
        "echo 'could not connect to ollama server' >&2\nexit 1\n",
    );
    let out = env.ai().arg("init").run();
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        out.stdout.contains("ollama models: not listed"),
        "{}",
        out.stdout
    );
    assert_eq!(env.config()["installed_tools"], json!(["claude", "ollama"]));
}

fn list_json(env: &Env) -> Vec<Value> {
    let out = env.ai().args(["list", "--json"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    match serde_json::from_str::<Value>(&out.stdout).expect("list --json is JSON") {
        Value::Array(rows) => rows,
        other => panic!("not an array: {other}"),
    }
}

fn row<'a>(rows: &'a [Value], alias: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["alias"] == alias)
        .unwrap_or_else(|| panic!("no row for {alias}"))
}

#[test]
fn list_shows_aliases_and_what_is_usable() {
    let env = claude_and_ollama();
    env.ai().arg("init").run().success();

    let out = env.ai().arg("list").run();
    assert!(out.status.success(), "{}", out.stderr);
    let table = out.stdout;
    let line = |alias: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(alias))
            .unwrap_or_else(|| panic!("no line for {alias}:\n{table}"))
            .to_owned()
    };
    assert!(line("sonnet").starts_with("claude"), "{table}");
    assert!(line("sonnet").contains("ready"), "{table}");
    assert!(line("codex").contains("unavailable"), "{table}");
    assert!(line("codex").contains("codex not installed"), "{table}");
    assert!(line("llama3.2").contains("llama3.2:latest"), "{table}");
    assert!(line("llama3.2").contains("ready"), "{table}");
    assert!(line("echo").contains("ready"), "{table}");
    assert!(line("opus-h").contains("opus@high"), "{table}");

    let rows = list_json(&env);
    for r in &rows {
        for key in ["alias", "provider", "model", "usable"] {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
    }
    let sonnet = row(&rows, "sonnet");
    assert_eq!(
        (&sonnet["provider"], &sonnet["model"], &sonnet["usable"]),
        (&json!("claude"), &json!("sonnet"), &json!(true))
    );
    assert_eq!(row(&rows, "codex")["usable"], json!(false));
    assert_eq!(row(&rows, "gemini")["usable"], json!(false));
    assert_eq!(row(&rows, "echo")["usable"], json!(true));
    let l = row(&rows, "llama3.2");
    assert_eq!(
        (&l["provider"], &l["model"], &l["usable"]),
        (&json!("ollama"), &json!("llama3.2:latest"), &json!(true))
    );
    let opus_h = row(&rows, "opus-h");
    assert_eq!(
        (&opus_h["model"], &opus_h["effort"]),
        (&json!("opus"), &json!("high"))
    );
}

#[test]
fn list_marks_the_default_and_custom_backends() {
    let env = Env::bare();
    env.install("mycli");
    env.write_config(
        r#"{"backends": {"mycli": {"program": "mycli"}, "gone": {"program": "gone-cli"}},
            "aliases": {"my": ["mycli", "m1"], "g": ["gone", "x"]},
            "default_alias": "my"}"#,
    );
    let rows = list_json(&env);
    let my = row(&rows, "my");
    assert_eq!(
        (&my["provider"], &my["usable"], &my["default"]),
        (&json!("mycli"), &json!(true), &json!(true))
    );
    assert_eq!(row(&rows, "g")["usable"], json!(false));
    assert_eq!(row(&rows, "sonnet")["default"], json!(false));
    let table = env.ai().arg("list").run().stdout;
    assert!(table.contains("my (default)"), "{table}");
}

#[test]
fn default_show_set_clear() {
    let env = Env::new();
    // None set: nothing on stdout, a notice on stderr.
    let out = env.ai().arg("default").run();
    assert!(out.status.success());
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("no default model"), "{}", out.stderr);

    let out = env.ai().args(["default", "echo"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert_eq!(env.config()["default_alias"], "echo");

    let out = env.ai().arg("default").run();
    assert_eq!(out.stdout, "echo\n");

    // The default is used.
    let out = env.ai().arg("hi").run();
    assert!(out.status.success());
    assert!(out.stdout.starts_with("echo: model echo"), "{}", out.stdout);

    env.ai().args(["default", "codex-h"]).run().success();
    env.ai().arg("hi").run().success();
    assert_eq!(
        env.argv("codex"),
        args(&[
            "exec",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.3-codex",
            "-c",
            "model_reasoning_effort=\"high\"",
            "--json",
            "-"
        ])
    );

    let out = env.ai().args(["default", "--clear"]).run();
    assert!(out.status.success());
    assert!(
        env.config().get("default_alias").is_none(),
        "{}",
        env.config()
    );
    assert_eq!(env.ai().arg("default").run().stdout, "");
    assert_eq!(env.ai().arg("hi").run().status.code(), Some(2));
}

#[test]
fn default_unknown_alias_is_not_found() {
    let env = Env::new();
    env.ai().args(["default", "echo"]).run().success();
    let out = env.ai().args(["default", "nosuch"]).run();
    assert_eq!(out.status.code(), Some(4), "{}", out.stderr);
    assert!(
        out.stderr.contains("error: unknown model 'nosuch'"),
        "{}",
        out.stderr
    );
    assert_eq!(env.config()["default_alias"], "echo", "unchanged");

    let out = env.ai().args(["default", "opsu"]).run();
    assert_eq!(out.status.code(), Some(4));
    assert!(out.stderr.contains("did you mean opus"), "{}", out.stderr);
}

#[test]
fn default_to_a_stale_alias_is_a_config_error() {
    let env = Env::new();
    env.write_config(r#"{"default_alias": "removed-alias"}"#);
    let out = env.ai().arg("hi").run();
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    assert!(
        out.stderr.contains("'removed-alias' is not a known alias"),
        "{}",
        out.stderr
    );
}

/// Every provider is listed, with or without an alias, and whether it has what it needs.
#[test]
fn list_providers_shows_every_provider_and_its_key() {
    let env = Env::new();
    let out = env.ai().args(["list", "--providers", "--json"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let find = |name: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(find("claude")["usable"], true);
    assert_eq!(find("openai")["usable"], false);
    assert!(
        find("openai")["status"]
            .as_str()
            .unwrap()
            .contains("OPENAI_API_KEY")
    );
    assert_eq!(find("anthropic")["use_as"], "anthropic:MODEL");
    // The plain table shows the providers after the aliases.
    let out = env.ai().args(["list"]).run();
    let text = out.stdout;
    assert!(text.contains("PROVIDER    USE AS"), "{text}");
    assert!(text.contains("needs OPENAI_API_KEY"), "{text}");
}

/// A keyless provider on this machine (ollama-api) is ready only when its server listens.
#[test]
fn list_says_a_local_provider_with_nothing_listening_is_unavailable() {
    let env = Env::new();
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host = server.local_addr().unwrap().to_string();
    let status = |env: &Env| {
        let out = env
            .ai()
            .env("OLLAMA_HOST", &host)
            .args(["list", "--providers", "--json"])
            .run();
        assert!(out.status.success(), "{}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "ollama-api")
            .cloned()
            .unwrap()
    };
    let up = status(&env);
    assert_eq!(up["usable"], true, "{up}");
    drop(server);
    let down = status(&env);
    assert_eq!(down["usable"], false, "{down}");
    let said = down["status"].as_str().unwrap();
    assert!(said.contains("nothing is listening"), "{said}");
    assert!(said.contains(&host), "{said}");
}
