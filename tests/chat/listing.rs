//! `chat list` on chats that are long, damaged, unreadable or not regular files, and what
//! other commands do with entries that are not chat files.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Env, header, message};

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo(3) takes no other pointers.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo: {}", std::io::Error::last_os_error());
}

fn list_json(env: &Env) -> Vec<Value> {
    let out = env
        .run(&["chat", "list", "--json", "--limit", "0"])
        .success();
    let v: Value = serde_json::from_str(&out.stdout).expect("list --json is JSON");
    v.as_array().expect("an array").clone()
}

fn row<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {rows:?}"))
}

#[test]
fn long_last_records_still_count_their_turns_and_model() {
    let env = Env::echo();
    let mut recs = vec![header("L0NG", json!({"model": "sonnet"}))];
    for t in 1..=7u64 {
        recs.push(message("user", &format!("q{t}"), t));
        let mut reply = message("assistant", &"r".repeat(20_000), t);
        reply["alias"] = json!(if t == 7 { "gpt" } else { "echo" });
        recs.push(reply);
    }
    env.write_chat("L0NG", &recs);
    assert!(fs::metadata(env.chat_path("L0NG")).unwrap().len() > 64 * 1024);
    let rows = list_json(&env);
    let r = row(&rows, "L0NG");
    assert_eq!(r["turns"], 7, "{r}");
    assert_eq!(
        r["model"], "gpt",
        "the model of the last reply, not the header's: {r}"
    );
    assert_eq!(r["title"], "q1");

    // A last record of over a megabyte.
    recs.push(message("user", "q8", 8));
    recs.push(message("assistant", &"z".repeat(3 << 20), 8));
    env.write_chat("L0NG", &recs);
    let rows = list_json(&env);
    assert_eq!(row(&rows, "L0NG")["turns"], 8);
}

#[test]
fn a_chat_damaged_in_the_middle_is_listed_as_damaged() {
    let env = Env::echo();
    let id = env.start("first");
    env.run(&["chat", &id, "second"]).success();
    let text = fs::read_to_string(env.chat_path(&id)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "{\"type\":\"message\",\"ro";
    fs::write(env.chat_path(&id), format!("{}\n", lines.join("\n"))).unwrap();
    let rows = list_json(&env);
    let r = row(&rows, &id);
    assert_eq!(r["damaged"], true, "{r}");
    let out = env.run(&["chat", "list"]).success();
    let line = out.stdout.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(line.contains("damaged"), "{line}");
}

#[test]
fn entries_that_are_not_chat_files_are_listed_as_damaged_and_counted_right() {
    let env = Env::echo();
    let good = env.start("a fine chat");
    fs::create_dir(env.chats_dir().join("D1R.jsonl")).unwrap();
    fs::write(env.chats_dir().join("E4P.jsonl"), b"").unwrap();
    let rows = list_json(&env);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(row(&rows, &good)["damaged"].is_null());
    assert_eq!(row(&rows, "D1R")["damaged"], true);
    assert_eq!(row(&rows, "E4P")["damaged"], true);
    for limit in ["0", "3", "50"] {
        let out = env.run(&["chat", "list", "--limit", limit]).success();
        assert!(
            !out.stderr.contains("shown"),
            "--limit {limit}: {}",
            out.stderr
        );
        assert_eq!(out.stdout.lines().count(), 4, "{}", out.stdout);
    }
    let out = env.run(&["chat", "list", "--limit", "1"]).success();
    assert!(out.stderr.contains("1 of 3 chats shown"), "{}", out.stderr);
}

#[test]
fn a_fifo_in_the_chats_folder_never_hangs_ai() {
    let env = Env::echo();
    let good = env.start("hello");
    mkfifo(&env.chats_dir().join("F1F.jsonl"));
    let rows = list_json(&env);
    assert_eq!(row(&rows, "F1F")["damaged"], true);
    assert!(row(&rows, &good)["damaged"].is_null());
    env.run(&["__complete", "chats"]).success();
    let out = env.run(&["chat", "show", "F1F"]);
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    let out = env.run(&["chat", "F1F", "hi"]);
    assert_eq!(out.code, Some(3), "{out:?}");
    let out = env.run(&["chat", "delete", "F1F"]);
    assert_eq!(out.code, Some(3), "{out:?}");
    env.run(&["chat", "gc", "--older-than", "0s", "--dry-run"])
        .success();
}

#[test]
fn a_symlinked_chat_is_refused_clearly_and_left_alone() {
    let env = Env::echo();
    let id = env.start("hello");
    let target = env.project.join("elsewhere.jsonl");
    fs::rename(env.chat_path(&id), &target).unwrap();
    std::os::unix::fs::symlink(&target, env.chat_path(&id)).unwrap();
    let before = fs::read(&target).unwrap();
    for args in [
        vec!["chat", id.as_str(), "more"],
        vec!["chat", "rename", id.as_str(), "t"],
        vec!["chat", "show", id.as_str()],
    ] {
        let out = env.run(&args);
        assert_eq!(out.code, Some(3), "{out:?}");
        assert!(out.stderr.contains("symbolic link"), "{}", out.stderr);
    }
    assert_eq!(fs::read(&target).unwrap(), before);
    assert!(
        fs::symlink_metadata(env.chat_path(&id))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(row(&list_json(&env), &id)["damaged"], true);
}

#[test]
fn a_torn_tail_or_a_blank_line_is_not_damage() {
    let env = Env::echo();
    let id = env.start("first");
    env.run(&["chat", &id, "second"]).success();
    env.append_raw(&id, b"   \n{\"type\":\"message\",\"role\":\"us");
    let rows = list_json(&env);
    let r = row(&rows, &id);
    assert!(r["damaged"].is_null(), "{r}");
    assert_eq!(r["turns"], 2, "{r}");
    // The same at the end of a large chat.
    env.write_chat(
        "B1G",
        &[
            header("B1G", json!({})),
            message("user", "q", 1),
            message("assistant", &"b".repeat(1 << 20), 1),
            message("user", "q", 2),
            message("assistant", "a", 2),
        ],
    );
    env.append_raw("B1G", b"   \n{\"type\":\"message\",\"role\":\"us");
    let r = row(&list_json(&env), "B1G").clone();
    assert!(r["damaged"].is_null(), "{r}");
    assert_eq!(r["turns"], 2, "{r}");
}

#[test]
fn a_damaged_chat_can_still_be_exported_as_salvage() {
    let env = Env::echo();
    let id = env.start("first");
    env.run(&["chat", &id, "second"]).success();
    let text = fs::read_to_string(env.chat_path(&id)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "{\"type\":\"message\",\"ro";
    fs::write(env.chat_path(&id), format!("{}\n", lines.join("\n"))).unwrap();
    // show still refuses and says where; export salvages what can be read, and says so.
    let shown = env.run(&["chat", "show", &id]);
    assert_eq!(shown.code, Some(3), "{shown:?}");
    let out = env
        .run(&["chat", "export", &id, "--format", "json"])
        .success();
    assert!(out.stderr.contains("line 3"), "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).expect("export is JSON");
    let records = doc["records"].as_array().unwrap();
    assert_eq!(records.len(), 3, "{doc}");
    assert_eq!(records[0]["content"], "first");
    assert_eq!(
        env.bytes(&id),
        format!("{}\n", lines.join("\n")).into_bytes(),
        "untouched"
    );
}
