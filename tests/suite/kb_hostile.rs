//! Knowledge bases against a hostile notes folder and home (hostile test 2): symlinks out of
//! the folder, FIFOs and devices in a note's place, a folder that cannot be listed, a note that
//! claims another's ID, a FIFO in place of the index's side files.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

/// A notes folder with two notes; its path.
fn folder(env: &Env) -> PathBuf {
    env.notes_folder(
        "notes",
        [
            ("a.md", "# Alpha\n\nalphaword here.\n"),
            ("sub/s.md", "# Sub\n\nsubword here.\n"),
        ],
    )
}

/// `ai kb add notes DIR`, then the counts of a sync that finds nothing new.
fn add(env: &Env, dir: &Path) -> Value {
    env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
        .success();
    sync(env)
}

fn sync(env: &Env) -> Value {
    env.run(&["kb", "sync", "notes", "--json"]).success().json()[0].clone()
}

fn hits(env: &Env, query: &str) -> Vec<String> {
    let out = env
        .run(&["kb", "search", "notes", query, "--json"])
        .success();
    out.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_owned())
        .collect()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

#[test]
fn a_symlink_out_of_the_folder_is_not_indexed() {
    // H2-6: /etc/passwd and a key file elsewhere were indexed, sent and served.
    let env = Env::echo();
    let dir = folder(&env);
    let secret = env.path("elsewhere/secret.txt");
    std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
    std::fs::write(&secret, "outsideword: the key is sk-123\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("outside_secret.md")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("etc_passwd.txt")).unwrap();
    // A link to a note inside the folder is still followed.
    std::os::unix::fs::symlink(dir.join("a.md"), dir.join("alias.md")).unwrap();
    let j = add(&env, &dir);
    assert_eq!(j["skipped"]["links"], 2, "{j}");
    assert!(hits(&env, "outsideword").is_empty());
    assert!(hits(&env, "root").is_empty());
    assert!(!hits(&env, "alphaword").is_empty());
}

#[test]
fn show_refuses_a_note_swapped_for_a_fifo_a_device_or_a_link_out() {
    // H2-6: `kb show` (and the page's note view) read whatever the path had become.
    let env = Env::echo();
    let dir = folder(&env);
    add(&env, &dir);
    let note = dir.join("a.md");
    let outside = env.path("outside.md");
    std::fs::write(&outside, "# Outside\n\nsecret text\n").unwrap();
    let swaps: [(&str, &dyn Fn()); 3] = [
        ("a FIFO", &|| mkfifo(&note)),
        ("/dev/zero", &|| {
            std::os::unix::fs::symlink("/dev/zero", &note).unwrap()
        }),
        ("a link out", &|| {
            std::os::unix::fs::symlink(&outside, &note).unwrap()
        }),
    ];
    for (what, swap) in swaps {
        let _ = std::fs::remove_file(&note);
        swap();
        let out = env.run(&["kb", "show", "notes", "a.md"]);
        assert_eq!(out.code, Some(4), "{what}: {out:#?}");
        assert!(out.stderr.contains("cannot be read"), "{what}: {out:#?}");
        assert!(!out.stdout.contains("secret text"), "{what}: {out:#?}");
    }
}

/// `ai kb sync notes --json` without the power to read what its permissions forbid, even as
/// root (CI runs as root): the bounding set loses the capabilities that bypass them.
fn sync_without_override(env: &Env) -> Out {
    let mut args: Vec<String> = Vec::new();
    if unsafe { libc::geteuid() } == 0 {
        for flag in ["--inh-caps", "--bounding-set"] {
            args.push(format!("{flag}=-dac_override,-dac_read_search"));
        }
    }
    let program: &Path = if args.is_empty() {
        ai_bin()
    } else {
        args.push(ai_bin().to_str().unwrap().to_owned());
        Path::new("/usr/bin/setpriv")
    };
    args.extend(["kb", "sync", "notes", "--json"].map(String::from));
    env.program(program).args(&args).run()
}

#[test]
fn a_folder_that_cannot_be_listed_keeps_its_notes() {
    // H2-7: its notes (and their paid vectors) were deleted as gone.
    use std::os::unix::fs::PermissionsExt;
    let env = Env::echo();
    let dir = folder(&env);
    add(&env, &dir);
    let sub = dir.join("sub");
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = sync_without_override(&env);
    std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.code, Some(0), "{out:#?}");
    let j = &out.json()[0];
    assert_eq!(j["deleted"], 0, "{j}");
    assert_eq!(j["skipped"]["unreadable"], 1, "{j}");
    assert_eq!(hits(&env, "subword"), ["sub/s.md"]);
    // Listed again, and then gone: now it is deleted.
    std::fs::remove_dir_all(&sub).unwrap();
    assert_eq!(sync(&env)["deleted"], 1);
    assert!(hits(&env, "subword").is_empty());
}

#[test]
fn a_fifo_in_place_of_the_side_files_hangs_nothing() {
    if kb_store::sqlite_only("FIFOs in place of the SQLite file and its vector side file") {
        return;
    }
    // H2-13: a FIFO named NAME.vectors blocked every search and grounded turn.
    let s = embedding::server();
    let env = Env::for_provider("openai", &s);
    let dir = folder(&env);
    env.run(&[
        "kb",
        "add",
        "notes",
        dir.to_str().unwrap(),
        "--embed",
        "openai:text-embedding-3-small",
    ])
    .success();
    let side = env.home.join("kb/notes.vectors");
    std::fs::remove_file(&side).unwrap();
    mkfifo(&side);
    assert_eq!(hits(&env, "alphaword")[0], "a.md");
    // The next sync puts a real side file back.
    sync(&env);
    assert!(std::fs::metadata(&side).unwrap().is_file());
    // The index itself: a clear error, not a wait.
    let index = env.home.join("kb/notes.sqlite");
    std::fs::remove_file(&index).unwrap();
    mkfifo(&index);
    let out = env.run(&["kb", "search", "notes", "alphaword"]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.stderr.contains("not a regular file"), "{out:#?}");
    assert!(out.stderr.contains("sync --full"), "{out:#?}");
    env.run(&["kb", "sync", "--full", "notes"]).success();
    assert_eq!(hits(&env, "alphaword")[0], "a.md");
}

#[test]
fn a_front_matter_claim_cannot_take_over_an_indexed_note() {
    // H2-11: a file that sorted first and claimed another note's ID took it over.
    let env = Env::echo();
    let dir = env.notes_folder(
        "notes",
        [("01_How_to_a1b2c3d4e.md", "# How to\n\nrightful text\n")],
    );
    add(&env, &dir);
    std::fs::write(
        dir.join("00_claim.md"),
        "---\nid: a1b2c3d4e\n---\nclaimant text\n",
    )
    .unwrap();
    let out = env.run(&["kb", "sync", "notes", "--json"]).success();
    let j = &out.json()[0];
    assert_eq!(
        (&j["updated"], &j["added"]),
        (&Value::from(0), &Value::from(0)),
        "{j}"
    );
    assert_eq!(j["skipped"]["duplicate"], 1, "{j}");
    assert!(
        out.stderr
            .contains("00_claim.md: note ID a1b2c3d4e is already used"),
        "{out:#?}"
    );
    let shown = env.run(&["kb", "show", "notes", "a1b2c3d4e"]).success();
    assert!(shown.stdout.contains("rightful text"), "{shown:#?}");
    // Two files that swap their IDs still swap them.
    std::fs::remove_file(dir.join("00_claim.md")).unwrap();
    std::fs::write(dir.join("one.md"), "---\nid: 111aaa111\n---\nfirst\n").unwrap();
    std::fs::write(dir.join("two.md"), "---\nid: 222bbb222\n---\nsecond\n").unwrap();
    sync(&env);
    std::fs::write(dir.join("one.md"), "---\nid: 222bbb222\n---\nnow two\n").unwrap();
    std::fs::write(dir.join("two.md"), "---\nid: 111aaa111\n---\nnow one\n").unwrap();
    let j = sync(&env);
    assert_eq!(
        (&j["updated"], &j["skipped"]["duplicate"]),
        (&Value::from(2), &Value::from(0)),
        "{j}"
    );
    let shown = env.run(&["kb", "show", "notes", "111aaa111"]).success();
    assert!(shown.stdout.contains("now one"), "{shown:#?}");
}

#[test]
fn a_full_rebuild_leaves_the_old_index_to_searches_until_it_is_done() {
    // H2-12: `kb sync --full` removed the index first: searches then found none, then a part.
    // On PostgreSQL it dropped the base's schema and filled it again, with the same effect.
    use std::os::unix::fs::MetadataExt;
    let env = Env::echo();
    let pg = kb_store::on_postgres();
    // Enough notes that the rebuild is still under way when it is stopped (a server takes
    // longer a note, and its first step is the schema beside the base's).
    let n = if pg { 600 } else { 3000 };
    let dir = env.notes_folder(
        "notes",
        (0..n).map(|i| (format!("n{i:04}.md"), format!("# Note {i}\n\nword{i}\n"))),
    );
    add(&env, &dir);
    let index = env.home.join("kb/notes.sqlite");
    let last = format!("word{}", n - 1);
    // The index as it is: the file's inode, or the table's OID on the server.
    let now = || {
        if pg {
            env.kb
                .psql("SELECT coalesce(to_regclass('ai_kb_notes.notes')::oid, 0)")
                .parse::<u64>()
                .expect("an OID")
        } else {
            std::fs::metadata(&index).map_or(0, |m| m.ino())
        }
    };
    // Where a rebuild is made beside the index: a file, or a schema.
    let beside_exists = || {
        if pg {
            env.kb
                .psql("SELECT to_regnamespace('ai_kbnew_notes') IS NOT NULL")
                == "t"
        } else {
            env.home.join("kb/notes.rebuild.sqlite").exists()
        }
    };
    let inode = now();
    let mut sync = env.spawn(&["kb", "sync", "--full", "notes"]);
    // Stop the rebuild as soon as it has begun (a new index beside, or in place of, the old).
    let start = std::time::Instant::now();
    loop {
        if beside_exists() || now() != inode || !sync.running() {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "the rebuild never began");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    signal(sync.pid(), libc::SIGSTOP);
    for word in ["word0", last.as_str()] {
        let found = hits(&env, word);
        assert_eq!(found.len(), 1, "{word}: {found:?}");
    }
    signal(sync.pid(), libc::SIGCONT);
    assert!(sync.wait_status().success());
    assert!(!beside_exists());
    assert_eq!(hits(&env, &last), [format!("n{:04}.md", n - 1)]);
    let stats = env.run(&["kb", "stats", "notes"]).success();
    assert!(stats.stdout.contains(&n.to_string()), "{stats:#?}");
}
