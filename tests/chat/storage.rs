//! The chat store under hostile conditions: a full disk (a file-size limit), leftovers of
//! killed rewrites, FIFOs, symlinks and damaged entries in the chats folder.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Env, Out, ai_bin};

/// Run `ai args…` with a file-size limit of `blocks` 512-byte blocks (`ulimit -f`): a write
/// past it fails with EFBIG, as a full disk fails with ENOSPC (SIGXFSZ is ignored). Its
/// output goes to pipes: the limit would stop writes to the files a call is captured in.
pub fn run_limited(env: &Env, blocks: u64, args: &[&str]) -> Out {
    let script = r#"trap '' XFSZ; ulimit -f "$1" || exit 99; shift; exec "$@""#;
    env.program("/bin/sh")
        .arg("-c")
        .arg(script)
        .arg("sh")
        .arg(blocks.to_string())
        .arg(ai_bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .run()
}

/// Hidden files (`.…`) in a folder.
fn hidden(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_failed_header_write_leaves_no_file_and_the_name_stays_free() {
    let env = Env::echo();
    fs::create_dir_all(env.chats_dir()).unwrap();
    let out = run_limited(&env, 0, &["chat", "new", "echo", "--name", "notes"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
    assert_eq!(env.chat_files(), Vec::<String>::new(), "nothing is left");

    // The name is not blocked: the next try creates it, and it loads.
    let id = env
        .run(&["chat", "new", "echo", "--name", "notes"])
        .success()
        .stdout;
    assert_eq!(id, "notes\n");
    env.run(&["chat", "notes", "hello"]).success();
    assert_eq!(env.messages("notes").len(), 2);
    assert_eq!(env.chat_files(), ["notes.jsonl"]);
}

#[test]
fn a_new_chat_file_is_never_seen_without_its_header() {
    // Many creations racing with readers of the same name: a reader finds no chat, or a
    // whole one; never an empty file it calls damaged.
    let env = Env::echo();
    let writers: Vec<_> = (0..6)
        .map(|i| env.spawn(&["--chat", "race", &format!("hello {i}")]))
        .collect();
    for _ in 0..20 {
        let out = env.run(&["chat", "show", "race"]);
        assert!(
            out.code == Some(0) || out.code == Some(4),
            "show during creation: {out:?}"
        );
    }
    for w in writers {
        w.wait().success();
    }
    assert_eq!(env.messages("race").len(), 12);
    assert_eq!(hidden(&env.chats_dir()), Vec::<String>::new());
}

/// The PID of a process that has ended.
fn dead_pid() -> u32 {
    let mut child = Command::new("/bin/true").spawn().expect("run true");
    let pid = child.id();
    child.wait().expect("wait true");
    pid
}

#[test]
fn delete_removes_leftovers_of_killed_rewrites() {
    let env = Env::echo();
    let id = env.start("secret plans");
    let dead = dead_pid();
    let old = env.chats_dir().join(format!(".{id}.{dead}.tmp"));
    let new = env.chats_dir().join(format!(".{id}.{dead}.3.tmp"));
    fs::write(&old, "secret plans copy\n").unwrap();
    fs::write(&new, "secret plans copy\n").unwrap();
    env.run(&["chat", "delete", &id]).success();
    assert_eq!(env.chat_files(), Vec::<String>::new());
}

#[test]
fn gc_removes_leftovers_whose_writer_is_gone_and_keeps_live_ones() {
    let env = Env::echo();
    let id = env.start("hello");
    let dead = dead_pid();
    let gone = env.chats_dir().join(format!(".ZZ9.{dead}.tmp"));
    let live = env
        .chats_dir()
        .join(format!(".{id}.{}.0.tmp", std::process::id()));
    fs::write(&gone, "old text\n").unwrap();
    fs::write(&live, "being written\n").unwrap();
    env.run(&["chat", "gc", "--older-than", "30d"]).success();
    assert_eq!(
        hidden(&env.chats_dir()),
        [format!(".{id}.{}.0.tmp", std::process::id())]
    );
}

#[test]
fn a_rewrite_removes_leftovers_of_earlier_killed_rewrites() {
    let env = Env::echo();
    let id = env.start("hello");
    let dead = dead_pid();
    let left = env.chats_dir().join(format!(".{id}.{dead}.tmp"));
    fs::write(&left, "an older copy\n").unwrap();
    env.run(&["chat", "rename", &id, "new title"]).success();
    assert!(!left.exists());
    assert_eq!(env.header(&id)["title"], "new title");
}

#[test]
fn home_leftovers_are_removed_by_the_next_save() {
    let env = Env::echo();
    let dead = dead_pid();
    let last = env.home.join(format!(".last_chat.{dead}.tmp"));
    let config = env.home.join(format!(".config.json.{dead}.tmp"));
    fs::write(&last, "K7Q\n").unwrap();
    fs::write(&config, "{}\n").unwrap();
    env.run(&["hello"]).success();
    assert!(
        !last.exists(),
        "a turn's last_chat write removes its leftovers"
    );
    env.run(&["default", "echo"]).success();
    assert!(!config.exists(), "a config save removes its leftovers");
    let temps: Vec<String> = hidden(&env.home)
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(temps, Vec::<String>::new());
}

#[test]
fn a_failed_append_leaves_nothing_partial_and_says_the_turn_was_not_saved() {
    let env = Env::echo();
    let id = env.start("one");
    env.run(&["chat", &id, "two"]).success();
    let before = env.bytes(&id);
    // Room for a few more bytes, not for a 20,000-character turn.
    let blocks = before.len() as u64 / 512 + 2;
    let big = "x".repeat(20_000);
    let out = run_limited(&env, blocks, &["chat", &id, &big]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("this turn was not saved"),
        "{}",
        out.stderr
    );
    assert_eq!(env.bytes(&id), before, "nothing partial stays on disk");

    // The chat goes on as if the failed turn never happened.
    let out = env.run(&["chat", &id, "three"]).success();
    assert!(!out.stderr.contains("cut short"), "{}", out.stderr);
    assert_eq!(env.messages(&id).len(), 6);
}

/// A saved one-shot in a new chat costs one `fdatasync` (header and turn together) and one
/// `fsync` of the folder, not three syncs. Needs `strace` (Debian: `apt-get install strace`);
/// skipped without it unless `AI_REQUIRE_STRACE=1` (as `.ci/run` sets).
#[test]
fn a_saved_one_shot_syncs_once_and_its_folder_once() {
    let env = Env::new();
    let log = env.path("strace.log");
    let Some(strace) = ["/usr/bin/strace", "/bin/strace"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        assert!(
            std::env::var("AI_REQUIRE_STRACE").as_deref() != Ok("1"),
            "strace is not installed (AI_REQUIRE_STRACE=1 is set)"
        );
        eprintln!("skipped: strace is not installed");
        return;
    };
    let traced = env
        .program(strace)
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync,sync_file_range",
            "-o",
        ])
        .arg(&log)
        .arg(ai_bin())
        .args(["echo", "hello"])
        .run();
    if !traced.status.success() || !log.exists() {
        assert!(
            std::env::var("AI_REQUIRE_STRACE").as_deref() != Ok("1"),
            "strace could not run (AI_REQUIRE_STRACE=1 is set): {}",
            traced.stderr
        );
        eprintln!("skipped: strace is not installed or cannot trace here");
        return;
    }
    let calls = fs::read_to_string(&log).unwrap();
    let syncs: Vec<&str> = calls.lines().filter(|l| l.contains("sync")).collect();
    assert_eq!(syncs.len(), 2, "{calls}");
    assert_eq!(
        syncs.iter().filter(|l| l.contains("fdatasync(")).count(),
        1,
        "{calls}"
    );
    // And the chat is whole.
    let id = env.chat_ids().pop().expect("a chat");
    assert_eq!(env.messages(&id).len(), 2);
    // A second turn on it: one sync, the folder is not synced again.
    fs::remove_file(&log).unwrap();
    env.program(strace)
        .args(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&log)
        .arg(ai_bin())
        .args(["chat", &id, "echo", "again"])
        .run();
    let calls = fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().filter(|l| l.contains("sync")).count(),
        1,
        "{calls}"
    );
}

/// A new chat whose first turn never reached the disk (a crash) is an empty file: listed as
/// such, with how to remove it.
#[test]
fn an_empty_chat_file_is_listed_as_an_unsaved_new_chat() {
    let env = Env::new();
    fs::create_dir_all(env.chats_dir()).unwrap();
    fs::write(env.chats_dir().join("ABC.jsonl"), "").unwrap();
    let out = env.run(&["chat", "list"]).success();
    assert!(
        out.stdout
            .contains("(empty: its first turn was never saved"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("ai chat delete ABC"), "{}", out.stdout);
}
