//! `ai kb copy NAME --to …` (issue 18): a knowledge base moved between a SQLite file and a real
//! PostgreSQL with pgvector (tests/support/postgres.rs) without embedding anything again, and
//! never half: refused targets, Ctrl+C, kill -9.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::postgres::{self, PASSWORD};
use crate::support::*;

/// The team notes of the PostgreSQL tests, and an HTML page without text.
fn notes(env: &Env) -> PathBuf {
    postgres::team_notes(env);
    env.project_file(
        "notes/empty.html",
        "<html><body><img src=\"x.png\"></body></html>",
    );
    env.project.join("notes")
}

const EMBED: [&str; 4] = [
    "--embed",
    "openai:text-embedding-3-small",
    "--dimensions",
    "64",
];

const QUERIES: &[&str] = &[
    "apple pie with butter",
    "nightly database dump",
    "green tea",
];

fn search(env: &Env, query: &str) -> Vec<Value> {
    let out = env
        .run(&["kb", "search", "team", query, "--json"])
        .success();
    out.json().as_array().expect("a JSON array").clone()
}

/// What a search found, without the scores (their scales differ between stores).
fn found(hits: &[Value]) -> Vec<(String, String, Value, Value)> {
    hits.iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap_or_default().to_owned(),
                h["path"].as_str().unwrap_or_default().to_owned(),
                h["lines"].clone(),
                h["passage"].clone(),
            )
        })
        .collect()
}

/// `kb show` of every note, as JSON (text, links, notes linking to it).
fn shows(env: &Env) -> Vec<Value> {
    ["e0d27e3ad", "a1b2c3d4e", "Apple pie recipe", "sub/tea.md"]
        .iter()
        .map(|id| {
            env.run(&["kb", "show", "team", id, "--json"])
                .success()
                .json()
        })
        .collect()
}

/// `kb stats` without what differs between stores (where it lives, its size on disk).
fn stats(env: &Env) -> Value {
    let mut s = env.run(&["kb", "stats", "team", "--json"]).success().json();
    let o = s.as_object_mut().expect("an object");
    o.remove("store");
    o.remove("disk_bytes");
    s
}

/// A sync that finds nothing to do, and embeds nothing.
fn sync_does_nothing(env: &Env, server: &Server) {
    let before = embedding::hits(server);
    let out = env.run(&["kb", "sync", "team", "--json"]).success().json();
    let c = &out[0];
    for k in ["added", "updated", "deleted", "metadata", "embedded"] {
        assert_eq!(c[k], 0, "{k}: {out}");
    }
    assert_eq!(c["unchanged"], 4, "{out}");
    assert_eq!(embedding::hits(server), before, "the sync embedded: {out}");
}

/// The shared PostgreSQL server, a fresh database in it and its URL; `None` (the test is
/// skipped) on the PostgreSQL pass, where a copy test would find its base already there, or
/// when there is no server.
fn server_for_copies() -> Option<(&'static postgres::Pg, String, String)> {
    if kb_store::sqlite_only("a copy test puts its bases on each store itself") {
        return None;
    }
    let pg = postgres::shared()?;
    let db = pg.database();
    let url = pg.url(&db);
    Some((pg, db, url))
}

#[test]
fn a_base_copied_to_postgres_and_back_answers_as_before_without_embedding_again() {
    let Some((pg, db, url)) = server_for_copies() else {
        return;
    };
    let server = embedding::server();
    let env = Env::for_provider("openai", &server);
    let dir = notes(&env);
    let dir = dir.to_str().expect("UTF-8");
    env.run(&[&["kb", "add", "team", dir][..], &EMBED].concat())
        .success();
    let hits: Vec<Vec<Value>> = QUERIES.iter().map(|q| search(&env, q)).collect();
    let (shown, stated) = (shows(&env), stats(&env));
    assert_eq!(stated["embedded"], stated["chunks"], "{stated}");
    let kb = env.path("home/kb");

    // To PostgreSQL: nothing embedded, the config points there, the password nowhere.
    let before = embedding::hits(&server);
    let out = env
        .run(&["kb", "copy", "team", "--to", &url, "--json"])
        .success();
    assert_eq!(embedding::hits(&server), before, "the copy embedded");
    assert!(
        !out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD),
        "{out:#?}"
    );
    let copied = out.json();
    assert_eq!(copied["notes"], 4, "{copied}");
    assert_eq!(copied["chunks"], stated["chunks"], "{copied}");
    assert_eq!(copied["embedded"], stated["chunks"], "{copied}");
    assert_eq!(copied["unread"], 1, "{copied}");
    assert!(copied["links"].as_u64().unwrap_or(0) >= 2, "{copied}");
    assert!(
        copied["store"]
            .as_str()
            .is_some_and(|s| s.contains(&format!("127.0.0.1:{}", pg.port))),
        "{copied}"
    );
    assert_eq!(env.config()["kb"]["bases"]["team"]["store"], url.as_str());
    // The SQLite index is left as it was.
    assert!(kb.join("team.sqlite").is_file());
    assert_eq!(pg.psql(&db, "SELECT count(*) FROM ai_kb_team.notes"), "4");
    // The same answers, notes, links and counts, from the server.
    for (q, a) in QUERIES.iter().zip(&hits) {
        assert_eq!(found(a), found(&search(&env, q)), "{q}");
    }
    assert_eq!(shows(&env), shown);
    assert_eq!(stats(&env), stated);
    let skipped = env
        .run(&["kb", "stats", "team", "--skipped", "--json"])
        .success()
        .json();
    assert_eq!(skipped["no_text"], 1, "{skipped}");
    // Vectors in a vector(64) column with its HNSW index, as a sync makes them.
    pg.assert_vectors(&db, "team", 64);
    // The counts of words and passages searches read, those of the rows copied.
    pg.assert_counts(&db, "team");
    sync_does_nothing(&env, &server);
    // (which says when it ran)
    let stated = stats(&env);

    // Back to SQLite: the old file is there, so it is refused without --force.
    let refused = env.run(&["kb", "copy", "team", "--to", "sqlite"]);
    assert_eq!(refused.code, Some(2), "{refused:#?}");
    assert!(refused.error().contains("already holds"), "{refused:#?}");
    assert!(refused.stderr.contains("--force"), "{refused:#?}");
    assert!(!refused.stderr.contains(PASSWORD), "{refused:#?}");
    assert_eq!(env.config()["kb"]["bases"]["team"]["store"], url.as_str());
    let before = embedding::hits(&server);
    env.run(&["kb", "copy", "team", "--to", "sqlite", "--force"])
        .success();
    assert_eq!(embedding::hits(&server), before, "the copy embedded");
    assert!(env.config()["kb"]["bases"]["team"].get("store").is_none());
    assert!(kb.join("team.vectors").is_file(), "no side file of vectors");
    assert!(!kb.join("team.copy.sqlite").exists());
    // Exactly as before the round trip, scores and all.
    for (q, a) in QUERIES.iter().zip(&hits) {
        assert_eq!(a, &search(&env, q), "{q}");
    }
    assert_eq!(shows(&env), shown);
    assert_eq!(stats(&env), stated);
    sync_does_nothing(&env, &server);
    // The base on the server is left as it was (others may use it).
    assert_eq!(pg.psql(&db, "SELECT count(*) FROM ai_kb_team.notes"), "4");

    // The server holds the base already: refused without --force, replaced with it.
    let refused = env.run(&["kb", "copy", "team", "--to", &url]);
    assert_eq!(refused.code, Some(2), "{refused:#?}");
    assert!(refused.error().contains("already holds"), "{refused:#?}");
    assert!(!refused.stderr.contains(PASSWORD), "{refused:#?}");
    assert!(env.config()["kb"]["bases"]["team"].get("store").is_none());
    env.run(&["kb", "copy", "team", "--to", &url, "--force"])
        .success();
    assert_eq!(env.config()["kb"]["bases"]["team"]["store"], url.as_str());
    // A sync goes on from the copy: a new note gets new rows and is found.
    env.project_file(
        "notes/walrus.md",
        "# Walrus\n\nThe walrus naps on the ice.\n",
    );
    let out = env.run(&["kb", "sync", "team", "--json"]).success().json();
    assert_eq!(out[0]["added"], 1, "{out}");
    assert_eq!(out[0]["embedded"], 1, "{out}");
    assert_eq!(search(&env, "walrus ice")[0]["path"], "walrus.md");
    pg.assert_counts(&db, "team");
    assert_eq!(
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'ai_kbcopy%'"
        ),
        "0"
    );
}

#[test]
fn a_copy_names_what_it_cannot_do() {
    if kb_store::sqlite_only("a copy test puts its bases on each store itself") {
        return;
    }
    let env = Env::new();
    let dir = notes(&env);
    env.run(&["kb", "add", "team", dir.to_str().expect("UTF-8")])
        .success();
    let out = env.run(&["kb", "copy", "team", "--to", "sqlite"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(
        out.error().contains("already lives in a SQLite file"),
        "{out:#?}"
    );
    let out = env.run(&["kb", "copy", "team", "--to", "mysql://u:hunter2@h/db"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(out.error().contains("not a store"), "{out:#?}");
    assert!(!out.stderr.contains("hunter2"), "{out:#?}");
    let out = env.run(&["kb", "copy", "nope", "--to", "sqlite"]);
    assert_eq!(out.code, Some(4), "{out:#?}");
    // A server that cannot be reached: a clear error, and the base stays where it was.
    let out = env.run(&[
        "kb",
        "copy",
        "team",
        "--to",
        "postgres://ann:hunter2@127.0.0.1:1/team",
    ]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("127.0.0.1:1"), "{out:#?}");
    assert!(!out.stderr.contains("hunter2"), "{out:#?}");
    assert!(env.config()["kb"]["bases"]["team"].get("store").is_none());
    env.run(&["kb", "search", "team", "tea"]).success();
}

/// A session that holds the links of base `team` on the server, so a copy from there stops
/// when it reaches them (after its notes and passages), until the session ends.
fn hold_links(pg: &postgres::Pg, db: &str) -> postgres::Held {
    let held = pg.hold(
        db,
        "BEGIN; LOCK TABLE ai_kb_team.links IN ACCESS EXCLUSIVE MODE;",
    );
    wait_for("the links locked", || {
        pg.psql(
            db,
            "SELECT count(*) FROM pg_locks WHERE relation = 'ai_kb_team.links'::regclass
             AND mode = 'AccessExclusiveLock' AND granted",
        ) == "1"
    });
    held
}

/// Wait until `ai`'s session on the server waits for a lock.
fn wait_blocked(pg: &postgres::Pg, db: &str, event: &str) {
    wait_for("the copy waiting for the lock", || {
        pg.psql(
            db,
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ai'
                 AND datname = '{db}' AND wait_event_type = 'Lock' AND wait_event = '{event}'"
            ),
        ) == "1"
    });
}

#[test]
fn a_copy_from_postgres_stopped_midway_leaves_the_base_where_it_was() {
    let Some((pg, db, url)) = server_for_copies() else {
        return;
    };
    let env = Env::new();
    let dir = notes(&env);
    env.run(&[
        "kb",
        "add",
        "team",
        dir.to_str().expect("UTF-8"),
        "--store",
        &url,
    ])
    .success();
    let kb = env.path("home/kb");
    let where_it_was = || {
        assert_eq!(env.config()["kb"]["bases"]["team"]["store"], url.as_str());
        assert!(!kb.join("team.sqlite").exists());
        assert_eq!(search(&env, "sicherung")[0]["id"], "e0d27e3ad");
    };

    // Ctrl+C while it waits for the links: it stops there, and undoes what it wrote.
    let held = hold_links(pg, &db);
    let copy = env.spawn(&["kb", "copy", "team", "--to", "sqlite"]);
    wait_blocked(pg, &db, "relation");
    assert!(kb.join("team.copy.sqlite").is_file(), "not started");
    signal(copy.pid(), libc::SIGINT);
    drop(held);
    let out = copy.wait();
    assert_eq!(out.code, Some(130), "{out:#?}");
    assert!(out.stderr.contains("nothing was changed"), "{out:#?}");
    assert!(!kb.join("team.copy.sqlite").exists());
    where_it_was();

    // kill -9 at the same point: the half copy beside the index is never used.
    let held = hold_links(pg, &db);
    let mut copy = env.spawn(&["kb", "copy", "team", "--to", "sqlite"]);
    wait_blocked(pg, &db, "relation");
    copy.kill();
    let _ = copy.wait_status();
    drop(held);
    where_it_was();
    let out = env.run(&["kb", "list"]).success();
    assert!(!out.stderr.contains("team.copy"), "{out:#?}");
    // The next copy starts again and finishes.
    env.run(&["kb", "copy", "team", "--to", "sqlite"]).success();
    assert!(!kb.join("team.copy.sqlite").exists());
    assert!(env.config()["kb"]["bases"]["team"].get("store").is_none());
    assert_eq!(search(&env, "sicherung")[0]["id"], "e0d27e3ad");
}

#[test]
fn a_copy_to_postgres_killed_before_its_commit_leaves_no_half_base() {
    let Some((pg, db, url)) = server_for_copies() else {
        return;
    };
    let server = embedding::server();
    let env = Env::for_provider("openai", &server);
    let dir = notes(&env);
    env.run(
        &[
            &["kb", "add", "team", dir.to_str().expect("UTF-8")][..],
            &EMBED,
        ]
        .concat(),
    )
    .success();
    let hits = search(&env, "green tea");
    // A sync of the base on the server holds its lock: the copy writes everything, then
    // waits for it to take the base's place.
    let sync = pg.hold(&db, "SELECT pg_advisory_lock(hashtext('ai_kb_team'));");
    wait_for("the sync's lock", || {
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted",
        ) == "1"
    });
    let mut copy = env.spawn(&["kb", "copy", "team", "--to", &url]);
    wait_blocked(pg, &db, "advisory");
    // Written in its own transaction: nobody sees any of it.
    let visible = "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'ai_kb%'";
    assert_eq!(pg.psql(&db, visible), "0");
    copy.kill();
    let _ = copy.wait_status();
    drop(sync);
    // The server rolled it back: no base, no staging schema; the base is where it was.
    wait_for("the copy's session gone", || {
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ai'",
        ) == "0"
    });
    assert_eq!(pg.psql(&db, visible), "0");
    assert!(env.config()["kb"]["bases"]["team"].get("store").is_none());
    assert_eq!(search(&env, "green tea"), hits);
    // Run again, it finishes: no --force needed, nothing of the killed one is in the way.
    env.run(&["kb", "copy", "team", "--to", &url]).success();
    assert_eq!(found(&search(&env, "green tea")), found(&hits));
}

/// A port that takes connections (the kernel completes them) and never answers.
fn silent_port() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = l.local_addr().expect("its address").port();
    (l, port)
}

#[test]
fn a_copy_to_a_port_that_never_answers_as_postgresql_ends_with_an_error_not_a_hang() {
    if kb_store::sqlite_only("a copy test puts its bases on each store itself") {
        return;
    }
    let env = Env::new();
    let dir = notes(&env);
    env.run(&["kb", "add", "team", dir.to_str().expect("UTF-8")])
        .success();
    // The connect timeout counts until the server signed the client in, as libpq's does.
    let (_silent, port) = silent_port();
    let url = format!("postgres://ann:hun/ter2@127.0.0.1:{port}/team?connect_timeout=1");
    let out = env.run(&["kb", "copy", "team", "--to", &url]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(out.error().contains("did not answer"), "{out:#?}");
    assert!(out.stderr.contains("connect_timeout"), "{out:#?}");
    assert!(!out.stderr.contains("ter2"), "{out:#?}");
    assert!(env.config()["kb"]["bases"]["team"].get("store").is_none());

    // Without a timeout in the URL (10 s), a termination signal ends the wait at once, and
    // the base is where it was.
    let (silent, port) = silent_port();
    let url = format!("postgres://ann:hunter2@127.0.0.1:{port}/team");
    let copy = env.spawn(&["kb", "copy", "team", "--to", &url]);
    let (_conn, _) = silent.accept().expect("the copy connects");
    signal(copy.pid(), libc::SIGTERM);
    let out = copy.wait();
    assert_eq!(out.code, Some(143), "{out:#?}");
    assert!(out.stderr.contains("nothing was changed"), "{out:#?}");
    assert!(!out.stderr.contains("hunter2"), "{out:#?}");
    assert!(env.config()["kb"]["bases"]["team"].get("store").is_none());
    env.run(&["kb", "search", "team", "tea"]).success();
}
