//! Knowledge bases over a real vault's files: `[[wikilinks]]` resolved to the notes they name
//! (and listed by `ai kb show` with the notes that link back).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

fn folder(env: &Env, notes: &[(&str, &str)]) -> PathBuf {
    let dir = env.path("vault");
    for (name, text) in notes {
        write(&dir, name, text);
    }
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn add(env: &Env, dir: &Path) -> Out {
    env.run(&["kb", "add", "vault", dir.to_str().unwrap()])
        .success()
}

fn show(env: &Env, name: &str) -> Value {
    env.run(&["kb", "show", "vault", name, "--json"])
        .success()
        .json()
}

/// Each link of a note as (name, path of the note it reaches or "-").
fn links(note: &Value) -> Vec<(String, String)> {
    note["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_owned(),
                l["note"]["path"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect()
}

fn from(note: &Value) -> Vec<String> {
    note["linked_from"]
        .as_array()
        .expect("linked_from")
        .iter()
        .map(|l| l["path"].as_str().unwrap().to_owned())
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn wikilinks_resolve_to_the_notes_they_name() {
    let env = Env::echo();
    let dir = folder(
        &env,
        &[
            (
                "index.md",
                "# Index\n\nSee [[coffee]], [[Brewing|how we brew]] and [[deep/Tea#Green]].\n\n\
                 Also [[Missing note]] and [the grinder](tools/grinder.md).\n\n\
                 ![[Brewing]] ![[photo.png]]\n\n`[[in code]]`\n",
            ),
            // Two notes called Coffee: the shorter path wins, as in Obsidian.
            ("Coffee.md", "# Coffee\n\nBeans.\n"),
            ("archive/old/Coffee.md", "# Old coffee\n\nOld beans.\n"),
            ("recipes/Brewing.md", "Brewing steps, see [[Coffee]].\n"),
            ("deep/Tea.md", "# Tea\n\n## Green\n\nSencha.\n"),
            (
                "tools/grinder.md",
                "A burr grinder. Back to [index](../index.md).\n",
            ),
        ],
    );
    add(&env, &dir);
    let index = show(&env, "index");
    assert_eq!(
        links(&index),
        pairs(&[
            ("coffee", "Coffee.md"),
            ("Brewing", "recipes/Brewing.md"),
            ("deep/Tea", "deep/Tea.md"),
            ("Missing note", "-"),
            ("tools/grinder.md", "tools/grinder.md"),
            ("Brewing", "recipes/Brewing.md"),
        ])
    );
    assert_eq!(index["links"][0]["line"], 3);
    assert_eq!(index["links"][3]["line"], 5);
    assert_eq!(index["links"][5]["line"], 7);
    // Backlinks follow the same resolution: the archived Coffee is linked from nowhere.
    assert_eq!(
        from(&show(&env, "Coffee.md")),
        ["index.md", "recipes/Brewing.md"]
    );
    assert!(from(&show(&env, "archive/old/Coffee.md")).is_empty());
    assert_eq!(from(&show(&env, "deep/Tea.md")), ["index.md"]);
    assert_eq!(from(&show(&env, "index.md")), ["tools/grinder.md"]);
    // On the terminal: the text on stdout, the links beside it on stderr.
    let out = env.run(&["kb", "show", "vault", "index"]).success();
    assert!(out.stdout.starts_with("# Index"), "{}", out.stdout);
    assert!(!out.stdout.contains("links to:"), "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "ai: links to: Coffee (Coffee.md) · Brewing (recipes/Brewing.md) · Tea (deep/Tea.md) · \
             Missing note (no such note) · grinder (tools/grinder.md)\n"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("ai: linked from: grinder (tools/grinder.md)\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_note_written_later_resolves_a_link_without_reading_the_linking_note_again() {
    let env = Env::echo();
    let dir = folder(&env, &[("a.md", "Waiting for [[Later]].\n")]);
    add(&env, &dir);
    assert_eq!(links(&show(&env, "a")), pairs(&[("Later", "-")]));
    write(&dir, "notes/later.md", "Here at last.\n");
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(out.stdout.contains("added 1"), "{}", out.stdout);
    assert!(out.stdout.contains("unchanged 1"), "{}", out.stdout);
    assert_eq!(
        links(&show(&env, "a")),
        pairs(&[("Later", "notes/later.md")])
    );
    assert_eq!(from(&show(&env, "notes/later.md")), ["a.md"]);
    // The target gone, the link is unresolved again (and no error).
    std::fs::remove_file(dir.join("notes/later.md")).unwrap();
    env.run(&["kb", "sync", "vault"]).success();
    assert_eq!(links(&show(&env, "a")), pairs(&[("Later", "-")]));
}

#[test]
fn wikilink_targets_count_in_the_hash_as_markdown_links_do() {
    let env = Env::echo();
    let target = "01_a_Target_e0d27e3ad.md";
    let dir = folder(
        &env,
        &[
            (target, "The target.\n"),
            (
                "b.md",
                "To [[01_a_Target_e0d27e3ad|the target]] and [[Other]].\n",
            ),
            ("Other.md", "Other.\n"),
        ],
    );
    add(&env, &dir);
    // The target renamed (a reorganize rewrites the link): the linking note is unchanged.
    std::fs::rename(dir.join(target), dir.join("02_b_Target_e0d27e3ad.md")).unwrap();
    write(
        &dir,
        "b.md",
        "To [[02_b_Target_e0d27e3ad|the target]] and [[Other]].\n",
    );
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(out.stdout.contains("updated 0"), "{}", out.stdout);
    assert_eq!(
        links(&show(&env, "b")),
        pairs(&[
            ("e0d27e3ad", "02_b_Target_e0d27e3ad.md"),
            ("Other", "Other.md")
        ])
    );
    // A link to another note is a change of the note.
    write(
        &dir,
        "b.md",
        "To [[02_b_Target_e0d27e3ad|the target]] and [[Else]].\n",
    );
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(out.stdout.contains("updated 1"), "{}", out.stdout);
}

#[test]
fn an_index_from_before_links_gets_them_at_its_next_sync() {
    let env = Env::echo();
    let dir = folder(&env, &[("a.md", "To [[b]].\n"), ("b.md", "B.\n")]);
    add(&env, &dir);
    let db = env.home.join("kb/vault.sqlite");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("DROP TABLE links;")
        .unwrap();
    // Read as it is: backlinks from the text, no links listed.
    let b = show(&env, "b");
    assert_eq!(from(&b), ["a.md"]);
    assert!(links(&show(&env, "a")).is_empty());
    let out = env.run(&["kb", "sync", "vault"]).success();
    // Read again, nothing changed.
    assert!(out.stdout.contains("unchanged 2"), "{}", out.stdout);
    assert_eq!(links(&show(&env, "a")), pairs(&[("b", "b.md")]));
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(out.stdout.contains("unchanged 2"), "{}", out.stdout);
}

#[test]
fn where_no_file_has_the_name_a_title_or_an_alias_does() {
    let env = Env::echo();
    let dir = folder(
        &env,
        &[
            (
                "a.md",
                "[[Espresso]], [[kubernetes]], [[Kube]] and [[sub/Espresso]].\n",
            ),
            (
                "01_002_Espresso_d4e5f6071.md",
                "# Espresso\n\nFine grind.\n",
            ),
            ("k8s.md", "---\naliases: [Kubernetes]\n---\nContainers.\n"),
            ("Kube.md", "---\naliases: [Kube]\n---\nThe file wins.\n"),
        ],
    );
    add(&env, &dir);
    assert_eq!(
        links(&show(&env, "a")),
        pairs(&[
            ("Espresso", "01_002_Espresso_d4e5f6071.md"),
            ("kubernetes", "k8s.md"),
            ("Kube", "Kube.md"),
            // A path names a file only.
            ("sub/Espresso", "-"),
        ])
    );
    assert_eq!(from(&show(&env, "k8s.md")), ["a.md"]);
    assert_eq!(from(&show(&env, "d4e5f6071")), ["a.md"]);
}
