//! Knowledge bases as their owners see them: stemmed keywords in English and German, titles
//! (front matter, an opening heading, else the file name), aliases, embeds, generated notes
//! skipped, and an index from before stemming brought up to date by its next sync.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

fn folder(env: &Env, notes: &[(&str, &str)]) -> PathBuf {
    env.notes_folder("vault", notes.iter().copied())
}

fn add(env: &Env, dir: &Path) -> Out {
    env.run(&["kb", "add", "vault", dir.to_str().unwrap()])
        .success()
}

fn search(env: &Env, query: &str) -> Vec<Value> {
    env.run(&["kb", "search", "vault", query, "--json"])
        .success()
        .json()
        .as_array()
        .expect("an array")
        .clone()
}

fn paths(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .map(|h| h["path"].as_str().unwrap().to_owned())
        .collect()
}

const MIXED: &[(&str, &str)] = &[
    (
        "mice.md",
        "# Mice\n\nThe studies of laboratory mice showed that the treatment was working.\n",
    ),
    (
        "tape.md",
        "# Tape\n\nWe keep the archive on tape, and the tape is stored offsite.\n",
    ),
    (
        "sicherung.md",
        "# Sicherung\n\nDie Sicherung der Datenbank läuft jede Nacht auf das NAS.\n",
    ),
    (
        "kaffee.md",
        "# Kaffee\n\nDer Kaffee wird mit der Siebträgermaschine gemacht und ist stark.\n",
    ),
];

#[test]
fn english_words_meet_their_other_forms() {
    let env = Env::echo();
    let dir = folder(&env, MIXED);
    add(&env, &dir);
    // "study" is in no word of the note ("studies"), not even as a part of one.
    assert_eq!(paths(&search(&env, "study")), vec!["mice.md"]);
    assert_eq!(paths(&search(&env, "treatments worked")), vec!["mice.md"]);
}

#[test]
fn german_words_meet_their_other_forms() {
    let env = Env::echo();
    let dir = folder(&env, MIXED);
    add(&env, &dir);
    // "Sicherungen" is longer than the note's "Sicherung": only the stems meet.
    assert_eq!(
        paths(&search(&env, "Wie laufen die Sicherungen?")),
        vec!["sicherung.md"]
    );
    // A compound part is still found inside the compound (the trigram index).
    assert_eq!(paths(&search(&env, "Maschine")), vec!["kaffee.md"]);
}

#[test]
fn titles_are_what_the_owner_sees() {
    let env = Env::echo();
    let dir = folder(
        &env,
        &[
            // A heading further down names a section, not the note: the file name is the title.
            (
                "Docker networking.md",
                "Some intro text.\n\n# Example\n\nA bridge network.\n",
            ),
            ("opening.md", "\n# Opening heading\n\nText.\n"),
            (
                "front.md",
                "---\ntitle: From the front matter\n---\n# Not this\n\nText.\n",
            ),
            ("202301151230 Meeting notes.md", "We met.\n"),
        ],
    );
    add(&env, &dir);
    let titles: Vec<(String, String)> = search(&env, "text intro network met")
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_owned(),
                h["title"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let title = |p: &str| {
        titles
            .iter()
            .find(|(path, _)| path == p)
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| panic!("{p} not found in {titles:?}"))
    };
    assert_eq!(title("Docker networking.md"), "Docker networking");
    assert_eq!(title("opening.md"), "Opening heading");
    assert_eq!(title("front.md"), "From the front matter");
    assert_eq!(title("202301151230 Meeting notes.md"), "Meeting notes");
    // The note's own name finds it first.
    assert_eq!(
        paths(&search(&env, "docker networking"))[0],
        "Docker networking.md"
    );
}

#[test]
fn aliases_are_searchable_and_embeds_are_not_text() {
    let env = Env::echo();
    let dir = folder(
        &env,
        &[
            (
                "k8s.md",
                "---\naliases:\n  - Kubernetes\n  - kube cluster\n---\nHow we run containers.\n\n![[architecture.excalidraw]]\n",
            ),
            (
                "other.md",
                "---\naliases: [Vorratsdatenspeicherung, \"VDS\"]\n---\nNothing else here.\n",
            ),
        ],
    );
    add(&env, &dir);
    assert_eq!(paths(&search(&env, "kubernetes")), vec!["k8s.md"]);
    assert_eq!(paths(&search(&env, "VDS")), vec!["other.md"]);
    // The embedded drawing's name is no word of the note.
    assert!(search(&env, "architecture").is_empty());
}

#[test]
fn generated_notes_are_skipped_counted_and_listed() {
    let env = Env::echo();
    let dir = folder(
        &env,
        &[
            ("plan.md", "# Plan\n\nThe plan.\n"),
            (
                "Drawings/plan.excalidraw.md",
                "---\nexcalidraw-plugin: parsed\n---\n# Drawing\n\n```json\n{\"type\":\"excalidraw\",\"elements\":[]}\n```\n",
            ),
        ],
    );
    let out = add(&env, &dir);
    assert!(out.stdout.contains("1 note"), "{}", out.stdout);
    assert!(out.stderr.contains("1 generated"), "{}", out.stderr);
    assert!(search(&env, "excalidraw").is_empty());
    let stats = env.run(&["kb", "stats", "vault", "--skipped"]).success();
    assert!(
        stats.stdout.contains("Drawings/plan.excalidraw.md"),
        "{}",
        stats.stdout
    );
}

#[test]
fn an_index_from_before_stemming_is_searched_as_it_was_until_its_next_sync() {
    if kb_store::sqlite_only("writes a SQLite index of the version before stemming by hand") {
        return;
    }
    let env = Env::echo();
    let dir = folder(&env, MIXED);
    add(&env, &dir);
    // Make it an index as the version before stemming wrote it.
    let db = env.home.join("kb/vault.sqlite");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "DROP TABLE words;
             CREATE VIRTUAL TABLE words USING fts5(title, heading, text, content='',
                 contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
             INSERT INTO words(rowid, title, heading, text)
                 SELECT c.c, lower(n.title), lower(c.heading), lower(c.text)
                 FROM chunks c JOIN notes n ON n.n = c.note;
             DELETE FROM meta WHERE key IN ('keywords', 'languages');",
        )
        .unwrap();
    }
    let out = env
        .run(&["kb", "search", "vault", "tape", "--json"])
        .success();
    assert!(out.stderr.contains("older version"), "{}", out.stderr);
    assert_eq!(paths(out.json().as_array().unwrap()), vec!["tape.md"]);
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(
        out.stderr.contains("indexing its keywords again"),
        "{}",
        out.stderr
    );
    let out = env
        .run(&["kb", "search", "vault", "study", "--json"])
        .success();
    assert!(!out.stderr.contains("older version"), "{}", out.stderr);
    assert_eq!(paths(out.json().as_array().unwrap()), vec!["mice.md"]);
    // Nothing changed since: the next sync reads nothing again.
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(out.stdout.contains("unchanged 4"), "{}", out.stdout);
}

#[test]
fn passages_clearly_below_the_best_are_not_sent() {
    let env = Env::echo();
    let dir = folder(
        &env,
        &[
            (
                "espresso.md",
                "# Espresso\n\nEspresso needs a fine grind and nine bar of pressure.\n",
            ),
            (
                "tyres.md",
                "# Tyres\n\nCheck the tyres every month, before long trips, after a puncture, \
                 when the car pulls to one side, when the weather turns cold, and when the \
                 dashboard warns about it; the right pressure is on the door.\n",
            ),
            ("tea.md", "# Tea\n\nGreen tea wants water at 80 degrees.\n"),
        ],
    );
    add(&env, &dir);
    // Both notes match, the second by one common word only: it is searchable, but not sent.
    assert_eq!(
        paths(&search(&env, "espresso grind pressure")),
        vec!["espresso.md", "tyres.md"]
    );
    let out = env
        .run(&[
            "echo",
            "--kb",
            "vault",
            "--no-chat",
            "espresso grind pressure?",
        ])
        .success();
    assert!(
        out.stdout.contains("1 passage from notes"),
        "{}",
        out.stdout
    );
    assert!(!out.stderr.contains("Tyres"), "{}", out.stderr);
    // Nothing matches: no passages, the model is told so, and the user sees it.
    let dry = env
        .run(&["echo", "--kb", "vault", "--dry-run", "zeppelin mooring?"])
        .success();
    assert!(
        dry.stdout.contains("found nothing that matches"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stderr.contains("nothing in vault matches the question"),
        "{}",
        dry.stderr
    );
}

#[test]
fn a_grounded_turn_sees_notes_written_since_the_last_sync() {
    let env = Env::echo();
    let dir = folder(&env, MIXED);
    add(&env, &dir);
    std::fs::write(
        dir.join("zeppelin.md"),
        "# Zeppelin mooring\n\nThe zeppelin moors at the mast on the hill.\n",
    )
    .unwrap();
    let out = env
        .run(&[
            "echo",
            "--kb",
            "vault",
            "--no-chat",
            "where does the zeppelin moor?",
        ])
        .success();
    assert!(out.stderr.contains("Zeppelin mooring"), "{}", out.stderr);
    assert!(
        out.stdout.contains("1 passage from notes"),
        "{}",
        out.stdout
    );
    // Synced for good: the index has it.
    assert_eq!(paths(&search(&env, "zeppelin")), vec!["zeppelin.md"]);
    // More changes than a turn syncs by itself: the user is told, the turn goes on.
    for i in 0..60 {
        std::fs::write(
            dir.join(format!("bulk-{i}.md")),
            format!("Bulk note {i}.\n"),
        )
        .unwrap();
    }
    let out = env
        .run(&[
            "echo",
            "--kb",
            "vault",
            "--no-chat",
            "where does the zeppelin moor?",
        ])
        .success();
    assert!(
        out.stderr
            .contains("60 notes changed since the last sync of vault (ai kb sync vault)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Zeppelin mooring"), "{}", out.stderr);
}
