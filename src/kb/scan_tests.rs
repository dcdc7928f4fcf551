use super::*;
use std::os::unix::fs::symlink;

/// A folder with these files (content = their path), folders made as needed.
fn tree(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let path = dir.path().join(f);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, f).unwrap();
    }
    dir
}

fn write(dir: &tempfile::TempDir, rel: &str, text: &str) {
    let path = dir.path().join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn run(dir: &Path, include: &[&str], exclude: &[&str]) -> (Vec<String>, Skipped) {
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let filter = Filter::new(&own(include), &own(exclude)).unwrap();
    let (entries, skipped) = scan(dir, &filter).unwrap();
    (entries.into_iter().map(|e| e.rel).collect(), skipped)
}

#[test]
fn known_extensions_sorted_with_kinds_and_metadata() {
    let dir = tree(&[
        "b.md",
        "a/z.markdown",
        "a/y.MDX",
        "a.md",
        "code/main.rs",
        "code/run.PY",
        "notes.txt",
        "pic.png",
        "Makefile",
        "archive.tar.gz",
    ]);
    let filter = Filter::new(&[], &[]).unwrap();
    let (entries, skipped) = scan(dir.path(), &filter).unwrap();
    let rels: Vec<&str> = entries.iter().map(|e| e.rel.as_str()).collect();
    assert_eq!(
        rels,
        [
            "a.md",
            "a/y.MDX",
            "a/z.markdown",
            "b.md",
            "code/main.rs",
            "code/run.PY",
            "notes.txt"
        ],
        "sorted by rel path, '/'-separated"
    );
    let kinds: Vec<Kind> = entries.iter().map(|e| e.kind).collect();
    use Kind::{Markdown as M, Text as T};
    assert_eq!(kinds, [M, M, M, M, T, T, T]);
    assert_eq!(skipped.unsupported, 3);
    let e = &entries[1];
    assert_eq!(e.path, dir.path().join("a/y.MDX"));
    assert_eq!(e.size, "a/y.MDX".len() as u64);
    let meta = fs::metadata(&e.path).unwrap();
    assert_eq!(e.mtime_ns, mtime_ns(&meta));
    assert!(
        e.mtime_ns > 1_600_000_000_000_000_000,
        "nanoseconds since 1970"
    );
}

#[test]
fn hidden_names_are_skipped_a_folder_once() {
    let dir = tree(&[
        ".git/HEAD",
        ".git/objects/a/b",
        ".obsidian/workspace.json",
        ".hidden.md",
        "sub/.also.md",
        "sub/seen.md",
        "seen.md",
    ]);
    let (rels, skipped) = run(dir.path(), &[], &[]);
    assert_eq!(rels, ["seen.md", "sub/seen.md"]);
    assert_eq!(skipped.hidden, 4);
}

#[test]
fn gitignore_files_are_honoured() {
    let dir = tree(&[
        "keep.md",
        "drop.md",
        "build/out.md",
        "logs/today.md",
        "notes/build/x.md",
        "notes/a.log.md",
        "notes/private/secret.md",
        "notes/deep/private/open.md",
        "notes/deep/er/tmp.md",
        "notes/deep/er/keep.md",
        "other/private/open.md",
        "Über/ä.md",
    ]);
    write(
        &dir,
        ".gitignore",
        "# comment\n\ndrop.md\nbuild/\n/logs\n*.log.md\n**/er/tmp.md\nÜber/\n",
    );
    // A nested file: `private/` anchored? No: a trailing / alone does not anchor. A middle /
    // anchors to this folder. `!` re-includes.
    write(
        &dir,
        "notes/.gitignore",
        "/private\ndeep/er/*\n!deep/er/keep.md\r\n",
    );
    let (rels, skipped) = run(dir.path(), &[], &[]);
    assert_eq!(
        rels,
        [
            "keep.md",
            "notes/deep/er/keep.md",
            "notes/deep/private/open.md",
            "other/private/open.md"
        ]
    );
    // drop.md, build/, notes/build/, logs/, a.log.md, private/, tmp.md, Über/
    assert_eq!(skipped.ignored, 8);
    assert_eq!(skipped.hidden, 2, "the two .gitignore files");
}

#[test]
fn a_broken_gitignore_line_is_no_rule() {
    let dir = tree(&["a.md", "[x.md"]);
    write(&dir, ".gitignore", "[x.md\na.md\n");
    let (rels, skipped) = run(dir.path(), &[], &[]);
    assert_eq!(rels, ["[x.md"]);
    assert_eq!(skipped.ignored, 1);
}

#[test]
fn a_gitignore_that_cannot_be_read_is_counted() {
    let dir = tree(&["a.md", ".gitignore/x"]);
    let (rels, skipped) = run(dir.path(), &[], &[]);
    assert_eq!(rels, ["a.md"]);
    assert_eq!(skipped.unreadable, 1);
}

#[test]
fn include_replaces_the_extension_list() {
    let dir = tree(&[
        "a.md",
        "deep/er/b.md",
        "docs/x/c.txt",
        "docs/d.txt",
        "e.txt",
        "Makefile",
        "f.org",
    ]);
    let (rels, skipped) = run(dir.path(), &["*.md", "docs/**/*.txt", "Makefile"], &[]);
    assert_eq!(
        rels,
        [
            "Makefile",
            "a.md",
            "deep/er/b.md",
            "docs/d.txt",
            "docs/x/c.txt"
        ]
    );
    assert_eq!(skipped.unsupported, 2, "e.txt and f.org: not included");
    let filter = Filter::new(&["*".into()], &[]).unwrap();
    let (entries, _) = scan(dir.path(), &filter).unwrap();
    let make = entries.iter().find(|e| e.rel == "Makefile").unwrap();
    assert_eq!(make.kind, Kind::Text);
    let md = entries.iter().find(|e| e.rel == "a.md").unwrap();
    assert_eq!(md.kind, Kind::Markdown);
}

#[test]
fn exclude_removes_files_and_whole_folders() {
    let dir = tree(&[
        "a.md",
        "a.tmp.md",
        "drafts/x.md",
        "drafts/y/z.md",
        "old/o.md",
        "sub/old/p.md",
        "sub/drafts/kept.md",
        "sub/q.md",
    ]);
    let (rels, skipped) = run(dir.path(), &[], &["*.tmp.md", "drafts/**", "old/"]);
    assert_eq!(rels, ["a.md", "sub/drafts/kept.md", "sub/q.md"]);
    // a.tmp.md, drafts/ (once), old/, sub/old/
    assert_eq!(skipped.excluded, 4);
    let (rels, _) = run(dir.path(), &[], &["drafts"]);
    assert_eq!(
        rels,
        ["a.md", "a.tmp.md", "old/o.md", "sub/old/p.md", "sub/q.md"]
    );
    let (rels, _) = run(dir.path(), &["*.md"], &["sub/**/*.md", "/a.md"]);
    assert_eq!(
        rels,
        ["a.tmp.md", "drafts/x.md", "drafts/y/z.md", "old/o.md"]
    );
}

#[test]
fn a_bad_glob_is_a_usage_error_naming_it() {
    for (include, exclude) in [
        (vec!["[abc".to_owned()], vec![]),
        (vec![], vec!["ok".into(), "x[".into()]),
    ] {
        let err = Filter::new(&include, &exclude).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::code::USAGE);
        let msg = err.to_string();
        assert!(msg.contains("[abc") || msg.contains("x["), "{msg}");
        assert!(msg.contains("unclosed ["), "{msg}");
        assert!(err.hint_text().is_some());
    }
    let err = Filter::new(&[String::new()], &[]).unwrap_err();
    assert!(err.to_string().contains("empty pattern"));
}

#[test]
fn a_root_that_is_no_folder_is_an_error_naming_it() {
    let dir = tree(&["file.md"]);
    let filter = Filter::default();
    let file = dir.path().join("file.md");
    let err = scan(&file, &filter).unwrap_err();
    assert!(
        err.to_string().contains(&file.display().to_string()),
        "{err}"
    );
    assert!(err.to_string().contains("not a folder"), "{err}");
    let missing = dir.path().join("missing");
    let err = scan(&missing, &filter).unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
    assert_eq!(err.exit_code(), crate::error::code::BACKEND);
}

#[test]
fn symlinks_to_files_are_followed_to_folders_never() {
    let dir = tree(&["real/a.md", "other.md"]);
    let root = dir.path();
    symlink(root, root.join("real/loop")).unwrap();
    symlink(root.join("real"), root.join("alias")).unwrap();
    symlink(root.join("other.md"), root.join("real/link.md")).unwrap();
    symlink(root.join("gone.md"), root.join("broken.md")).unwrap();
    let filter = Filter::default();
    let (entries, skipped) = scan(root, &filter).unwrap();
    let rels: Vec<&str> = entries.iter().map(|e| e.rel.as_str()).collect();
    assert_eq!(rels, ["other.md", "real/a.md", "real/link.md"]);
    let link = &entries[2];
    assert_eq!(link.path, root.join("real/link.md"));
    assert_eq!(link.size, "other.md".len() as u64, "the target's size");
    assert_eq!(skipped.links, 2, "loop and alias");
    assert_eq!(skipped.unreadable, 1, "the broken link");
    // A root that is itself a symlink to a folder is fine; from there, `link.md` leads out of
    // the folder (H2-6).
    let (rels, skipped) = run(&root.join("alias"), &[], &[]);
    assert_eq!(rels, ["a.md"]);
    assert_eq!(skipped.links, 2, "loop and the link out");
}

#[test]
fn large_files_are_counted() {
    let dir = tree(&["small.md"]);
    let big = fs::File::create(dir.path().join("big.md")).unwrap();
    big.set_len(MAX_FILE_BYTES + 1).unwrap();
    let exact = fs::File::create(dir.path().join("exact.md")).unwrap();
    exact.set_len(MAX_FILE_BYTES).unwrap();
    let (rels, skipped) = run(dir.path(), &[], &[]);
    assert_eq!(rels, ["exact.md", "small.md"]);
    assert_eq!(skipped.large, 1);
}

#[test]
fn unreadable_folders_are_skipped_not_fatal() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tree(&["a.md", "locked/b.md"]);
    let locked = dir.path().join("locked");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let result = run(dir.path(), &[], &[]);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    let (rels, skipped) = result;
    // root reads every folder; anyone else must see it skipped.
    if unsafe { libc::geteuid() } != 0 {
        assert_eq!(rels, ["a.md"]);
        assert_eq!(skipped.unreadable, 1);
    } else {
        assert_eq!(rels, ["a.md", "locked/b.md"]);
    }
}

#[test]
fn fifos_are_unsupported() {
    let dir = tree(&["a.md"]);
    let fifo = dir.path().join("pipe.md");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    let (rels, skipped) = run(dir.path(), &[], &[]);
    assert_eq!(rels, ["a.md"]);
    assert_eq!(skipped.unsupported, 1);
}

#[test]
fn binary_or_text() {
    assert!(!is_binary(b""));
    assert!(!is_binary("# Größe\nÜbung macht den Meister. ß".as_bytes()));
    assert!(is_binary(b"PK\x03\x04\x00\x00"), "a NUL byte");
    let latin1: Vec<u8> =
        b"Gr\xf6\xdfe: \xdcbung macht den Meister, sagt man in der Schule.".to_vec();
    assert!(!is_binary(&latin1), "a few Latin-1 umlauts are still text");
    assert_eq!(
        decode(&latin1),
        "Größe: Übung macht den Meister, sagt man in der Schule."
    );
    // One stray Windows-1252 byte in a UTF-8 note spoils only itself.
    let mut mixed = "grüße, ".as_bytes().to_vec();
    mixed.extend_from_slice(b"it\x92s fine");
    assert_eq!(decode(&mixed), "grüße, it’s fine");
    assert!(matches!(
        decode("ä".as_bytes()),
        std::borrow::Cow::Borrowed("ä")
    ));
    let noise: Vec<u8> = (0..4096u32).map(|i| (i * 131 % 255 + 1) as u8).collect();
    assert!(is_binary(&noise));
    assert!(
        is_binary(&[0x01, 0x02, 0x03, b'a', 0x04, 0x05]),
        "control characters"
    );
    // A character cut in two by the 8 KiB head is no sign of binary.
    let mut head = "a".repeat(SNIFF_BYTES - 1).into_bytes();
    head.extend_from_slice("ä".as_bytes());
    assert!(!is_binary(&head[..SNIFF_BYTES]));
    // Past 8 KiB nothing counts.
    let mut late = vec![b'a'; SNIFF_BYTES];
    late.push(0);
    assert!(!is_binary(&late));
}

#[test]
fn ten_thousand_files_scan() {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..100 {
        let sub = dir.path().join(format!("{d:02}_Ordner"));
        fs::create_dir(&sub).unwrap();
        for f in 0..100 {
            fs::write(
                sub.join(format!("{f:02}_Notiz_über_{d:03x}{f:06x}.md")),
                "x",
            )
            .unwrap();
        }
    }
    write(&dir, ".gitignore", "*.tmp\nbuild/\n!keep.md\n");
    let filter = Filter::new(&[], &["drafts/**".into()]).unwrap();
    // Speed is measured by bench/run (re-sync row), not here: a timed test flakes.
    let (entries, _) = scan(dir.path(), &filter).unwrap();
    assert_eq!(entries.len(), 10_000);
}
