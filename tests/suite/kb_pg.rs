//! Knowledge bases on PostgreSQL with pgvector (issue 18): the server the tests start
//! themselves (tests/support/postgres.rs).

use crate::support::postgres;
#[test]
fn the_test_server_has_pgvector_pg_trgm_and_unaccent() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    pg.psql(
        &db,
        "CREATE EXTENSION vector; CREATE EXTENSION pg_trgm; CREATE EXTENSION unaccent",
    );
    // The first cosine distance is where a pgvector built for other CPUs dies.
    let d = pg.psql(
        &db,
        "SELECT round(('[1,0,0]'::vector <=> '[0,1,0]'::vector)::numeric, 3)",
    );
    assert_eq!(d, "1.000");
    assert_eq!(
        pg.psql(&db, "SELECT unaccent('Über Straße')"),
        "Uber Strasse"
    );
    // Each test has a database of its own.
    assert_ne!(pg.database(), db);
}

use std::path::PathBuf;

use serde_json::Value;

use crate::support::postgres::{PASSWORD, Pg};
use crate::support::*;

fn notes(env: &Env) -> PathBuf {
    postgres::team_notes(env)
}

fn search(env: &Env, base: &str, query: &str) -> Vec<Value> {
    let out = env.run(&["kb", "search", base, query, "--json"]).success();
    out.json().as_array().expect("a JSON array").clone()
}

/// What a search found, without the scores (their scales differ between stores).
fn found(hits: &[Value]) -> Vec<(String, String, Value)> {
    hits.iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap_or_default().to_owned(),
                h["path"].as_str().unwrap_or_default().to_owned(),
                h["lines"].clone(),
            )
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "database backup",
    "sicherung",
    "uber brucke",
    "strasse",
    "Apfelkuchen",
    "restore every month",
    "tea",
];

#[test]
fn a_base_on_postgres_answers_as_the_sqlite_one_does() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    // Another tea.md, further down: `[[tea]]` reaches the one with the shorter path.
    env.project_file("notes/archive/old/tea.md", "# Old tea\n\nBlack tea.\n");
    // Wikilinks by every rule: file name in any case, title, alias, ID, path; one to nothing;
    // a markdown link by path.
    env.project_file(
        "notes/links.md",
        "# Links\n\nSee [[TEA]], [[Apfelkuchen|the pie]], [[Backups of the database#Restore]] \
         and [[e0d27e3ad]].\n\nAlso [[archive/old/tea]], [[Missing note]] and \
         [the recipe](02_001_Apple_pie_recipe_f00dcafe1.md).\n",
    );
    let dir = dir.to_str().expect("UTF-8");
    env.run(&["kb", "add", "local", dir]).success();
    let url = pg.url(&db);
    let added = env
        .run(&["kb", "add", "team", dir, "--store", &url, "--json"])
        .success();
    assert!(!added.stderr.contains(PASSWORD), "{added:#?}");
    assert_eq!(added.json()["added"], 6, "{added:#?}");
    for q in QUERIES {
        let (a, b) = (search(&env, "local", q), search(&env, "team", q));
        assert!(!a.is_empty(), "{q}: nothing found in SQLite");
        assert_eq!(found(&a), found(&b), "{q}");
        assert_eq!(a[0]["passage"], b[0]["passage"], "{q}");
    }
    // kb show: the same note, and the same notes linking to it.
    let show = |base: &str| {
        env.run(&["kb", "show", base, "Apple pie recipe", "--json"])
            .success()
            .json()
    };
    let (a, b) = (show("local"), show("team"));
    assert_eq!(a["id"], b["id"]);
    assert_eq!(a["linked_from"], b["linked_from"], "{a}\n{b}");
    assert_eq!(b["linked_from"][0]["path"], "links.md", "{b}");
    assert_eq!(b["linked_from"][1]["path"], "sub/tea.md", "{b}");
    // The links of a note, resolved by the same rules on both stores, and their backlinks.
    let same_links = |env: &Env| {
        let show = |base: &str, name: &str| {
            env.run(&["kb", "show", base, name, "--json"])
                .success()
                .json()
        };
        let (a, b) = (show("local", "links"), show("team", "links"));
        assert_eq!(a["links"], b["links"], "{a}\n{b}");
        let reached: Vec<(&str, &str)> = b["links"]
            .as_array()
            .expect("links")
            .iter()
            .map(|l| {
                (
                    l["name"].as_str().unwrap_or_default(),
                    l["note"]["path"].as_str().unwrap_or("-"),
                )
            })
            .collect();
        assert_eq!(
            reached,
            [
                ("TEA", "sub/tea.md"),
                ("Apfelkuchen", "02_001_Apple_pie_recipe_f00dcafe1.md"),
                (
                    "Backups of the database",
                    "01_002_Backups_of_the_database_a1b2c3d4e.md"
                ),
                ("e0d27e3ad", "01_001_Datenbanksicherung_e0d27e3ad.md"),
                ("archive/old/tea", "archive/old/tea.md"),
                ("Missing note", "-"),
                // A markdown link to a Zettelkasten note is kept as its ID.
                ("f00dcafe1", "02_001_Apple_pie_recipe_f00dcafe1.md"),
            ],
            "{b}"
        );
        for name in ["sub/tea.md", "archive/old/tea.md", "e0d27e3ad", "a1b2c3d4e"] {
            let (a, b) = (show("local", name), show("team", name));
            assert_eq!(a["linked_from"], b["linked_from"], "{name}: {a}\n{b}");
        }
        let backups = show("team", "a1b2c3d4e");
        assert_eq!(backups["linked_from"][0]["path"], "links.md", "{backups}");
    };
    same_links(&env);
    // kb stats: the same counts; kb list says where each lives, without the password.
    let stats = |base: &str| env.run(&["kb", "stats", base, "--json"]).success().json();
    let (a, b) = (stats("local"), stats("team"));
    for k in ["notes", "chunks", "embedded"] {
        assert_eq!(a[k], b[k], "{k}: {a}\n{b}");
    }
    let list = env.run(&["kb", "list"]).success();
    assert!(
        list.stdout.contains(&format!("127.0.0.1:{}", pg.port)),
        "{list:#?}"
    );
    assert!(!list.stdout.contains(PASSWORD), "{list:#?}");
    // The tables live in a schema of their own, with the schema version in its meta table.
    assert_eq!(
        pg.psql(
            &db,
            "SELECT value FROM ai_kb_team.meta WHERE key = 'schema'"
        ),
        "3"
    );
    // A second sync with nothing changed changes nothing.
    let again = env.run(&["kb", "sync", "team", "--json"]).success().json();
    assert_eq!(again[0]["unchanged"], 6, "{again}");
    // A base of schema 1 (no links, no unread table) is migrated when opened, and its next
    // sync reads every note again to fill the links.
    pg.psql(&db, &before_counts("team"));
    pg.psql(
        &db,
        "DROP TABLE ai_kb_team.links; DROP TABLE ai_kb_team.unread;
         UPDATE ai_kb_team.meta SET value = '1' WHERE key = 'schema'",
    );
    env.run(&["kb", "sync", "team"]).success();
    pg.assert_counts(&db, "team");
    assert_eq!(
        pg.psql(
            &db,
            "SELECT value FROM ai_kb_team.meta WHERE key = 'schema'"
        ),
        "3"
    );
    same_links(&env);
}

#[test]
fn hybrid_search_on_postgres_ranks_as_on_sqlite() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let server = embedding::server();
    let env = Env::for_provider("openai", &server);
    let dir = notes(&env);
    let dir = dir.to_str().expect("UTF-8");
    let embed = [
        "--embed",
        "openai:text-embedding-3-small",
        "--dimensions",
        "64",
    ];
    env.run(&[&["kb", "add", "local", dir][..], &embed].concat())
        .success();
    let url = pg.url(&db);
    env.run(&[&["kb", "add", "team", dir, "--store", &url][..], &embed].concat())
        .success();
    for q in [
        "apple pie with butter",
        "nightly database dump",
        "green tea",
    ] {
        let (a, b) = (search(&env, "local", q), search(&env, "team", q));
        assert_eq!(found(&a), found(&b), "{q}");
    }
    // The vectors are in a vector(64) column with an HNSW index for cosine distance.
    pg.assert_vectors(&db, "team", 64);
    // A sync stopped after writing its rows, before their indexes were made (they are made
    // at the end, over all rows at once): searches rank the same without them, and the next
    // sync, with nothing else to do, makes them.
    let indexes = "SELECT string_agg(indexname, ' ' ORDER BY indexname) FROM pg_indexes
         WHERE schemaname = 'ai_kb_team' AND tablename = 'chunks'";
    let made = pg.psql(&db, indexes);
    assert_eq!(
        made,
        "chunks_grams chunks_heads chunks_note chunks_pkey chunks_unembedded chunks_vector chunks_words"
    );
    pg.psql(
        &db,
        "DROP INDEX ai_kb_team.chunks_vector, ai_kb_team.chunks_words, ai_kb_team.chunks_heads,
             ai_kb_team.chunks_grams",
    );
    for q in ["apple pie with butter", "green tea", "datenbank"] {
        let (a, b) = (search(&env, "local", q), search(&env, "team", q));
        assert_eq!(found(&a), found(&b), "{q}");
    }
    env.run(&["kb", "sync", "team"]).success();
    assert_eq!(pg.psql(&db, indexes), made);
    pg.assert_vectors(&db, "team", 64);
    let stats = env.run(&["kb", "stats", "team", "--json"]).success().json();
    assert_eq!(stats["embedded"], stats["chunks"], "{stats}");
    // A model that answers in another size is refused, and nothing is written.
    let before = pg.psql(
        &db,
        "SELECT count(*) FROM ai_kb_team.chunks WHERE vector IS NOT NULL",
    );
    let mut cfg = env.config();
    cfg["kb"]["bases"]["team"]["dimensions"] = 32.into();
    env.write_config(&cfg.to_string());
    let out = env.run(&["kb", "sync", "team"]);
    assert_eq!(out.code, Some(2), "{out:#?}");
    assert!(out.error().contains("64-dimension"), "{out:#?}");
    assert_eq!(
        pg.psql(
            &db,
            "SELECT count(*) FROM ai_kb_team.chunks WHERE vector IS NOT NULL"
        ),
        before
    );
}

#[test]
fn a_wrong_password_is_refused_without_showing_it() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    let url = format!("postgres://postgres:wrong-pw-3X@127.0.0.1:{}/{db}", pg.port);
    let out = env.run(&["kb", "add", "team", dir.to_str().unwrap(), "--store", &url]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.error().contains("refused the sign-in"), "{out:#?}");
    assert!(
        out.error().contains("password authentication failed"),
        "{out:#?}"
    );
    assert!(out.stderr.contains("hint:"), "{out:#?}");
    assert!(!out.stderr.contains("wrong-pw-3X"), "{out:#?}");
    // The password may come from PGPASSWORD instead of the URL.
    let mut env = env;
    env.set("PGPASSWORD", PASSWORD);
    let url = pg.url_without_password(&db);
    env.run(&["kb", "add", "team2", dir.to_str().unwrap(), "--store", &url])
        .success();
}

#[test]
fn a_server_without_pgvector_is_named_as_such() {
    let Some(pg) = Pg::start(false) else {
        return;
    };
    let env = Env::new();
    let dir = notes(&env);
    let out = env.run(&[
        "kb",
        "add",
        "team",
        dir.to_str().unwrap(),
        "--store",
        &pg.url("postgres"),
    ]);
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.error().contains("extension vector"), "{out:#?}");
    assert!(out.stderr.contains("install pgvector"), "{out:#?}");
    assert!(!out.stderr.contains(PASSWORD), "{out:#?}");
}

#[test]
fn a_server_gone_mid_search_is_a_clear_error_and_nothing_is_written() {
    let Some(pg) = Pg::start(true) else {
        return;
    };
    let env = Env::new();
    let dir = notes(&env);
    env.run(&[
        "kb",
        "add",
        "team",
        dir.to_str().unwrap(),
        "--store",
        &pg.url("postgres"),
    ])
    .success();
    let chats = env.path("home/chats");
    let before = std::fs::read_dir(&chats).map_or(0, |d| d.count());
    pg.stop();
    let out = env.run(&["kb", "search", "team", "database"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert!(
        out.error().contains(&format!("127.0.0.1:{}", pg.port)),
        "{out:#?}"
    );
    assert!(!out.stderr.contains(PASSWORD), "{out:#?}");
    assert_eq!(out.stdout, "");
    // A grounded turn fails the same way, before anything is saved.
    let out = env.run(&["sonnet", "--kb", "team", "how do backups work?"]);
    assert_eq!(out.code, Some(1), "{out:#?}");
    assert_eq!(std::fs::read_dir(&chats).map_or(0, |d| d.count()), before);
}

#[test]
fn two_homes_syncing_one_base_at_once_neither_duplicate_nor_lose_notes() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let url = pg.url(&db);
    let (a, b) = (Env::new(), Env::new());
    let (da, dbb) = (notes(&a), notes(&b));
    // Many notes, the same in both clones (matched by their IDs), and one each of their own.
    for env in [&a, &b] {
        for i in 0..300 {
            env.project_file(
                &format!("notes/many/n{i}.md"),
                format!("---\nid: shared{i}\n---\n# Note {i}\n\nword{i} shared text.\n"),
            );
        }
    }
    a.project_file("notes/only_a.md", "# Only A\n\nalphaonly\n");
    b.project_file("notes/only_b.md", "# Only B\n\nbetaonly\n");
    a.write_config(&format!(
        r#"{{"kb":{{"bases":{{"team":{{"path":"{}","store":"{url}"}}}}}}}}"#,
        da.display()
    ));
    b.write_config(&format!(
        r#"{{"kb":{{"bases":{{"team":{{"path":"{}","store":"{url}"}}}}}}}}"#,
        dbb.display()
    ));
    let mut pa = a.spawn(&["kb", "sync", "team"]);
    let mut pb = b.spawn(&["kb", "sync", "team"]);
    assert!(pa.wait_status().success());
    assert!(pb.wait_status().success());
    let ids = pg.psql(
        &db,
        "SELECT count(*), count(DISTINCT id) FROM ai_kb_team.notes",
    );
    // 304 shared notes; the note only one clone has is deleted by the other's sync when that
    // one ran last (each sync makes the index its folder), so 305 or 304 + the last one's.
    let (all, distinct) = ids.split_once('|').unwrap();
    assert_eq!(all, distinct, "duplicate notes: {ids}");
    let n: u32 = all.parse().unwrap();
    assert_eq!(n, 305, "{ids}");
    assert_eq!(
        pg.psql(
            &db,
            "SELECT count(*) FROM ai_kb_team.chunks c LEFT JOIN ai_kb_team.notes n ON n.n = c.note WHERE n.n IS NULL"
        ),
        "0"
    );
    for q in ["word7", "word299", "sicherung"] {
        assert!(!search(&a, "team", q).is_empty(), "{q}");
    }
    pg.assert_counts(&db, "team");
}

#[test]
fn a_sync_killed_mid_way_leaves_a_sound_base_that_the_next_sync_finishes() {
    let Some((pg, db, env)) = team_on_server() else {
        return;
    };
    // Enough notes for several transactions of 256.
    for i in 0..700 {
        env.project_file(
            &format!("notes/many/n{i}.md"),
            format!("# Note {i}\n\nword{i} and some shared text about backups.\n"),
        );
    }
    let mut sync = env.spawn(&["kb", "sync", "team"]);
    // Killed (SIGKILL) once a first batch is committed and before the last one is.
    let count = || -> u32 {
        let made = "SELECT count(*) FROM pg_tables WHERE schemaname = 'ai_kb_team' AND tablename = 'notes'";
        if pg.psql(&db, made) == "0" {
            return 0;
        }
        pg.psql(&db, "SELECT count(*) FROM ai_kb_team.notes")
            .parse()
            .unwrap_or(0)
    };
    wait_for("a first committed batch", || count() > 0);
    sync.kill();
    let _ = sync.wait_status();
    let partial = count();
    // Sound: every passage belongs to a note, every note has its passages, and the counts
    // of words and passages are those of the rows.
    let orphans = "SELECT (SELECT count(*) FROM ai_kb_team.chunks c LEFT JOIN ai_kb_team.notes n ON n.n = c.note WHERE n.n IS NULL)
                        + (SELECT count(*) FROM ai_kb_team.notes n WHERE NOT EXISTS (SELECT 1 FROM ai_kb_team.chunks c WHERE c.note = n.n))";
    assert_eq!(pg.psql(&db, orphans), "0");
    pg.assert_counts(&db, "team");
    // The lock died with it: the next sync runs and finishes the work.
    let out = env.run(&["kb", "sync", "team", "--json"]).success().json();
    assert_eq!(out[0]["notes"], 704, "{out} (after a kill at {partial})");
    assert_eq!(count(), 704);
    assert_eq!(pg.psql(&db, orphans), "0");
    pg.assert_counts(&db, "team");
    assert!(!search(&env, "team", "word699").is_empty());
}

#[test]
fn documents_without_text_are_remembered_on_postgres_as_on_sqlite() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    env.project_file(
        "notes/empty.html",
        "<html><body><img src=\"x.png\"></body></html>",
    );
    let dir = dir.to_str().expect("UTF-8");
    env.run(&["kb", "add", "local", dir]).success();
    let added = env
        .run(&["kb", "add", "team", dir, "--store", &pg.url(&db)])
        .success();
    assert!(added.stderr.contains("1 without text"), "{added:#?}");
    let skipped = |base: &str| {
        env.run(&["kb", "stats", base, "--skipped", "--json"])
            .success()
            .json()
    };
    let (a, b) = (skipped("local"), skipped("team"));
    assert_eq!(b["no_text"], 1, "{b}");
    assert_eq!(a["no_text"], b["no_text"], "{a}\n{b}");
    assert_eq!(
        pg.psql(&db, "SELECT path FROM ai_kb_team.unread"),
        "empty.html"
    );
    // Unchanged, it is not parsed again and the freshness check counts it as known.
    let again = env.run(&["kb", "sync", "team"]).success();
    assert!(again.stdout.contains("unchanged 4"), "{again:#?}");
    assert!(again.stderr.contains("1 without text"), "{again:#?}");
    let out = env.run(&["echo", "--kb", "team", "anything"]).success();
    assert!(!out.stderr.contains("changed since"), "{out:#?}");
    // Given text, it is indexed and forgotten as unread.
    env.project_file(
        "notes/empty.html",
        "<html><body><p>Walrus text.</p></body></html>",
    );
    let out = env.run(&["kb", "sync", "team"]).success();
    assert!(out.stdout.contains("added 1"), "{out:#?}");
    assert_eq!(pg.psql(&db, "SELECT count(*) FROM ai_kb_team.unread"), "0");
}

#[test]
fn tls_is_used_when_the_server_asks_and_the_server_is_checked_when_the_url_says() {
    // A server that takes TLS only, with a certificate for 127.0.0.1 from the test's own
    // authority, as many team servers have (Debian's makes a self-signed one).
    let Some(pg) = postgres::shared() else {
        return;
    };
    let Some(front) = postgres::TlsFront::start(pg) else {
        return;
    };
    let ca = front.certs.join("ca.crt");
    let other = front.certs.join("other-ca.crt");
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    let dir = dir.to_str().unwrap();
    let base = |host: &str, query: &str| {
        format!(
            "postgres://postgres:{PASSWORD}@{host}:{}/{db}{query}",
            front.port
        )
    };
    let add = |name: &str, url: &str| env.run(&["kb", "add", name, dir, "--store", url, "--json"]);
    // Encrypted without checking the server, as libpq does: by default and with `require`.
    for (name, query) in [("plain", ""), ("required", "?sslmode=require")] {
        let out = add(name, &base("127.0.0.1", query)).success();
        assert_eq!(out.json()["added"], 4, "{out:#?}");
    }
    // Checked against the test's authority: the certificate is made out to 127.0.0.1.
    let verified = format!("?sslmode=verify-full&sslrootcert={}", ca.display());
    add("verified", &base("127.0.0.1", &verified)).success();
    let hits = search(&env, "verified", "strasse");
    assert_eq!(hits[0]["id"], "e0d27e3ad", "{hits:?}");
    // verify-ca checks the authority, not the name.
    let by_ca = format!("?sslmode=verify-ca&sslrootcert={}", ca.display());
    add("by_ca", &base("localhost", &by_ca)).success();

    // Refused, with the password nowhere: no authority given (nor ~/.postgresql/root.crt)…
    let refused = |name: &str, url: &str, says: &str| {
        let out = add(name, url);
        assert_eq!(out.code, Some(3), "{out:#?}");
        assert!(out.error().contains(says), "{out:#?}");
        assert!(out.stderr.contains("hint:"), "{out:#?}");
        assert!(!out.stderr.contains(PASSWORD), "{out:#?}");
        out
    };
    let out = refused(
        "no_ca",
        &base("127.0.0.1", "?sslmode=verify-full"),
        "no authority to check it against",
    );
    assert!(out.stderr.contains("sslrootcert="), "{out:#?}");
    // …the public authorities, or another one, did not sign its certificate…
    for (name, roots) in [
        ("public", "system".to_owned()),
        ("other", other.display().to_string()),
    ] {
        let url = base(
            "127.0.0.1",
            &format!("?sslmode=verify-full&sslrootcert={roots}"),
        );
        let out = refused(name, &url, "did not prove who it is");
        assert!(out.error().contains("UnknownIssuer"), "{out:#?}");
        assert!(out.stderr.contains("sslrootcert="), "{out:#?}");
    }
    // …the certificate is not made out to the name the URL gives…
    let out = refused(
        "by_name",
        &base("localhost", &verified),
        "did not prove who it is",
    );
    assert!(
        out.error().contains("not valid for name \"localhost\""),
        "{out:#?}"
    );
    assert!(out.stderr.contains("verify-ca"), "{out:#?}");
    // …an authority file that is none.
    let url = base(
        "127.0.0.1",
        &format!(
            "?sslmode=verify-full&sslrootcert={}",
            env.root.join("nothing.crt").display()
        ),
    );
    refused("missing_file", &url, "cannot use sslrootcert");
    // A server without TLS, asked for it: refused as such, not as a server that is down.
    let url = format!(
        "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{db}?sslmode=require",
        pg.port
    );
    let out = refused("no_tls", &url, "does not offer TLS");
    assert!(out.stderr.contains("sslmode"), "{out:#?}");
    // The front's server does not see TLS, so it cannot offer SCRAM-SHA-256-PLUS: a URL that
    // requires channel binding is refused, naming it.
    let out = refused(
        "bound",
        &base("127.0.0.1", "?channel_binding=require"),
        "channel binding",
    );
    assert!(out.stderr.contains("channel_binding"), "{out:#?}");
    // And the server takes TLS only: what connected above was encrypted.
    let out = add("clear", &base("127.0.0.1", "?sslmode=disable"));
    assert_eq!(out.code, Some(3), "{out:#?}");
    assert!(out.error().contains("no encryption"), "{out:#?}");
    // With ~/.postgresql/root.crt, `require` checks the server against it, as libpq does; the
    // default (`prefer`) still does not.
    let root = env.root.join(".postgresql/root.crt");
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    std::fs::copy(&other, &root).unwrap();
    let out = refused(
        "home_other",
        &base("127.0.0.1", "?sslmode=require"),
        "did not prove who it is",
    );
    assert!(out.error().contains("UnknownIssuer"), "{out:#?}");
    add("home_prefer", &base("127.0.0.1", "")).success();
    std::fs::copy(&ca, &root).unwrap();
    add("home_ca", &base("localhost", "?sslmode=require")).success();
}

#[test]
fn libpqs_tls_variables_are_honoured_when_the_url_does_not_say() {
    // PGSSLMODE, PGSSLROOTCERT and PGCHANNELBINDING, as libpq's tools read them: a user who
    // relies on PGSSLMODE=verify-full must not get an unchecked (or plaintext) connection.
    let Some(pg) = postgres::shared() else {
        return;
    };
    let Some(front) = postgres::TlsFront::start(pg) else {
        return;
    };
    let ca = front.certs.join("ca.crt").display().to_string();
    let other = front.certs.join("other-ca.crt").display().to_string();
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    let dir = dir.to_str().unwrap();
    let base = |query: &str| {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{db}{query}",
            front.port
        )
    };
    let add = |name: &str, url: &str, vars: &[(&str, &str)]| {
        let mut cmd = env.command(&["kb", "add", name, dir, "--store", url, "--json"]);
        for (k, v) in vars {
            cmd = cmd.env(k, v);
        }
        cmd.run()
    };
    let refused = |name: &str, url: &str, vars: &[(&str, &str)], says: &str| {
        let out = add(name, url, vars);
        assert_eq!(out.code, Some(3), "{out:#?}");
        assert!(out.error().contains(says), "{out:#?}");
        assert!(out.stderr.contains("hint:"), "{out:#?}");
        assert!(!out.stderr.contains(PASSWORD), "{out:#?}");
        out
    };
    // verify-full from the environment, with no authority anywhere: refused, naming it.
    let out = refused(
        "no_ca",
        &base(""),
        &[("PGSSLMODE", "verify-full")],
        "PGSSLMODE=verify-full in the environment asks to check the server's certificate",
    );
    assert!(out.stderr.contains("PGSSLROOTCERT"), "{out:#?}");
    // …with another authority: the server did not prove who it is.
    let out = refused(
        "other",
        &base(""),
        &[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", &other)],
        "did not prove who it is",
    );
    assert!(out.error().contains("UnknownIssuer"), "{out:#?}");
    // …with the right one: checked, and connected.
    let out = add(
        "checked",
        &base(""),
        &[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", &ca)],
    )
    .success();
    assert_eq!(out.json()["added"], 4, "{out:#?}");
    // PGSSLMODE=disable is honoured (the front takes TLS connections only)…
    let out = refused(
        "clear",
        &base(""),
        &[("PGSSLMODE", "disable")],
        "no encryption",
    );
    assert!(out.stderr.contains("PGSSLMODE=disable"), "{out:#?}");
    // …but the URL's own sslmode and sslrootcert win over the environment's.
    let url = base(&format!("?sslmode=verify-ca&sslrootcert={ca}"));
    let vars = [("PGSSLMODE", "disable"), ("PGSSLROOTCERT", other.as_str())];
    add("url_wins", &url, &vars).success();
    // PGCHANNELBINDING=require: the front's server cannot offer SCRAM-SHA-256-PLUS.
    refused(
        "bound",
        &base(""),
        &[("PGCHANNELBINDING", "require")],
        "channel binding",
    );
    // Not a mode: refused, naming the variable.
    refused(
        "typo",
        &base(""),
        &[("PGSSLMODE", "verify")],
        "PGSSLMODE=verify in the environment is not an sslmode",
    );
    // The public authorities with a mode weaker than verify-full: refused as libpq 16 does,
    // before connecting.
    for (name, url, vars) in [
        (
            "system_url",
            base("?sslmode=require&sslrootcert=system"),
            vec![],
        ),
        (
            "system_env",
            base("?sslmode=verify-ca"),
            vec![("PGSSLROOTCERT", "system")],
        ),
    ] {
        let out = refused(name, &url, &vars, "may not be used with sslrootcert=system");
        assert!(out.stderr.contains("verify-full"), "{out:#?}");
    }
}

#[test]
fn a_server_on_a_unix_socket_is_reached_with_tls_left_out() {
    // The host of the URL is the folder of the server's socket: the default `prefer` does
    // not try TLS there, as libpq does not (the client still asks the TLS adapter for a
    // handshake with a host of no name; making none must not fail).
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    let socket = pg.dir().display().to_string().replace('/', "%2F");
    let url = format!("postgres://postgres@{socket}:{}/{db}", pg.port);
    let out = env
        .run(&[
            "kb",
            "add",
            "local",
            dir.to_str().unwrap(),
            "--store",
            &url,
            "--json",
        ])
        .success();
    assert_eq!(out.json()["added"], 4, "{out:#?}");
    let hits = search(&env, "local", "strasse");
    assert_eq!(hits[0]["id"], "e0d27e3ad", "{hits:?}");
    // Nor whatever the environment asks for: libpq does not encrypt a Unix socket.
    let out = env
        .command(&["kb", "search", "local", "strasse", "--json"])
        .env("PGSSLMODE", "verify-full")
        .run()
        .success();
    assert!(out.stdout.contains("e0d27e3ad"), "{out:#?}");
}

#[test]
fn a_server_with_tls_on_signs_ai_in_with_scram_and_channel_binding() {
    // A real `ssl = on` server that takes TLS connections only, with SCRAM-SHA-256: the
    // server itself sees TLS (the front above is a proxy), so SCRAM-SHA-256-PLUS ties the
    // sign-in to its certificate. `channel_binding=require` makes the client refuse any other
    // sign-in, so a connection proves the certificate's hash (RFC 5929's
    // tls-server-end-point) was the one the server computed.
    let Some(pg) = Pg::start_tls() else {
        return;
    };
    let certs = pg.certs();
    let ca = certs.join("ca.crt");
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    let dir = dir.to_str().unwrap();
    let url = |query: &str| format!("{}{query}", pg.url(&db));
    let add = |name: &str, url: &str| env.run(&["kb", "add", name, dir, "--store", url, "--json"]);
    // Debian 12's PostgreSQL has no pgvector package: there a base cannot be made, and the
    // error that says so comes from a session that signed in.
    let vector = pg.psql(
        &db,
        "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'",
    ) == "1";
    let log = || std::fs::read_to_string(pg.dir().join("log")).unwrap_or_default();
    let ours = |log: &str| {
        log.lines()
            .filter(|l| l.contains("application_name=ai SSL enabled (protocol=TLSv1.3"))
            .count()
    };
    let signs_in = |name: &str, url: &str| {
        let before = ours(&log());
        let out = add(name, url);
        assert!(!out.stderr.contains(PASSWORD), "{out:#?}");
        if vector {
            assert_eq!(out.success().json()["added"], 4);
            let hits = search(&env, name, "strasse");
            assert_eq!(hits[0]["id"], "e0d27e3ad", "{hits:?}");
        } else {
            assert_eq!(out.code, Some(3), "{out:#?}");
            assert!(
                out.error().contains("cannot load the extension vector"),
                "{out:#?}"
            );
        }
        // The server logged ai's session as encrypted; only `hostssl … scram-sha-256` lets one in.
        assert!(ours(&log()) > before, "{}", log());
    };
    let bound = "&channel_binding=require";
    let verified = format!("?sslmode=verify-full&sslrootcert={}{bound}", ca.display());
    signs_in("verified", &url(&verified));
    signs_in("required", &url(&format!("?sslmode=require{bound}")));
    signs_in("default", &url(""));
    assert!(
        log().contains("connection authenticated: identity=\"postgres\" method=scram-sha-256"),
        "{}",
        log()
    );
    // The hash follows the certificate's signature: SHA-384 and SHA-512 signatures, and
    // RSA-PSS whose hash is among its parameters.
    for (name, key, ca, sign) in [
        (
            "p384",
            "ec -pkeyopt ec_paramgen_curve:secp384r1",
            "ca",
            "-sha384",
        ),
        ("rsa512", "rsa:2048", "rsa-ca", "-sha512"),
        (
            "pss384",
            "rsa:2048",
            "rsa-ca",
            "-sha384 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest",
        ),
    ] {
        pg.use_certificate(name, key, ca, sign);
        let roots = certs.join(format!("{ca}.crt"));
        signs_in(
            name,
            &url(&format!(
                "?sslmode=verify-full&sslrootcert={}{bound}",
                roots.display()
            )),
        );
    }

    let refused = |name: &str, url: &str, says: &str| {
        let out = add(name, url);
        assert_eq!(out.code, Some(3), "{out:#?}");
        assert!(out.error().contains(says), "{out:#?}");
        assert!(out.stderr.contains("hint:"), "{out:#?}");
        assert!(!out.stderr.contains(PASSWORD), "{out:#?}");
        out
    };
    // Another authority did not sign the server's certificate.
    let other = format!(
        "?sslmode=verify-full&sslrootcert={}",
        certs.join("other-ca.crt").display()
    );
    let out = refused("other", &url(&other), "did not prove who it is");
    assert!(out.error().contains("UnknownIssuer"), "{out:#?}");
    // Without TLS the server lets nobody in, and says so.
    let out = refused("clear", &url("?sslmode=disable"), "no encryption");
    assert!(
        out.stderr.contains("takes TLS connections only"),
        "{out:#?}"
    );
}

#[test]
fn two_long_base_names_alike_in_their_first_63_bytes_keep_their_own_tables() {
    // PostgreSQL keeps 63 bytes of a name and cuts the rest silently: `ai_kb_` and a 64-byte
    // base name would have put these two bases in one schema.
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let env = Env::new();
    let url = pg.url(&db);
    let long = |end: char| format!("{}{end}", "x".repeat(63));
    let (a, b) = (long('a'), long('b'));
    let dir_a = env
        .project_file("a/walrus.md", "# Walrus\n\nThe walrus naps on the ice.\n")
        .parent()
        .expect("a folder")
        .to_owned();
    let dir_b = env
        .project_file("b/heron.md", "# Heron\n\nThe heron waits in the reeds.\n")
        .parent()
        .expect("a folder")
        .to_owned();
    for (name, dir) in [(&a, &dir_a), (&b, &dir_b)] {
        env.run(&["kb", "add", name, dir.to_str().unwrap(), "--store", &url])
            .success();
        env.run(&["kb", "sync", name]).success();
    }
    let paths = |name: &str, query: &str| -> Vec<String> {
        search(&env, name, query)
            .iter()
            .map(|h| h["path"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(paths(&a, "walrus"), ["walrus.md"]);
    assert!(paths(&a, "heron").is_empty());
    assert_eq!(paths(&b, "heron"), ["heron.md"]);
    // A rebuild of one (made beside it, in `ai_kbnew_…`) leaves the other as it was.
    env.run(&["kb", "sync", "--full", &a]).success();
    assert_eq!(paths(&b, "heron"), ["heron.md"]);
    assert!(paths(&b, "walrus").is_empty());
    assert_eq!(paths(&a, "walrus"), ["walrus.md"]);
    assert_eq!(
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'ai\\_kb\\_%'"
        ),
        "2"
    );
}

#[test]
fn common_words_are_looked_for_in_titles_and_headings_alike_on_both_stores() {
    // "tea" is in every note (a common word): it is looked for in titles, aliases and headings
    // only, which PostgreSQL finds through the `heads` column, or without it in a base made
    // before it (its next sync adds it).
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let env = Env::new();
    for i in 0..36 {
        env.project_file(
            &format!("many/n{i:02}.md"),
            format!("# Note {i}\n\nWe drink tea every day, number {i}.\n"),
        );
    }
    env.project_file("many/tea.md", "# Tea\n\nGreen tea, steeped.\n");
    env.project_file(
        "many/brew.md",
        "# Brewing\n\nIntro.\n\n## Tea\n\nHot water and tea.\n",
    );
    let dir = env.project.join("many");
    let dir = dir.to_str().expect("UTF-8");
    env.run(&["kb", "add", "local", dir]).success();
    env.run(&["kb", "add", "team", dir, "--store", &pg.url(&db)])
        .success();
    let same = |env: &Env| {
        let (a, b) = (search(env, "local", "tea"), search(env, "team", "tea"));
        assert_eq!(found(&a), found(&b));
        let paths: Vec<&str> = b.iter().map(|h| h["path"].as_str().unwrap()).collect();
        assert_eq!(paths[0], "tea.md", "{b:?}");
        assert!(!paths.iter().any(|p| p.starts_with('n')), "{b:?}");
    };
    same(&env);
    let heads = "SELECT count(*) FROM pg_attribute
                 WHERE attrelid = 'ai_kb_team.chunks'::regclass AND attname = 'heads' AND NOT attisdropped";
    assert_eq!(pg.psql(&db, heads), "1");
    pg.psql(&db, "ALTER TABLE ai_kb_team.chunks DROP COLUMN heads");
    same(&env);
    env.run(&["kb", "sync", "team"]).success();
    assert_eq!(pg.psql(&db, heads), "1");
    same(&env);
}

/// SQL that turns base `base` of schema 3 into the base schema 2 made: no counts of words or
/// passages ([`Pg::assert_counts`]).
fn before_counts(base: &str) -> String {
    let s = format!("ai_kb_{base}");
    format!(
        "DROP TRIGGER chunks_added ON {s}.chunks; DROP TRIGGER chunks_gone ON {s}.chunks;
         DROP TRIGGER chunks_words ON {s}.chunks;
         DROP FUNCTION {s}.counted_added(), {s}.counted_gone(), {s}.counted_words();
         DROP TABLE {s}.freqs; DELETE FROM {s}.meta WHERE key = 'passages';
         UPDATE {s}.meta SET value = '2' WHERE key = 'schema'"
    )
}

#[test]
fn the_counts_searches_read_follow_every_write_and_a_base_without_them_is_counted_when_opened() {
    // A search reads how many passages there are and in how many each word is from counts the
    // server keeps as rows are written (schema 3): after every kind of write they are those of
    // the rows, and searches rank as on SQLite.
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let env = Env::new();
    let dir = notes(&env);
    for i in 0..40 {
        env.project_file(
            &format!("notes/many/n{i:02}.md"),
            format!("# Note {i}\n\nThe grinder number {i}, word{i}.\n\n## Crema\n\ncrema{i}\n"),
        );
    }
    let dir = dir.to_str().expect("UTF-8");
    env.run(&["kb", "add", "local", dir]).success();
    env.run(&["kb", "add", "team", dir, "--store", &pg.url(&db)])
        .success();
    let same = |env: &Env| {
        for q in QUERIES
            .iter()
            .chain(&["word7 grinder", "crema3", "espresso"])
        {
            let (a, b) = (search(env, "local", q), search(env, "team", q));
            assert_eq!(found(&a), found(&b), "{q}");
        }
    };
    let counted = pg.assert_counts(&db, "team");
    assert!(counted > 50, "{counted} words counted");
    same(&env);
    // Edited, deleted and new notes.
    env.project_file(
        "notes/many/n03.md",
        "# Note three\n\nNow about espresso only.\n",
    );
    std::fs::remove_file(env.project.join("notes/many/n04.md")).unwrap();
    env.project_file("notes/many/new.md", "# New\n\nA fresh espresso note.\n");
    for base in ["local", "team"] {
        env.run(&["kb", "sync", base]).success();
    }
    pg.assert_counts(&db, "team");
    assert_eq!(
        pg.psql(
            &db,
            "SELECT n FROM ai_kb_team.freqs WHERE word = 'espresso'"
        ),
        "2"
    );
    assert_eq!(
        pg.psql(&db, "SELECT n FROM ai_kb_team.freqs WHERE word = 'crema4'"),
        "0"
    );
    same(&env);
    // Keywords made anew (another keyword scheme): every passage's words rewritten.
    pg.psql(
        &db,
        "UPDATE ai_kb_team.meta SET value = 'older' WHERE key = 'keywords'",
    );
    env.run(&["kb", "sync", "team"]).success();
    pg.assert_counts(&db, "team");
    same(&env);
    // A rebuild, made beside and put in place.
    env.run(&["kb", "sync", "--full", "team"]).success();
    pg.assert_counts(&db, "team");
    same(&env);
    // A base of schema 2 (as the `ai` before this one made it) is counted when first opened,
    // by a search too, and then kept; its searches find what they found, scored the same.
    let all =
        |env: &Env| -> Vec<Vec<Value>> { QUERIES.iter().map(|q| search(env, "team", q)).collect() };
    let before = all(&env);
    pg.psql(&db, &before_counts("team"));
    assert_eq!(all(&env), before);
    same(&env);
    assert_eq!(
        pg.psql(
            &db,
            "SELECT value FROM ai_kb_team.meta WHERE key = 'schema'"
        ),
        "3"
    );
    pg.assert_counts(&db, "team");
    env.project_file("notes/many/n05.md", "# Note five\n\nespresso again.\n");
    env.run(&["kb", "sync", "team"]).success();
    pg.assert_counts(&db, "team");
    assert_eq!(
        pg.psql(
            &db,
            "SELECT n FROM ai_kb_team.freqs WHERE word = 'espresso'"
        ),
        "3"
    );
}

#[test]
fn a_full_sync_stopped_while_its_switch_waits_keeps_the_base_it_had() {
    let Some((pg, db, env)) = team_on_server() else {
        return;
    };
    env.run(&["kb", "sync", "team"]).success();
    env.project_file("notes/zebra.md", "# Zebra\n\nStripes of the zebra.\n");
    // A long search holds the old tables: the rebuild is made beside them, then waits to
    // put itself in their place.
    let reader = pg.hold(
        &db,
        "BEGIN; LOCK TABLE ai_kb_team.notes IN ACCESS SHARE MODE;",
    );
    wait_for("the reader's lock", || {
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_locks WHERE relation = 'ai_kb_team.notes'::regclass AND granted",
        ) == "1"
    });
    let sync = env.spawn(&["kb", "sync", "team", "--full"]);
    wait_for("the switch waiting for the old tables", || {
        pg.psql(
            &db,
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ai'
                 AND datname = '{db}' AND wait_event_type = 'Lock'"
            ),
        ) == "1"
    });
    // Ctrl+C there, then the reader lets go: the rebuild is not put in place.
    signal(sync.pid(), libc::SIGINT);
    drop(reader);
    let out = sync.wait();
    assert_eq!(out.code, Some(130), "{out:#?}");
    assert!(search(&env, "team", "zebra").is_empty(), "switched");
    assert!(!search(&env, "team", "sicherung").is_empty());
    // The next sync adds the new note to the base it had.
    let out = env.run(&["kb", "sync", "team", "--json"]).success().json();
    assert_eq!(out[0]["added"], 1, "{out}");
    assert!(!search(&env, "team", "zebra").is_empty());
}

#[test]
fn a_sync_whose_closing_vacuum_fails_keeps_what_it_wrote_and_warns() {
    // After a large sync the passages' table is tidied (VACUUM (ANALYZE)), a saving as SQLite's
    // compaction is: when it fails (here it cannot take its lock: another session holds one that
    // conflicts, and the database gives up a lock wait after a while), the sync's rows are
    // committed and it ends well, with a warning.
    let Some((pg, db, env, tidying)) = a_base_with_its_passages_held() else {
        return;
    };
    pg.psql(
        &db,
        &format!("ALTER DATABASE {db} SET lock_timeout = '300ms'"),
    );
    a_thousand_passages_more(&env);
    let out = env.run(&["kb", "sync", "team", "--json"]);
    let stderr = out.stderr.clone();
    let json = out.success().json();
    assert_eq!(json[0]["added"], 10, "{json}");
    assert!(json[0]["chunks"].as_u64().unwrap() > 1_000, "{json}");
    assert!(
        stderr.contains("warning") && stderr.contains("VACUUM"),
        "{stderr}"
    );
    drop(tidying);
    pg.assert_counts(&db, "team");
    assert!(!search(&env, "team", "bulk7x99").is_empty());
    // The next sync has nothing to do.
    let json = env.run(&["kb", "sync", "team", "--json"]).success().json();
    assert_eq!(json[0]["unchanged"], 14, "{json}");
}

#[test]
fn a_keyword_migration_empties_the_counts_at_once_not_row_by_row() {
    // An index made by an `ai` with other keywords has every passage's words dropped in one
    // transaction, then indexed again. Taken from the counts one passage at a time (the
    // trigger on each row), a count of a common word is updated once per passage in that
    // transaction, and each update reads every version the ones before it left: quadratic
    // (1,500 passages: 14.4 s against 0.9 s; hours at 100,000). The counts are emptied at once
    // instead: no count row is updated by the migration. (Each word here is in one passage,
    // so the indexing again that follows inserts counts and updates none either.)
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    let url = pg.url(&db);
    let env = Env::new();
    for i in 0..30 {
        env.project_file(
            &format!("words/k{i}.md"),
            format!("zeta{i} omega{i} sigma{i}\n"),
        );
    }
    let dir = env.project.join("words");
    env.write_config(&format!(
        r#"{{"kb":{{"bases":{{"team":{{"path":"{}","store":"{url}"}}}}}}}}"#,
        dir.display()
    ));
    env.run(&["kb", "sync", "team"]).success();
    pg.psql(
        &db,
        "UPDATE ai_kb_team.meta SET value = 'older' WHERE key = 'keywords'",
    );
    env.run(&["kb", "sync", "team"]).success();
    // Its statistics are the server's once its session has ended.
    wait_for("the sync's session to end", || {
        pg.psql(
            &db,
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}' AND application_name = 'ai'"
            ),
        ) == "0"
    });
    let stats = "SELECT n_tup_ins || ' ' || n_tup_upd FROM pg_stat_user_tables
                 WHERE relid = 'ai_kb_team.freqs'::regclass";
    let (inserted, updated) = pg
        .psql(&db, stats)
        .split_once(' ')
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .expect("two counts");
    assert_eq!(updated, "0", "counts updated ({inserted} inserted)");
    pg.assert_counts(&db, "team");
    assert_eq!(search(&env, "team", "omega7").len(), 1);
}

#[test]
fn a_ctrl_c_during_an_index_build_cancels_it_at_the_server_and_the_next_sync_builds_it() {
    // The passages' indexes are built over every row at the end of a first sync (minutes at
    // 100,000 notes): a Ctrl+C then cancels the build at the server instead of waiting for it.
    // Here the build cannot even start: another session holds a lock on the passages that it
    // waits for, as long as that session lives.
    let Some((pg, db, env)) = team_on_server() else {
        return;
    };
    env.run(&["kb", "sync", "team"]).success();
    // As a first sync stopped before its indexes were made leaves the base.
    pg.psql(&db, "DROP INDEX ai_kb_team.chunks_words");
    let writer = pg.hold(
        &db,
        "BEGIN; LOCK TABLE ai_kb_team.chunks IN ROW EXCLUSIVE MODE;",
    );
    wait_for("the other session's lock", || {
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_locks WHERE relation = 'ai_kb_team.chunks'::regclass AND granted",
        ) == "1"
    });
    let sync = env.spawn(&["kb", "sync", "team"]);
    wait_for("the index build waiting for the passages", || {
        pg.psql(
            &db,
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ai'
                 AND datname = '{db}' AND wait_event_type = 'Lock' AND query LIKE '%CREATE INDEX%'"
            ),
        ) == "1"
    });
    // Ctrl+C while the other session still holds its lock: the build is cancelled.
    signal(sync.pid(), libc::SIGINT);
    let out = sync.wait();
    assert_eq!(out.code, Some(130), "{out:#?}");
    assert!(!out.stderr.contains("error:"), "{out:#?}");
    drop(writer);
    assert_eq!(
        pg.psql(&db, "SELECT to_regclass('ai_kb_team.chunks_words') IS NULL"),
        "t"
    );
    // The base answers meanwhile, and the next sync builds what is missing.
    assert!(!search(&env, "team", "sicherung").is_empty());
    env.run(&["kb", "sync", "team"]).success();
    assert_eq!(
        pg.psql(
            &db,
            "SELECT to_regclass('ai_kb_team.chunks_words') IS NOT NULL"
        ),
        "t"
    );
    assert!(!search(&env, "team", "sicherung").is_empty());
    pg.assert_counts(&db, "team");
}

#[test]
fn a_ctrl_c_during_the_closing_vacuum_cancels_it_and_keeps_what_the_sync_wrote() {
    // After a large sync the passages' table is tidied (VACUUM (ANALYZE)), which reads the whole
    // table: a Ctrl+C then cancels it at the server. Here it cannot start: another session holds
    // a lock that conflicts with it, as long as that session lives.
    let Some((pg, db, env, tidying)) = a_base_with_its_passages_held() else {
        return;
    };
    a_thousand_passages_more(&env);
    let sync = env.spawn(&["kb", "sync", "team"]);
    wait_for("the VACUUM waiting for the passages", || {
        pg.psql(
            &db,
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ai'
                 AND datname = '{db}' AND wait_event_type = 'Lock' AND query LIKE 'VACUUM%'"
            ),
        ) == "1"
    });
    signal(sync.pid(), libc::SIGINT);
    let out = sync.wait();
    assert_eq!(out.code, Some(130), "{out:#?}");
    assert!(!out.stderr.contains("error:"), "{out:#?}");
    drop(tidying);
    // What the sync wrote is kept: the next one has nothing to do.
    pg.assert_counts(&db, "team");
    assert!(!search(&env, "team", "bulk7x99").is_empty());
    let json = env.run(&["kb", "sync", "team", "--json"]).success().json();
    assert_eq!(json[0]["unchanged"], 14, "{json}");
}

#[test]
fn kb_list_shows_every_base_when_one_server_cannot_be_reached_or_has_no_tables_yet() {
    let env = Env::new();
    let dir = notes(&env);
    let dir = dir.to_str().expect("UTF-8");
    env.run(&["kb", "add", "local", dir]).success();
    let mut cfg = env.config();
    // A base on a port where nothing answers (its `kb add` failed there, or the server is down).
    cfg["kb"]["bases"]["gone"] = serde_json::json!({
        "path": dir,
        "store": "postgres://ann:hunter2@127.0.0.1:1/team"
    });
    env.write_config(&cfg.to_string());
    // Listed with why; the exit code is the failure's, as a search of that base ends.
    let search = env.run(&["kb", "search", "gone", "tea"]);
    assert_ne!(search.code, Some(0), "{search:#?}");
    let out = env.run(&["kb", "list", "--json"]);
    assert_eq!(out.code, search.code, "{out:#?}");
    let rows = out.json();
    let rows = rows.as_array().expect("a JSON array");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["name"], "gone");
    assert_eq!(rows[0]["indexed"], false);
    assert!(
        rows[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("127.0.0.1:1")),
        "{rows:?}"
    );
    assert_eq!(rows[1]["name"], "local");
    assert_eq!(rows[1]["indexed"], true);
    assert!(out.error().contains("gone"), "{out:#?}");
    assert!(
        !out.stdout.contains("hunter2") && !out.stderr.contains("hunter2"),
        "{out:#?}"
    );
    let out = env.run(&["kb", "list"]);
    assert_eq!(out.code, search.code, "{out:#?}");
    assert!(
        out.stdout.contains("local") && out.stdout.contains("gone"),
        "{out:#?}"
    );

    // A base on a real server whose tables no sync has made yet: not indexed, not an error.
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    cfg["kb"]["bases"]["gone"]["store"] = pg.url(&db).into();
    env.write_config(&cfg.to_string());
    let rows = env.run(&["kb", "list", "--json"]).success().json();
    assert_eq!(rows[0]["name"], "gone");
    assert_eq!(rows[0]["indexed"], false, "{rows:?}");
    assert!(rows[0].get("error").is_none(), "{rows:?}");
    let stats = env.run(&["kb", "stats", "gone", "--json"]).success().json();
    assert_eq!(stats["indexed"], false, "{stats}");
}

#[test]
fn the_index_build_raises_the_servers_memory_for_it_but_never_lowers_it() {
    let Some(pg) = postgres::shared() else {
        return;
    };
    let db = pg.database();
    // Statements of this database only are logged (the others' are not).
    let sets = || {
        std::fs::read_to_string(pg.dir().join("log"))
            .unwrap_or_default()
            .matches("SET maintenance_work_mem = '64MB'")
            .count()
    };
    pg.psql(
        &db,
        &format!("ALTER DATABASE {db} SET log_statement = 'all'"),
    );
    pg.psql(
        &db,
        &format!("ALTER DATABASE {db} SET maintenance_work_mem = '32MB'"),
    );
    let env = Env::new();
    let dir = notes(&env);
    let url = pg.url(&db);
    let before = sets();
    env.run(&[
        "kb",
        "add",
        "team",
        dir.to_str().expect("UTF-8"),
        "--store",
        &url,
    ])
    .success();
    assert!(sets() > before, "the build was not given its 64 MB");
    // An administrator's larger setting is kept, not lowered to what ai would ask.
    pg.psql(
        &db,
        &format!("ALTER DATABASE {db} SET maintenance_work_mem = '2GB'"),
    );
    let before = sets();
    env.run(&["kb", "sync", "--full", "team"]).success();
    assert_eq!(sets(), before, "the administrator's 2 GB was lowered");
    let hits = search(&env, "team", "green tea");
    assert!(!hits.is_empty());
}

/// A base on the test server, synced, whose passages' table another session holds in a mode
/// that a VACUUM waits for (until the [`postgres::Held`] is dropped).
fn a_base_with_its_passages_held() -> Option<(&'static Pg, String, Env, postgres::Held)> {
    let (pg, db, env) = team_on_server()?;
    env.run(&["kb", "sync", "team"]).success();
    let tidying = pg.hold(
        &db,
        "BEGIN; LOCK TABLE ai_kb_team.chunks IN SHARE UPDATE EXCLUSIVE MODE;",
    );
    wait_for("the other session's lock", || {
        pg.psql(
            &db,
            "SELECT count(*) FROM pg_locks WHERE relation = 'ai_kb_team.chunks'::regclass
             AND mode = 'ShareUpdateExclusiveLock' AND granted",
        ) == "1"
    });
    Some((pg, db, env, tidying))
}

/// Over a thousand passages in new notes (a sync that writes them tidies the table after):
/// ten notes of 110 paragraphs of ~1,900 bytes.
fn a_thousand_passages_more(env: &Env) {
    let paragraph = |n: usize, p: usize| format!("{} bulk{n}x{p}\n\n", "filler words ".repeat(145));
    for n in 0..10 {
        let body: String = (0..110).map(|p| paragraph(n, p)).collect();
        env.project_file(
            &format!("notes/bulk/b{n}.md"),
            format!("# Bulk {n}\n\n{body}"),
        );
    }
}

/// Base `team` of the team notes, on a database of its own of the test server, in the config
/// (not synced yet).
fn team_on_server() -> Option<(&'static Pg, String, Env)> {
    let pg = postgres::shared()?;
    let db = pg.database();
    let url = pg.url(&db);
    let env = Env::new();
    let dir = notes(&env);
    env.write_config(&format!(
        r#"{{"kb":{{"bases":{{"team":{{"path":"{}","store":"{url}"}}}}}}}}"#,
        dir.display()
    ));
    Some((pg, db, env))
}
