//! Stored text never reaches the terminal as control sequences.

use serde_json::json;

use crate::support::{Env, Out, header, message};

const TITLE_ESC: &str = "\u{1b}]0;evil\u{7}";
const RED: &str = "\u{1b}[31m";

fn assert_clean(out: &Out) {
    for (name, bytes) in [("stdout", &out.stdout_bytes), ("stderr", &out.stderr_bytes)] {
        assert!(
            !bytes.iter().any(|&b| b == 0x1b || b == 0x07)
                && !String::from_utf8_lossy(bytes).contains('\u{9b}'),
            "ai {:?}: control bytes on {name}: {:?}",
            out.args,
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn list_and_show_strip_terminal_escapes() {
    let env = Env::empty();
    let mut reply = message("assistant", &format!("{RED}red reply{TITLE_ESC}"), 1);
    reply["alias"] = json!(format!("echo{RED}"));
    reply["model"] = json!(format!("{TITLE_ESC}echo"));
    env.write_chat(
        "E5C",
        &[
            header(
                "E5C",
                json!({
                    "title": format!("{TITLE_ESC}bad {RED}title"),
                    "model": format!("echo{RED}"),
                    "system": format!("be {RED}evil{TITLE_ESC}"),
                    "created": format!("2026-01-01{RED}"),
                }),
            ),
            message("user", &format!("hello {TITLE_ESC}{RED}world"), 1),
            reply,
            json!({
                "type": "pending", "content": format!("{RED}again"), "ts": format!("t{TITLE_ESC}"),
                "alias": "echo", "error": format!("boom{TITLE_ESC}{RED}")
            }),
        ],
    );
    // A first message as the title, for a chat without one.
    env.write_chat(
        "F6D",
        &[
            header("F6D", json!({})),
            message("user", &format!("{RED}untitled {TITLE_ESC}chat"), 1),
            message("assistant", "ok", 1),
        ],
    );

    let out = env.run(&["chat", "list"]).success();
    assert_clean(&out);
    assert!(
        out.stdout.contains("E5C") && out.stdout.contains("F6D"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("title") && out.stdout.contains("chat"),
        "{}",
        out.stdout
    );

    for args in [
        vec!["chat", "show", "E5C"],
        vec!["chat", "show", "F6D"],
        vec!["chat", "list", "--json"],
        vec!["chat", "show", "E5C", "--json"],
        vec!["__complete", "chats"],
    ] {
        let out = env.run(&args).success();
        assert_clean(&out);
    }
    let out = env.run(&["chat", "show", "E5C"]).success();
    for text in ["hello", "world", "red reply", "again", "boom"] {
        assert!(out.stdout.contains(text), "{text} missing:\n{}", out.stdout);
    }
}
