//! `ai --json-stream` (JSON lines for programs), the server-sent events of a streamed
//! `POST /call` fed by it, and the chat endpoints of `ai serve`.

use serde_json::{Value, json};

use crate::serve::{TOKEN, http, json, request, serve};
use crate::support::{Env, header, message};

/// stdout of `--json-stream`, one JSON value per line.
fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Server-sent events: (name, data as JSON).
fn events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let name = e
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap_or_else(|| panic!("no event name: {e:?}"));
            let data = e
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or_else(|| panic!("no data: {e:?}"));
            (name.to_owned(), json(data))
        })
        .collect()
}

#[test]
fn json_stream_prints_the_reply_in_pieces_then_the_json_answer() {
    let env = Env::echo();
    let out = env.run(&["--json-stream", "echo", "hi there"]).success();
    let got = lines(&out.stdout);
    let (done, deltas) = got.split_last().unwrap();
    assert!(!deltas.is_empty(), "{}", out.stdout);
    let mut text = String::new();
    for d in deltas {
        assert_eq!(d["type"], "delta", "{d}");
        text.push_str(d["text"].as_str().unwrap());
    }
    assert_eq!(done["type"], "done");
    assert_eq!(done["reply"].as_str().unwrap(), text);
    assert!(text.contains("hi there"));
    assert_eq!(done["chat"].as_str().unwrap(), out.chat_id());
    // The fields of --json, the same values.
    let plain = env.run(&["--json", "echo", "hi there"]).success().json();
    for key in ["reply", "model", "provider", "alias", "usage"] {
        assert_eq!(done[key], plain[key], "{key}");
    }
    assert!(done.get("elapsed_ms").is_some());
    // Continuing a chat, and --no-chat, stream the same way.
    let id = out.chat_id();
    let out = env
        .run(&["--json-stream", "--chat", &id, "echo", "again"])
        .success();
    assert_eq!(lines(&out.stdout).last().unwrap()["chat"], id.as_str());
    let out = env
        .run(&["--json-stream", "--no-chat", "echo", "x"])
        .success();
    assert_eq!(lines(&out.stdout).last().unwrap()["chat"], Value::Null);
}

#[test]
fn json_stream_reports_failures_on_stdout_and_stderr() {
    let env = Env::new();
    // An unknown model: before any chat.
    let out = env.run(&["--json-stream", "sonet", "x"]).code(4);
    let l = lines(&out.stdout);
    assert_eq!(l.len(), 1, "{}", out.stdout);
    assert_eq!(l[0]["type"], "error");
    assert_eq!(l[0]["error"], "unknown model 'sonet'");
    assert!(l[0]["hint"].as_str().unwrap().contains("sonnet"));
    assert_eq!(l[0]["exit_code"], 4);
    assert!(out.error().contains("unknown model 'sonet'"), "{out:?}");

    // The backend fails: its words, on both.
    env.exit_code("claude", 1);
    env.stderr("claude", "Not logged in\n");
    env.reply("claude", "");
    let out = env.run(&["--json-stream", "sonnet", "x"]).code(1);
    let last = lines(&out.stdout).pop().unwrap();
    assert_eq!(last["type"], "error", "{}", out.stdout);
    assert!(
        last["error"].as_str().unwrap().contains("Not logged in"),
        "{last}"
    );
    assert_eq!(last["exit_code"], 1);
    assert!(out.error().contains("Not logged in"), "{out:?}");

    // Modes that print a command have nothing to stream.
    let out = env
        .run(&["--json-stream", "cmd", "sonnet", "list files"])
        .code(2);
    assert_eq!(lines(&out.stdout)[0]["exit_code"], 2);
    assert!(out.error().contains("--json-stream"), "{out:?}");
    let out = env.run(&["--json-stream", "sonnet", "gpt", "x"]).code(2);
    assert_eq!(lines(&out.stdout)[0]["type"], "error");
    env.run(&["--json", "--json-stream", "echo", "x"]).code(2);
    // Not offered in the help.
    let out = env.run(&["--help"]).success();
    assert!(!out.stdout.contains("json-stream"));
}

#[test]
fn a_call_streams_as_server_sent_events() {
    let env = Env::new();
    env.write_config(r#"{"default_alias":"echo"}"#);
    let s = serve(&env, &["--token", TOKEN], &[]);
    let auth = format!("Authorization: Bearer {TOKEN}");
    let a = request(
        s.port,
        "POST",
        "/call",
        &["Content-Type: application/json", &auth],
        br#"{"prompt":"stream me","stream":true}"#,
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.header("Content-Type").as_deref(),
        Some("text/event-stream")
    );
    let ev = events(&a.body);
    let (last, deltas) = ev.split_last().unwrap();
    assert!(!deltas.is_empty());
    let text: String = deltas
        .iter()
        .map(|(name, d)| {
            assert_eq!(name, "delta");
            d["text"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(last.0, "done");
    let done = &last.1;
    assert_eq!(done["reply"].as_str().unwrap(), text);
    assert!(text.contains("stream me"));
    assert!(done.get("type").is_none());
    // The same object as a call answered whole.
    let (status, body) = http(
        s.port,
        "POST",
        "/call",
        Some(TOKEN),
        br#"{"prompt":"stream me"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let whole = json(&body);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(done), keys(&whole));
    for key in ["reply", "model", "provider", "alias"] {
        assert_eq!(done[key], whole[key], "{key}");
    }
    // Asked for by the Accept header too.
    let a = request(
        s.port,
        "POST",
        "/call",
        &[
            "Content-Type: application/json",
            &auth,
            "Accept: text/event-stream",
        ],
        br#"{"prompt":"by accept"}"#,
    );
    assert_eq!(events(&a.body).last().unwrap().0, "done", "{a:?}");

    // A failing backend: an error event with the CLI's words.
    env.exit_code("claude", 1);
    env.stderr("claude", "Not logged in\n");
    env.reply("claude", "");
    let a = request(
        s.port,
        "POST",
        "/call",
        &["Content-Type: application/json", &auth],
        br#"{"alias":"sonnet","prompt":"x","stream":true}"#,
    );
    assert_eq!(a.status, 200, "{a:?}");
    let (name, err) = events(&a.body).pop().unwrap();
    assert_eq!(name, "error", "{a:?}");
    assert!(
        err["error"].as_str().unwrap().contains("Not logged in"),
        "{err}"
    );
    assert_eq!(err["exit_code"], 1);
    assert!(err.get("hint").is_some());
    // Refused before it starts: a plain JSON error.
    let a = request(
        s.port,
        "POST",
        "/call",
        &["Content-Type: application/json", &auth],
        br#"{"alias":"sonet","prompt":"x","stream":true}"#,
    );
    assert_eq!(a.status, 404, "{a:?}");
    assert!(
        a.json()["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("sonnet")
    );
}

#[test]
fn chats_are_listed_shown_renamed_and_deleted() {
    let env = Env::echo();
    let s = serve(&env, &["--token", TOKEN], &[]);
    let call = |prompt: &str| {
        let (status, body) = http(
            s.port,
            "POST",
            "/call",
            Some(TOKEN),
            json!({"prompt": prompt}).to_string().as_bytes(),
        );
        assert_eq!(status, 200, "{body}");
        json(&body)["chat"].as_str().unwrap().to_owned()
    };
    let first = call("the first chat");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = call("the second chat");
    // A chat whose answer has sources.
    let mut reply = message("assistant", "grounded", 1);
    reply["sources"] = json!([{"kb": "notes", "id": "e0d27e3ad"}]);
    env.write_chat(
        "SRC1",
        &[
            header("SRC1", json!({"model": "echo"})),
            message("user", "where?", 1),
            reply,
        ],
    );
    crate::support::age(&env.chat_path("SRC1"), std::time::Duration::from_secs(3600));

    let (status, body) = http(s.port, "GET", "/chats", Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");
    let list = json(&body);
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [second.as_str(), first.as_str(), "SRC1"],
        "newest first"
    );
    let row = &list[0];
    assert_eq!(row["title"], "the second chat");
    assert_eq!(row["model"], "echo");
    assert_eq!(row["turns"], 1);
    assert!(row["updated"].as_u64().unwrap() > 1_600_000_000);

    let (status, body) = http(s.port, "GET", "/chats/SRC1", Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");
    let chat = json(&body);
    assert_eq!(chat["id"], "SRC1");
    let msgs = chat["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["content"], "where?");
    assert_eq!(msgs[1]["sources"][0]["id"], "e0d27e3ad");
    let url = msgs[1]["sources"][0]["url"].as_str().unwrap();
    assert!(url.starts_with("/kb/notes/note/e0d27e3ad?sig="), "{url}");
    let (status, body) = http(s.port, "GET", &format!("/chats/{first}"), Some(TOKEN), b"");
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["messages"][0]["content"], "the first chat");

    // Rename: a title that starts with a dash is still a title.
    let (status, body) = http(
        s.port,
        "POST",
        &format!("/chats/{first}/rename"),
        Some(TOKEN),
        br#"{"to":"-the renamed one"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["title"], "-the renamed one");
    assert_eq!(env.header(&first)["title"], "-the renamed one");
    let (status, body) = http(
        s.port,
        "POST",
        &format!("/chats/{first}/rename"),
        Some(TOKEN),
        br#"{"title":"x"}"#,
    );
    assert_eq!(status, 400, "{body}");
    let (status, body) = http(
        s.port,
        "POST",
        &format!("/chats/{first}/rename"),
        Some(TOKEN),
        br#"{"to":"  "}"#,
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        json(&body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("empty")
    );

    // Delete.
    let (status, body) = http(
        s.port,
        "DELETE",
        &format!("/chats/{second}"),
        Some(TOKEN),
        b"",
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["deleted"], second.as_str());
    assert!(!env.chat_path(&second).exists());

    // Errors carry the CLI's message.
    for (method, path) in [
        ("GET", format!("/chats/{second}")),
        ("DELETE", format!("/chats/{second}")),
        ("POST", format!("/chats/{second}/rename")),
    ] {
        let (status, body) = http(s.port, method, &path, Some(TOKEN), br#"{"to":"x"}"#);
        assert_eq!(status, 404, "{method} {path}: {body}");
        let v = json(&body);
        assert_eq!(v["error"]["message"], format!("no chat '{second}'"));
        assert!(
            v["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("ai chat list")
        );
    }
    for path in ["/chats/-x", "/chats/a.b", "/chats/..%2Fconfig"] {
        let (status, body) = http(s.port, "GET", path, Some(TOKEN), b"");
        assert_eq!(status, 400, "{path}: {body}");
    }
    let (status, _) = http(s.port, "PUT", &format!("/chats/{first}"), Some(TOKEN), b"");
    assert_eq!(status, 405);
    // The same token rule as every endpoint.
    let (status, _) = http(s.port, "GET", "/chats", None, b"");
    assert_eq!(status, 401);
    let (status, _) = http(s.port, "DELETE", &format!("/chats/{first}"), None, b"");
    assert_eq!(status, 401);
    assert!(env.chat_path(&first).exists());
}
