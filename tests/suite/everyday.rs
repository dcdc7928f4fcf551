//! Everyday use (issue 20): a mistyped command is not a paid prompt, `-c` continues the last
//! chat, `ai chat search` finds past conversations by their words.

use serde_json::{Value, json};

use crate::support::{Env, header, message};

/// A world whose default model is `sonnet` (the fake claude): a command word taken for a
/// prompt would reach claude and be saved as a chat.
fn with_default() -> Env {
    let env = Env::new();
    env.write_config(r#"{"default_alias": "sonnet"}"#);
    env
}

#[test]
fn mistyped_command_words_are_answered_not_sent() {
    let env = with_default();
    for (args, suggestion) in [
        (&["chat", "ls"][..], "`ai chat list`"),
        (&["chat", "rm", "9D6"], "`ai chat delete 9D6`"),
        (&["chat", "serach", "x"], "`ai chat search x`"),
        (&["models"], "`ai list`"),
        (&["config"], "`ai init`"),
        (&["logs"], "`ai chat list`"),
        (&["ls"], "`ai list`"),
        (&["rm", "K7Q"], "`ai chat delete K7Q`"),
        (&["show", "K7Q"], "`ai chat show K7Q`"),
        (&["cat"], "`ai chat show`"),
        (&["new"], "`ai chat new`"),
        (&["last"], "`ai reply`"),
        (&["lsit"], "`ai list`"),
        (&["-q", "chat", "ls"], "`ai chat list`"),
        (&["sonnet", "chat", "ls"], "`ai chat list`"),
    ] {
        let out = env.run(args).code(2);
        assert!(
            out.stderr.contains("did you mean"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(suggestion), "{args:?}: {}", out.stderr);
        // How to send it after all.
        assert!(out.stderr.contains(" -- "), "{args:?}: {}", out.stderr);
        assert!(
            env.calls().is_empty(),
            "{args:?} was sent: {:?}",
            env.calls()
        );
        assert!(env.chat_ids().is_empty(), "{args:?} was saved as a chat");
    }
}

#[test]
fn a_one_word_prompt_goes_after_dashdash_and_sentences_stay_prompts() {
    let env = with_default();
    env.reply("claude", "answer\n");
    let out = env.run(&["--", "logs"]).success();
    assert_eq!(out.stdout, "answer\n");
    assert_eq!(env.stdin_text("claude"), "logs");
    let out = env.run(&["chat", "--", "ls"]).success();
    assert_eq!(out.stdout, "answer\n");
    assert_eq!(env.stdin_text("claude"), "ls");
    // A sentence that starts with a command-like word is a prompt.
    env.run(&["show", "me", "the", "logs"]).success();
    assert_eq!(env.stdin_text("claude"), "show me the logs");
    env.run(&["new", "ideas for dinner"]).success();
    assert_eq!(env.stdin_text("claude"), "new ideas for dinner");
    // After a model, a word is the prompt.
    env.run(&["sonnet", "models"]).success();
    assert_eq!(env.stdin_text("claude"), "models");
}

#[test]
fn continue_flag_continues_the_last_chat_as_reply_does() {
    let env = Env::echo();
    let first = env.run(&["first question"]).success().chat_id();
    let out = env.run(&["-c", "second"]).success();
    assert_eq!(out.chat_id(), first);
    let out = env.run(&["--continue", "echo", "third"]).success();
    assert_eq!(out.chat_id(), first);
    let msgs = env.messages(&first);
    let prompts: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(prompts, ["first question", "second", "third"]);
    assert_eq!(env.chat_ids().len(), 1);
    // `-c` and a named chat contradict each other.
    for args in [
        &["-c", "--chat", &first, "x"][..],
        &["-c", "--no-chat", "x"],
        &["chat", &first, "-c", "x"],
        &["-c", "chat", &first, "x"],
        &["reply", "chat", &first, "x"],
    ] {
        let out = env.run(args).code(2);
        assert!(out.stderr.contains("error:"), "{args:?}: {}", out.stderr);
    }
    assert_eq!(env.messages(&first).len(), 6, "nothing more was sent");
    // With no chat yet, -c says so as reply does.
    let env = Env::echo();
    let out = env.run(&["-c", "hi"]);
    assert_eq!(out.status.code(), env.run(&["reply", "hi"]).status.code());
    assert!(env.chat_ids().is_empty());
}

fn search_world() -> Env {
    let env = Env::echo();
    env.write_chat(
        "K7Q",
        &[
            header(
                "K7Q",
                json!({"title": "Recursion in Rust", "model": "echo"}),
            ),
            message("user", "How does a tail call work?", 1),
            message(
                "assistant",
                "First line.\nTail calls reuse the frame: \u{1b}]0;pwned\u{7}TAIL recursion done.",
                1,
            ),
        ],
    );
    let mut later = message("user", "make Über schön", 1);
    later["ts"] = json!("2026-03-04T05:06:07.000Z");
    env.write_chat("J2X", &[header("J2X", json!({})), later]);
    env.write_chat(
        "A1B",
        &[
            header("A1B", json!({})),
            message("user", "unrelated words", 1),
            message("assistant", "nothing", 1),
        ],
    );
    std::fs::write(
        env.chats_dir().join("ABC.json"),
        r#"{"chat_id":"ABC","model_alias":"echo","messages":[{"role":"user","content":"legacy recursion talk","timestamp":"2025-01-01T10:00:00"}],"created_at":"2025-01-01T10:00:00","updated_at":"2025-01-01T10:00:05"}"#,
    )
    .unwrap();
    env
}

#[test]
fn chat_search_finds_chats_by_their_words() {
    let env = search_world();
    let out = env
        .run(&["chat", "search", "tail", "RECURSION", "--json"])
        .success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["matched"], 1, "{v}");
    assert_eq!(v["searched"], 4, "{v}");
    let hit = &v["hits"][0];
    assert_eq!(hit["id"], "K7Q");
    assert_eq!(hit["title"], "Recursion in Rust");
    assert_eq!(hit["role"], "assistant");
    assert_eq!(hit["model"], "echo");
    assert_eq!(hit["date"], "2026-01-01T10:00:00.000Z");
    // The line with both words, cleaned of terminal controls.
    let line = hit["line"].as_str().unwrap();
    assert!(line.contains("TAIL recursion done"), "{line}");
    assert!(
        !line.contains('\u{1b}') && !line.contains("First line"),
        "{line}"
    );

    // One word: this chat, the legacy chat, newest first by file time; words in the title count.
    let out = env
        .run(&["chat", "search", "recursion", "--json"])
        .success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    let mut ids: Vec<&str> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["ABC", "K7Q"], "{v}");
    let out = env
        .run(&["chat", "search", "rust", "how", "--json"])
        .success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["hits"][0]["id"], "K7Q", "{v}");

    // Non-ASCII words in any case; the text form shows ID, date, title and line.
    let out = env.run(&["chat", "search", "über", "SCHÖN"]).success();
    assert!(
        out.stdout
            .starts_with("J2X  2026-03-04  make Über schön\n    you: make Über schön\n"),
        "{}",
        out.stdout
    );
    // Nothing found: empty, said on stderr, exit 0.
    let out = env.run(&["chat", "search", "zebra"]).success();
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("no chat holds"), "{}", out.stderr);
    let out = env.run(&["chat", "search", "zebra", "--json"]).success();
    assert_eq!(out.json()["hits"], json!([]));
    // --limit.
    let out = env
        .run(&["chat", "search", "recursion", "--limit", "1", "--json"])
        .success();
    let v = out.json();
    assert_eq!(
        (v["hits"].as_array().unwrap().len(), v["matched"].as_u64()),
        (1, Some(2))
    );
}

#[test]
fn chat_search_skips_what_it_cannot_read() {
    let env = search_world();
    // A symbolic link and a damaged file among the chats.
    std::os::unix::fs::symlink("/etc/passwd", env.chats_dir().join("L1N.jsonl")).unwrap();
    std::fs::write(env.chats_dir().join("D4D.jsonl"), "not json recursion\n").unwrap();
    let out = env
        .run(&["chat", "search", "recursion", "--json"])
        .success();
    let v = out.json();
    assert_eq!(v["matched"], 2, "{v}");
    assert_eq!(v["unreadable"], 1, "{v}");
    assert!(out.stderr.contains("could not be read"), "{}", out.stderr);
    let out = env.run(&["chat", "search", "  "]).code(2);
    assert!(
        out.stderr.contains("nothing to search for"),
        "{}",
        out.stderr
    );
}

/// A reply record of `provider:model` written `days_ago` days ago, with `usage`.
fn reply(provider: &str, model: &str, days_ago: i64, usage: Value, content: &str) -> Value {
    let ts = (chrono::Utc::now() - chrono::Duration::days(days_ago))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut m = json!({
        "type": "message", "role": "assistant", "content": content, "ts": ts,
        "alias": model, "provider": provider, "model": model, "turn": 1, "history_tokens": 100
    });
    if !usage.is_null() {
        m["usage"] = usage;
    }
    m
}

fn usage_world() -> Env {
    let env = Env::new();
    env.write_chat(
        "U1A",
        &[
            header("U1A", json!({})),
            message("user", "q", 1),
            // claude reports its cost.
            reply(
                "claude",
                "sonnet",
                0,
                json!({"input": 1000, "output": 200, "cost_usd": 0.25}),
                "a",
            ),
        ],
    );
    env.write_chat(
        "U2B",
        &[
            header("U2B", json!({})),
            message("user", "q", 1),
            // Tokens, no cost: priced from the table (gpt-4o: $2.50 / $10 per million).
            reply(
                "openai",
                "gpt-4o",
                1,
                json!({"input": 1_000_000, "output": 100_000}),
                "b",
            ),
            // Nothing reported (a CLI): 40 characters are 10 tokens out, 90 in.
            reply("codex", "gpt-5.2", 2, Value::Null, &"x".repeat(40)),
            // Long ago, and a model nobody prices.
            reply(
                "openai",
                "mystery-1",
                40,
                json!({"input": 10, "output": 10}),
                "c",
            ),
            reply("echo", "echo", 0, Value::Null, "free"),
        ],
    );
    env
}

#[test]
fn usage_sums_what_the_chats_record() {
    let env = usage_world();
    let v = env.run(&["usage", "--json"]).success().json();
    assert_eq!(v["by"], "model");
    assert_eq!(v["total"]["replies"], 5, "{v}");
    let row = |key: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("no row {key}: {v}"))
    };
    let sonnet = row("claude:sonnet");
    assert_eq!(
        (
            sonnet["input_tokens"].as_u64(),
            sonnet["output_tokens"].as_u64()
        ),
        (Some(1000), Some(200))
    );
    assert_eq!(sonnet["cost_usd"], 0.25);
    assert_eq!(sonnet["cost_estimated_usd"], 0.0);
    let gpt4o = row("openai:gpt-4o");
    assert!(
        (gpt4o["cost_usd"].as_f64().unwrap() - 3.5).abs() < 1e-9,
        "{gpt4o}"
    );
    assert_eq!(gpt4o["cost_estimated_usd"], gpt4o["cost_usd"]);
    let codex = row("codex:gpt-5.2");
    assert_eq!(codex["tokens_estimated"], 1);
    assert_eq!(
        (
            codex["input_tokens"].as_u64(),
            codex["output_tokens"].as_u64()
        ),
        (Some(90), Some(10))
    );
    assert_eq!(row("openai:mystery-1")["unpriced"], 1);
    assert_eq!(row("echo:echo")["cost_usd"], 0.0);
    // The most expensive first.
    assert_eq!(v["rows"][0]["key"], "openai:gpt-4o");

    // --since leaves out the old reply; --by provider and day group.
    let v = env
        .run(&["usage", "--since", "7d", "--by", "provider", "--json"])
        .success()
        .json();
    assert_eq!(v["total"]["replies"], 4, "{v}");
    let keys: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert!(
        keys.contains(&"openai") && keys.contains(&"codex"),
        "{keys:?}"
    );
    let v = env
        .run(&["usage", "--by", "day", "--json"])
        .success()
        .json();
    let days: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(days.len(), 4, "{days:?}");
    assert!(
        days.windows(2).all(|w| w[0] < w[1]),
        "oldest first: {days:?}"
    );

    // The table marks estimates.
    let out = env.run(&["usage"]).success();
    assert!(out.stdout.starts_with("MODEL"), "{}", out.stdout);
    assert!(out.stdout.contains("~$3.5"), "{}", out.stdout);
    assert!(out.stdout.contains("unpriced"), "{}", out.stdout);
    assert!(out.stderr.contains("~ marks estimates"), "{}", out.stderr);
    let out = env.run(&["usage", "--since", "nonsense"]).code(2);
    assert!(out.stderr.contains("30d"), "{}", out.stderr);
}

#[test]
fn a_monthly_budget_warns_or_refuses_before_sending() {
    let env = usage_world();
    env.reply("claude", "answer\n");
    // Spent this month: $0.25 reported + about $3.5 estimated (gpt-4o, a day ago; the month may
    // have begun since, so the budget is below the reported part alone).
    env.write_config(r#"{"budget": {"monthly_usd": 0.2, "on_exceed": "fail"}}"#);
    let out = env.run(&["sonnet", "hi"]).code(3);
    assert!(out.stderr.contains("budget"), "{}", out.stderr);
    assert!(out.stderr.contains("nothing was sent"), "{}", out.stderr);
    assert!(env.calls().is_empty(), "sent: {:?}", env.calls());
    assert_eq!(env.chat_ids().len(), 2, "nothing was saved");
    // A free model is not refused.
    env.run(&["echo", "hi"]).success();
    // Under the budget: nothing said.
    env.write_config(r#"{"budget": {"monthly_usd": 1000}}"#);
    let out = env.run(&["sonnet", "hi"]).success();
    assert!(!out.stderr.contains("budget"), "{}", out.stderr);
    // Past it, warn (the default): sent, with a warning.
    env.write_config(r#"{"budget": {"monthly_usd": 0.2}}"#);
    let out = env.run(&["sonnet", "hi"]).success();
    assert_eq!(out.stdout, "answer\n");
    assert!(
        out.stderr.contains("warning:") && out.stderr.contains("budget"),
        "{}",
        out.stderr
    );
    // A bad budget is a config error naming the key.
    env.write_config(r#"{"budget": {"monthly_usd": -1}}"#);
    let out = env.run(&["usage"]).code(3);
    assert!(out.stderr.contains("budget.monthly_usd"), "{}", out.stderr);
    env.write_config(r#"{"budget": {"monthly_usd": 1, "on_exceed": "explode"}}"#);
    env.run(&["usage"]).code(3);
}

#[test]
fn init_finds_api_keys_and_sets_a_default_that_answers() {
    use crate::support::{KEY, Reply, Server, an_end, an_start, an_text};
    let s = Server::start(vec![Reply::sse(&[
        &an_start(3),
        &an_text("from the API"),
        &an_end(2),
    ])]);
    let mut env = Env::bare();
    // One key in <home>/.env, one in the environment.
    std::fs::create_dir_all(env.config_path().parent().unwrap()).unwrap();
    std::fs::write(
        env.config_path().with_file_name(".env"),
        format!("ANTHROPIC_API_KEY={KEY}\n"),
    )
    .unwrap();
    env.set("OPENAI_API_KEY", KEY)
        .set("ANTHROPIC_BASE_URL", &s.url());
    let out = env.run(&["init"]).success();
    assert!(
        out.stdout.contains("ANTHROPIC_API_KEY (anthropic)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("OPENAI_API_KEY (openai)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("default model: claude-sonnet"),
        "{}",
        out.stdout
    );
    let config = env.config();
    assert_eq!(
        config["aliases"]["claude-sonnet"],
        json!(["anthropic", "claude-sonnet-4-5"])
    );
    assert_eq!(
        config["aliases"]["gpt-5-mini"],
        json!(["openai", "gpt-5-mini"])
    );
    assert!(
        config["aliases"].get("gemini-flash").is_none(),
        "{config:#}"
    );
    assert_eq!(config["default_alias"], "claude-sonnet");
    // The keys are referenced, never written (the harness also checks every file for KEY).
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    assert!(!text.contains(KEY), "{text}");
    // The default answers.
    let out = env.run(&["hello there"]).success();
    assert_eq!(out.stdout, "from the API\n");
    assert_eq!(s.only().json()["model"], "claude-sonnet-4-5");
    // A default set by hand is kept by a later init.
    env.run(&["default", "gpt-5-mini"]).success();
    env.run(&["init"]).success();
    assert_eq!(env.config()["default_alias"], "gpt-5-mini");
}

#[test]
fn init_finds_local_servers_at_overridable_addresses() {
    use crate::support::{Reply, Server, oa_stream};
    let ollama = Server::start(vec![Reply::json(
        200,
        &json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 1, "digest": "d"}]})
            .to_string(),
    )]);
    let lmstudio = Server::start(vec![
        Reply::json(
            200,
            &json!({"object": "list", "data": [{"id": "qwen2.5-7b-instruct", "object": "model"}]})
                .to_string(),
        ),
        Reply::sse(&[&oa_stream("local answer", 1, 1)]),
    ]);
    let mut env = Env::bare();
    env.set("OLLAMA_HOST", &ollama.host_port())
        .set("LMSTUDIO_BASE_URL", &format!("{}/v1", lmstudio.url()));
    let out = env.run(&["init"]).success();
    assert!(out.stdout.contains("lm studio models: 1"), "{}", out.stdout);
    let config = env.config();
    assert_eq!(
        config["aliases"]["llama3.2"],
        json!(["ollama-api", "llama3.2:latest"])
    );
    assert_eq!(
        config["aliases"]["qwen2.5-7b-instruct"],
        json!(["lmstudio", "qwen2.5-7b-instruct"])
    );
    assert_eq!(config["providers"]["lmstudio"]["protocol"], "openai");
    assert_eq!(config["default_alias"], "llama3.2", "{config:#}");
    assert!(
        out.stdout.contains("API keys: none found"),
        "{}",
        out.stdout
    );
    // The LM Studio alias answers through the address found.
    let out = env.run(&["qwen2.5-7b-instruct", "hi"]).success();
    assert_eq!(out.stdout, "local answer\n");
    let reqs = lmstudio.requests();
    assert_eq!(reqs[0].target, "/v1/models");
    assert_eq!(reqs[1].target, "/v1/chat/completions");
}

#[test]
fn init_with_nothing_says_so_and_the_no_default_hint_names_what_works_here() {
    let env = Env::bare();
    let out = env.run(&["init"]).success();
    assert!(
        out.stdout.contains("no model found that can answer here"),
        "{}",
        out.stdout
    );
    assert!(env.config().get("default_alias").is_none());
    // Nothing works here: the hint says how to find out, not `sonnet`.
    let out = env.run(&["hello", "there"]).code(2);
    assert!(out.stderr.contains("ai init"), "{}", out.stderr);
    assert!(!out.stderr.contains("ai default sonnet"), "{}", out.stderr);
    // An installed CLI: its alias.
    let env = Env::bare();
    env.fake("codex", "echo hi");
    let out = env.run(&["hello", "there"]).code(2);
    assert!(out.stderr.contains("ai default codex"), "{}", out.stderr);
    // Only a key: the API model.
    let mut env = Env::bare();
    env.set("GEMINI_API_KEY", crate::support::KEY);
    let out = env.run(&["hello", "there"]).code(2);
    assert!(
        out.stderr
            .contains("ai default gemini-api:gemini-2.5-flash"),
        "{}",
        out.stderr
    );
}
