use super::*;
use crate::fuzz::check_chunks;
use proptest::prelude::*;

fn md(body: &str, budget: usize) -> Vec<Chunk> {
    let chunks = split(body, 1, Kind::Markdown, budget);
    check_chunks(body, 1, budget, &chunks);
    chunks
}

fn headings(chunks: &[Chunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.heading.as_str()).collect()
}

/// `n` words of prose, sentences of five words.
fn prose(n: usize) -> String {
    (0..n)
        .map(|i| if i % 5 == 4 { "wort." } else { "wort" })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn estimates_a_token_per_four_bytes() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("a"), 1);
    assert_eq!(estimate_tokens("abcd"), 1);
    assert_eq!(estimate_tokens("abcde"), 2);
    assert_eq!(estimate_tokens("ßß"), 1);
    assert_eq!(DEFAULT_BUDGET, 500);
}

#[test]
fn a_short_note_is_one_chunk_with_its_file_lines() {
    let body = "\n\n# Über Backups\n\nText mit Umlauten: äöü ß.\n\n## Details\nMehr.\n\n";
    let chunks = split(body, 5, Kind::Markdown, 500);
    check_chunks(body, 5, 500, &chunks);
    assert_eq!(chunks.len(), 1);
    let c = &chunks[0];
    assert_eq!(
        (c.start_line, c.end_line),
        (7, 12),
        "blank lines around are not part of it"
    );
    assert!(c.text.starts_with("# Über Backups") && c.text.ends_with("Mehr."));
    assert_eq!(c.heading, "Über Backups", "the heading the sections share");
}

#[test]
fn empty_and_blank_bodies_have_no_chunks() {
    for body in ["", "\n", "  \n\t\n\r\n", "   "] {
        assert!(md(body, 10).is_empty(), "{body:?}");
        assert!(split(body, 1, Kind::Text, 10).is_empty());
    }
}

#[test]
fn a_long_note_splits_on_headings_with_their_paths() {
    let body = format!(
        "# Setup\n{}\n## Backups\n{}\n### Nightly\n{}\n## Restore\n{}\n# Other\n{}\n",
        prose(60),
        prose(60),
        prose(60),
        prose(60),
        prose(60)
    );
    let chunks = md(&body, 100);
    assert_eq!(
        headings(&chunks),
        [
            "Setup",
            "Setup > Backups",
            "Setup > Backups > Nightly",
            "Setup > Restore",
            "Other"
        ]
    );
    // Each chunk starts at its heading's line.
    for c in &chunks {
        let first = body
            .lines()
            .nth(c.start_line as usize - 1)
            .unwrap_or_default();
        assert!(first.starts_with('#'), "{first:?}");
    }
    assert_eq!((chunks[1].start_line, chunks[1].end_line), (3, 4));
}

#[test]
fn small_sections_are_packed_up_to_the_budget() {
    let body = "# T\n## A\na.\n## B\nb.\n## C\nc.\n";
    let chunks = md(body, 5);
    assert!(chunks.len() > 1, "{chunks:?}");
    assert_eq!(chunks[0].heading, "T", "the common path of T, T > A");
    let one = md(body, 500);
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].heading, "T");
    let two = md("## A\na\n## B\nb\n", 500);
    assert_eq!(two[0].heading, "", "A and B share no heading");
}

#[test]
fn a_heading_stays_with_what_follows_it() {
    // A section too long to be one chunk: its heading must not end the chunk before.
    let body = format!("# A\n{}\n## B\n{}\n\n{}\n", prose(20), prose(15), prose(15));
    let chunks = md(&body, 40);
    for c in &chunks {
        assert!(!c.text.trim_end().ends_with("## B"), "{chunks:#?}");
    }
}

#[test]
fn hashes_in_fences_are_not_headings_and_fences_are_not_split() {
    let fence = "```sh\n# not a heading\necho 1\n\n# still code\n```";
    let body = format!("# Real\n{}\n\n{fence}\n\n{}\n", prose(30), prose(30));
    let chunks = md(&body, 60);
    assert!(chunks.iter().all(|c| c.heading == "Real"), "{chunks:#?}");
    assert!(
        chunks.iter().any(|c| c.text.contains(fence)),
        "the fence is whole"
    );
    let tilde = "~~~\n# no\n~~~";
    let chunks = md(tilde, 500);
    assert_eq!(headings(&chunks), [""]);
}

#[test]
fn a_fence_longer_than_the_budget_splits_on_lines() {
    let code: String = (0..40).map(|i| format!("let x{i} = {i};\n")).collect();
    let body = format!("# Code\n```rust\n{code}```\n");
    let chunks = md(&body, 20);
    assert!(chunks.len() > 2);
    for c in &chunks {
        assert!(
            c.text.ends_with(';') || c.text.ends_with("```"),
            "{:?}",
            c.text
        );
    }
}

#[test]
fn an_unclosed_fence_runs_to_the_end() {
    let body = format!("# A\n```\n# B\n{}\n", prose(100));
    let chunks = md(&body, 30);
    assert!(chunks.iter().all(|c| c.heading == "A"));
}

#[test]
fn paragraphs_then_sentences_then_hard() {
    let body = format!("{}\n\n{}\n", prose(30), prose(30));
    let chunks = md(&body, 50);
    assert_eq!(chunks.len(), 2, "one paragraph each");
    assert_eq!((chunks[1].start_line, chunks[1].end_line), (3, 3));
    let sentences = md(&prose(200), 30);
    assert!(
        sentences
            .iter()
            .all(|c| c.text.ends_with('.') || c.text.ends_with("wort"))
    );
    assert!(
        sentences[..sentences.len() - 1]
            .iter()
            .all(|c| c.text.ends_with('.'))
    );
    // No sentence end, no space: hard cuts on character boundaries.
    let word = "äßü".repeat(300);
    let chunks = md(&word, 10);
    assert!(chunks.len() > 10);
    assert_eq!(chunks.concat_text(), word);
}

trait Concat {
    fn concat_text(&self) -> String;
}

impl Concat for Vec<Chunk> {
    fn concat_text(&self) -> String {
        self.iter().map(|c| c.text.as_str()).collect()
    }
}

#[test]
fn hard_cuts_prefer_whitespace() {
    let text = "aaaaaaa bbbbbbbbbbb ccccccc ddddddd";
    let chunks = md(text, 3);
    assert!(
        chunks
            .iter()
            .all(|c| !c.text.contains(' ') || c.text.len() <= 12)
    );
    assert_eq!(chunks[0].text, "aaaaaaa");
}

#[test]
fn list_items_split_between_items() {
    let items: String = (0..30)
        .map(|i| format!("- item number {i} without end\n"))
        .collect();
    let chunks = md(&items, 40);
    for c in &chunks {
        assert!(c.text.starts_with("- item"), "{:?}", c.text);
    }
}

#[test]
fn setext_headings() {
    let body = format!("Title\n=====\n{}\n\nPart\n----\n{}\n", prose(40), prose(40));
    let chunks = md(&body, 60);
    assert_eq!(chunks[0].heading, "Title");
    assert_eq!(
        chunks.last().map(|c| c.heading.as_str()),
        Some("Title > Part")
    );
    // A `---` after a paragraph of several lines is no heading here.
    assert_eq!(md("a\nb\n---\nc", 500)[0].heading, "");
}

#[test]
fn atx_heading_forms() {
    assert_eq!(atx("# A"), Some((1, "A")));
    assert_eq!(atx("###### F ###"), Some((6, "F")));
    assert_eq!(atx("## C#"), Some((2, "C#")));
    assert_eq!(atx("#"), Some((1, "")));
    assert_eq!(atx("   # Indented"), Some((1, "Indented")));
    assert_eq!(atx("    # code"), None);
    assert_eq!(atx("#hashtag"), None);
    assert_eq!(atx("####### seven"), None);
}

#[test]
fn text_files_split_on_paragraphs_then_lines() {
    let code: String = (0..50)
        .map(|i| format!("# comment {i}\nx = {i}\n"))
        .collect();
    let chunks = split(&code, 3, Kind::Text, 30);
    check_chunks(&code, 3, 30, &chunks);
    assert!(chunks.len() > 2);
    assert!(chunks.iter().all(|c| c.heading.is_empty()));
    let lines: Vec<&str> = code.lines().collect();
    for c in &chunks {
        // Whole lines: the first and the last are the file's.
        assert_eq!(
            c.text.lines().next(),
            Some(lines[c.start_line as usize - 3])
        );
        assert_eq!(c.text.lines().last(), Some(lines[c.end_line as usize - 3]));
    }
    assert_eq!(chunks[0].start_line, 3);
}

#[test]
fn crlf_lines_are_counted_right() {
    let body = "# A\r\none\r\n\r\n# B\r\ntwo\r\n";
    let chunks = md(body, 3);
    assert_eq!(headings(&chunks), ["A", "B"]);
    assert_eq!((chunks[1].start_line, chunks[1].end_line), (4, 5));
    assert!(!chunks[1].text.ends_with('\r'));
}

#[test]
fn same_body_same_chunks() {
    let body = format!("# A\n{}\n## B\n```\n{}\n```\n", prose(300), prose(100));
    for budget in [1, 7, 50, 500] {
        assert_eq!(md(&body, budget), md(&body, budget));
    }
}

#[test]
fn an_edit_far_away_leaves_a_section_alone() {
    let a = format!(
        "# A\n{}\n# B\n{}\n# C\n{}\n",
        prose(80),
        prose(80),
        prose(80)
    );
    let b = a.replacen("wort", "Wort", 1);
    let (ca, cb) = (md(&a, 100), md(&b, 100));
    assert_ne!(ca[0], cb[0]);
    assert_eq!(ca[1..], cb[1..]);
}

#[test]
fn nasty_inputs() {
    let hashes = "#".repeat(10_000);
    for body in [
        hashes.as_str(),
        "---",
        "```",
        "```\n```\n```",
        "~~~~\n# a\n~~~",
        "\u{feff}# BOM",
        "a\r\rb\r",
        "# \n#\n##",
        "\n\n\n",
    ] {
        for budget in [0, 1, 2, 500] {
            let _ = md(body, budget);
            let chunks = split(body, 1, Kind::Text, budget);
            check_chunks(body, 1, budget, &chunks);
        }
    }
    let long_heading = format!("# {}", "ü".repeat(5_000));
    assert!(md(&long_heading, 10).len() > 100);
}

#[test]
fn ten_thousand_notes_chunk() {
    let note = format!(
        "# Notiz über Datensicherung\n\n{}\n\n## Schritte\n\n- eins\n- zwei\n\n```sh\n# kein Titel\nrsync -a x y\n```\n\n{}\n",
        prose(180),
        prose(180)
    );
    assert!(note.len() > 1_800, "about 2 KB: {}", note.len());
    // Speed is measured by bench/run (sync rows), not here: a timed test flakes on a busy machine.
    let mut n = 0;
    for _ in 0..10_000 {
        n += split(&note, 1, Kind::Markdown, DEFAULT_BUDGET).len();
    }
    assert!(n >= 10_000);
}

#[test]
fn a_long_sections_parts_keep_its_heading() {
    let body = "# Datensicherung\n\nWie ich meine Notizen sichere. Zuerst lokal, dann extern.\n\n## Lokal\n\nJede Nacht läuft `restic` auf dem NAS. Die Größe der Sicherung wächst langsam. Alte Stände werden nach 30 Tagen gelöscht.\n\n```sh\n# nicht ein Titel\nrestic backup ~/notes\n```\n\n## Extern\n\n- Festplatte im Büro\n- Cloud-Speicher (verschlüsselt)\n- USB-Stick für unterwegs\n\n### Prüfung\n\nEinmal im Monat prüfe ich, ob die Wiederherstellung klappt. Das dauert zehn Minuten.\n";
    let chunks = md(body, 40);
    let got: Vec<(&str, u32, u32)> = chunks
        .iter()
        .map(|c| (c.heading.as_str(), c.start_line, c.end_line))
        .collect();
    assert_eq!(
        got,
        [
            ("Datensicherung", 1, 3),
            ("Datensicherung > Lokal", 5, 7),
            // The rest of a long section is not packed with the next section.
            ("Datensicherung > Lokal", 9, 12),
            ("Datensicherung > Extern", 14, 18),
            ("Datensicherung > Extern > Prüfung", 20, 22),
        ]
    );
    assert!(chunks[2].text.starts_with("```sh\n# nicht ein Titel"));
}

proptest! {
    #[test]
    fn invariants_hold_for_markdown_shaped_input(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("# "), Just("## "), Just("###### "), Just("#"), Just("```"), Just("~~~"),
                Just("\n"), Just("\r\n"), Just("\n\n"), Just(". "), Just("wort"), Just("äöü ß"),
                Just("- "), Just("1. "), Just("==="), Just("---"), Just("    "), Just("`"),
                Just("。"), Just("!"), Just("\t"),
            ],
            0..80,
        ),
        budget in 0usize..40,
        first in 1u32..5,
    ) {
        let body: String = parts.concat();
        for kind in [Kind::Markdown, Kind::Text] {
            let chunks = split(&body, first, kind, budget);
            check_chunks(&body, first, budget, &chunks);
        }
    }

    #[test]
    fn the_fuzz_entry_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        crate::fuzz::kb_chunk(&bytes);
    }
}
