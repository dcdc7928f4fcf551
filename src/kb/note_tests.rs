use super::*;
use proptest::prelude::*;

const LINKED: &str = "01_12a_How_to_integrate_e0d27e3ad.md";

fn norm(text: &str) -> String {
    let out = normalize_links(text).into_owned();
    assert_eq!(
        out.lines().count(),
        text.lines().count(),
        "lines kept: {text:?}"
    );
    out
}

#[test]
fn zettel_ids_from_file_names() {
    assert_eq!(zettel_id(LINKED), Some("e0d27e3ad"));
    assert_eq!(
        zettel_id("01_005_Schritt_für_Schritt_a1b2c3d4e.md"),
        Some("a1b2c3d4e")
    );
    assert_eq!(
        zettel_id("01_12a_How_to_integrate_e0d27e3ad"),
        Some("e0d27e3ad")
    );
    assert_eq!(zettel_id("x_e0d27e3ad.markdown"), Some("e0d27e3ad"));
    assert_eq!(
        zettel_id("v1.2_e0d27e3ad"),
        Some("e0d27e3ad"),
        "2_… is no extension"
    );
    assert_eq!(zettel_id("e0d27e3ad.md"), None, "no _ before it");
    assert_eq!(zettel_id("a_E0D27E3AD.md"), None, "lowercase only");
    assert_eq!(zettel_id("a_e0d27e3a.md"), None, "8 digits");
    assert_eq!(zettel_id("a_e0d27e3ad0.md"), None, "10 digits");
    assert_eq!(zettel_id("a_e0d27e3ag.md"), None, "not hex");
    assert_eq!(zettel_id("a_e0d27e3ad.md.bak"), None);
    assert_eq!(zettel_id(""), None);
    assert_eq!(zettel_id("_"), None);
}

#[test]
fn a_zettelkasten_note() {
    let text = "Body without heading.\n";
    let note = read(&format!("sub/{LINKED}"), text, Kind::Markdown);
    assert_eq!(note.id, "e0d27e3ad");
    assert_eq!(note.ordering.as_deref(), Some("01_12a"));
    assert_eq!(note.title, "How to integrate");
    assert_eq!(note.body, text);
    assert_eq!(note.first_line, 1);
    assert_eq!(note.hash, hash(text));
    assert_eq!(note.hash.len(), 32);
}

#[test]
fn a_german_zettelkasten_note() {
    let note = read(
        "01_005_Schritt_für_Schritt_a1b2c3d4e.md",
        "Größe: groß, Übung macht den Meister.",
        Kind::Markdown,
    );
    assert_eq!(note.id, "a1b2c3d4e");
    assert_eq!(note.ordering.as_deref(), Some("01_005"));
    assert_eq!(note.title, "Schritt für Schritt");
    let note = read("Über_Äpfel_und_Öl_0123456789.md", "x", Kind::Markdown);
    assert_eq!(
        note.id, "Über_Äpfel_und_Öl_0123456789.md",
        "10 digits: no ID"
    );
    let note = read("Über_Äpfel_und_Öl_012345678.md", "x", Kind::Markdown);
    assert_eq!(note.id, "012345678");
    assert_eq!(note.ordering, None);
    assert_eq!(note.title, "Über Äpfel und Öl");
}

#[test]
fn file_name_parts() {
    assert_eq!(
        name_parts("01_005_2024_Review_0a1b2c3d4.md", "0a1b2c3d4"),
        (Some("01_005_2024".into()), "Review".into()),
        "a title word starting with a digit reads as ordering: the name cannot tell"
    );
    assert_eq!(
        name_parts("01_e0d27e3ad.md", "e0d27e3ad"),
        (Some("01".into()), String::new())
    );
    assert_eq!(
        name_parts("A__b_e0d27e3ad.md", "e0d27e3ad"),
        (None, "A b".into())
    );
    // No title words: the stem is the title.
    let note = read("01_12a_e0d27e3ad.md", "", Kind::Markdown);
    assert_eq!(note.title, "01_12a_e0d27e3ad");
}

#[test]
fn titles_in_order_of_precedence() {
    let fm = "---\ntitle: \"Aus dem Kopf\"\n---\n# Heading\n";
    assert_eq!(read(LINKED, fm, Kind::Markdown).title, "Aus dem Kopf");
    let heading = "\n# Überschrift #\n\nText.\n# Later\n";
    assert_eq!(read(LINKED, heading, Kind::Markdown).title, "Überschrift");
    // A heading further down names a section, not the note: the file name is its title.
    let later = "```\n# in code\n```\n## Second level\n# Überschrift #\n";
    assert_eq!(
        read(LINKED, later, Kind::Markdown).title,
        "How to integrate"
    );
    assert_eq!(
        read(
            "docs/Docker networking.md",
            "Intro.\n\n# Example\n",
            Kind::Markdown
        )
        .title,
        "Docker networking"
    );
    assert_eq!(
        read("202301151230 Meeting.md", "x", Kind::Markdown).title,
        "Meeting"
    );
    assert_eq!(
        read(LINKED, "no heading", Kind::Markdown).title,
        "How to integrate"
    );
    assert_eq!(read("docs/plain.md", "text", Kind::Markdown).title, "plain");
    assert_eq!(read("docs/.md", "text", Kind::Markdown).title, ".md");
}

#[test]
fn aliases_and_language_from_front_matter() {
    let block = "---\naliases:\n  - K8s\n  - \"kube\"\ntags:\n  - x\nlang: de\n---\nThe text.\n";
    let note = read("k.md", block, Kind::Markdown);
    assert_eq!(note.aliases, vec!["K8s", "kube"]);
    assert_eq!(note.lang, Lang::De, "the front matter wins over detection");
    let inline = read(
        "k.md",
        "---\naliases: [a b, 'c']\n---\nDie Sicherung läuft.\n",
        Kind::Markdown,
    );
    assert_eq!(inline.aliases, vec!["a b", "c"]);
    assert_eq!(inline.lang, Lang::De);
    let one = read("k.md", "---\nalias: Solo\n---\nx\n", Kind::Markdown);
    assert_eq!(one.aliases, vec!["Solo"]);
    assert_eq!(one.lang, Lang::En, "nothing to tell: English");
}

#[test]
fn embeds_are_no_text() {
    assert_eq!(
        without_embeds("a ![[x.excalidraw]] b ![[img.png|300]]\n![[open\nc"),
        "a  b \n![[open\nc"
    );
    assert!(matches!(without_embeds("[[link]]"), Cow::Borrowed(_)));
}

#[test]
fn ids_in_order_of_precedence() {
    let fm = "---\nid: 20230101-abc\n---\n";
    assert_eq!(read(LINKED, fm, Kind::Markdown).id, "e0d27e3ad");
    assert_eq!(read("a/b.md", fm, Kind::Markdown).id, "20230101-abc");
    assert_eq!(read("a/b.md", "text", Kind::Markdown).id, "a/b.md");
    assert_eq!(
        read("a/b.md", "---\nid: ''\n---\n", Kind::Markdown).id,
        "a/b.md"
    );
}

#[test]
fn front_matter_is_removed_and_counted() {
    let text = "---\r\ntitle: 'It''s here'\r\nid: \"q\\\"x\" \r\ntags:\r\n  - a\r\n  - b\r\n# comment\r\n\r\n...\r\nBody\r\nline 2";
    let note = read("n.md", text, Kind::Markdown);
    assert_eq!(note.title, "It's here");
    assert_eq!(note.id, "q\"x");
    assert_eq!(note.body, "Body\nline 2");
    assert_eq!(note.first_line, 10);
    let note = read("n.md", "---\n---\n", Kind::Markdown);
    assert_eq!((note.body.as_str(), note.first_line), ("", 3));
    let note = read(
        "n.md",
        "\u{feff}---\nTitle: Mit BOM # comment\n---\nx",
        Kind::Markdown,
    );
    assert_eq!(
        (note.title.as_str(), note.body.as_str(), note.first_line),
        ("Mit BOM", "x", 4)
    );
    let note = read("n.md", "---\ntitle: >\n  folded\n---\nx", Kind::Markdown);
    assert_eq!(note.title, "n", "block scalars are not read");
}

#[test]
fn malformed_front_matter_is_body() {
    for text in [
        "---",
        "---\ntitle: x",
        "---\ntitle: x\n",
        "---\nJust a paragraph after a rule\n---\n",
        "---\nkey:value\n---\n",
        "---\n: no key\n---\n",
        " ---\ntitle: x\n---\n",
        "text\n---\ntitle: x\n---\n",
    ] {
        let note = read("n.md", text, Kind::Markdown);
        assert_eq!((note.body.as_str(), note.first_line), (text, 1), "{text:?}");
        assert_eq!(note.title, "n");
    }
}

#[test]
fn text_files_are_text() {
    let text = "---\nid: x\n---\n# not a title\r\n[a](01_x_Foo_e0d27e3ad.md)\n";
    let note = read("src/main_e0d27e3ad.py", text, Kind::Text);
    assert_eq!(note.id, "src/main_e0d27e3ad.py");
    assert_eq!(note.title, "main_e0d27e3ad.py");
    assert_eq!(note.ordering, None);
    assert_eq!(note.body, text.replace("\r\n", "\n"));
    assert_eq!(note.first_line, 1);
}

#[test]
fn links_to_notes_become_ids() {
    let cases = [
        (format!("[x]({LINKED})"), "[x](e0d27e3ad)"),
        (
            "see [x](../b/02_x_Foo_0a1b2c3d4.md) too".into(),
            "see [x](0a1b2c3d4) too",
        ),
        ("[x](01_a_My%20Note_e0d27e3ad.md)".into(), "[x](e0d27e3ad)"),
        (format!("[x]({LINKED}#setup)"), "[x](e0d27e3ad#setup)"),
        (
            "[x](<my folder/01_a_Foo Bar_e0d27e3ad.md>)".into(),
            "[x](e0d27e3ad)",
        ),
        (
            "[x](<01_a_e0d27e3ad.md#my part>)".into(),
            "[x](<e0d27e3ad#my part>)",
        ),
        (
            format!("[x]({LINKED} \"Title\")"),
            "[x](e0d27e3ad \"Title\")",
        ),
        (format!("[x]( {LINKED} 'T' )"), "[x]( e0d27e3ad 'T' )"),
        ("[x](01\\_a\\_Foo\\_e0d27e3ad.md)".into(), "[x](e0d27e3ad)"),
        ("[x](01_a_Foo_e0d27e3ad.MD)".into(), "[x](e0d27e3ad)"),
        ("[x](01_a_Foo_e0d27e3ad)".into(), "[x](e0d27e3ad)"),
        (
            format!("[**bold** [nested]]({LINKED})"),
            "[**bold** [nested]](e0d27e3ad)",
        ),
        (format!("[`code`]({LINKED})"), "[`code`](e0d27e3ad)"),
        (
            format!("[[{}]]", &LINKED[..LINKED.len() - 3]),
            "[[e0d27e3ad]]",
        ),
        (format!("[[{LINKED}|alias]]"), "[[e0d27e3ad|alias]]"),
        (
            "[[folder/01_x_Foo_e0d27e3ad#Setup|Über]]".into(),
            "[[e0d27e3ad#Setup|Über]]",
        ),
        (
            "| [[01_x_Foo_e0d27e3ad\\|alias]] |".into(),
            "| [[e0d27e3ad\\|alias]] |",
        ),
        ("![[01_x_Foo_e0d27e3ad]]".into(), "![[e0d27e3ad]]"),
        (
            format!("[1]: {LINKED} \"T\"\n\nsee [x][1]"),
            "[1]: e0d27e3ad \"T\"\n\nsee [x][1]",
        ),
        (
            format!("Text [a]({LINKED}) und [b](02_y_Bar_0a1b2c3d4.md)."),
            "Text [a](e0d27e3ad) und [b](0a1b2c3d4).",
        ),
        (
            format!("[multi\nline]({LINKED})"),
            "[multi\nline](e0d27e3ad)",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(norm(&input), want, "{input:?}");
    }
}

#[test]
fn other_links_stay() {
    for text in [
        "no links at all, äöü ß",
        "![image](01_a_Foo_e0d27e3ad.md)",
        "![alt](pics/01_x_e0d27e3ad.png)",
        "[web](https://example.com/01_a_Foo_e0d27e3ad.md)",
        "[mail](mailto:a_e0d27e3ad@example.com)",
        "[pdf](01_a_Foo_e0d27e3ad.pdf)",
        "[other](notes/readme.md)",
        "[id already](e0d27e3ad)",
        "[query](01_a_Foo_e0d27e3ad.md?x=1)",
        "[empty]()",
        "[unclosed](01_a_Foo_e0d27e3ad.md",
        "[[unclosed wiki 01_a_Foo_e0d27e3ad",
        "[[01_a_Foo_e0d27e3ad]",
        "`[x](01_a_Foo_e0d27e3ad.md)`",
        "``a ` [x](01_a_Foo_e0d27e3ad.md) ``",
        "```\n[x](01_a_Foo_e0d27e3ad.md)\n```",
        "   ~~~md\n[[01_a_Foo_e0d27e3ad]]\n   ~~~",
        "\\[x](01_a_Foo_e0d27e3ad.md)",
        "[x]\\(01_a_Foo_e0d27e3ad.md)",
        "[^1]: 01_a_Foo_e0d27e3ad.md",
        "text [label]: 01_a_Foo_e0d27e3ad.md",
        "[x](01_a_`Foo_e0d27e3ad.md) and `code`",
    ] {
        let out = normalize_links(text);
        assert!(matches!(out, Cow::Borrowed(_)), "{text:?} -> {out:?}");
    }
}

#[test]
fn a_link_after_a_fence_is_still_found() {
    let text = format!("```\n[x]({LINKED})\n```\n[y]({LINKED})\n`[z]({LINKED})` [w]({LINKED})");
    assert_eq!(
        norm(&text),
        format!("```\n[x]({LINKED})\n```\n[y](e0d27e3ad)\n`[z]({LINKED})` [w](e0d27e3ad)")
    );
}

#[test]
fn a_reorganize_keeps_the_hash_and_an_edit_changes_it() {
    let before = [
        (
            "01_12a_How_to_integrate_e0d27e3ad.md",
            "# Integrieren\nSiehe [Backup](02_Backup_Strategie_0a1b2c3d4.md#ziel) und [[02_Backup_Strategie_0a1b2c3d4|die Strategie]].\n",
        ),
        (
            "02_Backup_Strategie_0a1b2c3d4.md",
            "---\ntags: [x]\n---\n# Backup-Strategie\nZurück zu [Integration](01_12a_How_to_integrate_e0d27e3ad.md).\n![Bild](bilder/plan.png)\n",
        ),
    ];
    // Renamed, renumbered, moved into folders; link targets rewritten to match; same text.
    let after = [
        (
            "a/03_1_How_to_integrate_e0d27e3ad.md",
            "# Integrieren\nSiehe [Backup](../b/07_Backup_Strategie_0a1b2c3d4.md#ziel) und [[b/07_Backup_Strategie_0a1b2c3d4|die Strategie]].\n",
        ),
        (
            "b/07_Backup_Strategie_0a1b2c3d4.md",
            "---\ntags: [x, y]\n---\n# Backup-Strategie\nZurück zu [Integration](<../a/03_1_How_to_integrate_e0d27e3ad.md>).\n![Bild](bilder/plan.png)\n",
        ),
    ];
    for ((rel_a, text_a), (rel_b, text_b)) in before.iter().zip(after) {
        let (a, b) = (
            read(rel_a, text_a, Kind::Markdown),
            read(rel_b, text_b, Kind::Markdown),
        );
        assert_eq!(a.id, b.id);
        assert_eq!(a.title, b.title);
        assert_eq!(a.hash, b.hash, "{rel_a} -> {rel_b}");
        assert_ne!(a.ordering, b.ordering);
    }
    let a = read(before[0].0, before[0].1, Kind::Markdown);
    let e = read(
        before[0].0,
        &before[0].1.replace("Siehe", "Vergleiche"),
        Kind::Markdown,
    );
    assert_ne!(a.hash, e.hash, "a real edit changes the hash");
    let i = read(
        before[1].0,
        &before[1].1.replace("plan.png", "plan2.png"),
        Kind::Markdown,
    );
    assert_ne!(
        read(before[1].0, before[1].1, Kind::Markdown).hash,
        i.hash,
        "image links count"
    );
}

#[test]
fn hash_is_sha256_prefix() {
    // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    assert_eq!(hash("abc"), "ba7816bf8f01cfea414140de5dae2223");
    assert_ne!(hash("a\n"), hash("a"));
}

#[test]
fn nasty_inputs() {
    let hashes = "#".repeat(10_000);
    let brackets = "[".repeat(5_000) + &"]".repeat(5_000) + "(x_e0d27e3ad.md)";
    let wikis = "[[".repeat(5_000);
    let ticks = (1..100)
        .map(|n| "`".repeat(n))
        .collect::<Vec<_>>()
        .join("x");
    for text in [
        hashes.as_str(),
        brackets.as_str(),
        wikis.as_str(),
        ticks.as_str(),
        "---",
        "---\r\n",
        "\u{feff}",
        "```\n[x](a_e0d27e3ad.md)",
        "[x](<a_e0d27e3ad.md",
        "[x](a_e0d27e3ad.md \"unclosed title",
        "[x](\\",
        "]]]]((((",
        "[](%zz%2_e0d27e3ad.md)",
        "[x](%FF%FE_e0d27e3ad.md)",
    ] {
        crate::fuzz::kb_note(text.as_bytes());
    }
    assert_eq!(
        norm(&brackets),
        "[".repeat(5_000) + &"]".repeat(5_000) + "(e0d27e3ad)"
    );
}

proptest! {
    #[test]
    fn the_fuzz_entry_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        crate::fuzz::kb_note(&bytes);
    }

    #[test]
    fn link_shaped_input_keeps_lines_and_normalizing_twice_changes_nothing(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("["), Just("]"), Just("("), Just(")"), Just("[["), Just("]]"), Just("!"),
                Just("<"), Just(">"), Just("`"), Just("```"), Just("\n"), Just("\r\n"),
                Just("#"), Just("|"), Just("\\"), Just(" "), Just("\""), Just(":"), Just("%20"),
                Just("01_a_Foo_e0d27e3ad"), Just(".md"), Just("../x/"), Just("ä"), Just("---\n"),
                Just("https://"),
            ],
            0..60,
        ),
    ) {
        let text: String = parts.concat();
        let once = normalize_links(&text);
        prop_assert_eq!(once.split('\n').count(), text.split('\n').count());
        let twice = normalize_links(&once).into_owned();
        prop_assert_eq!(twice, once.into_owned());
        crate::fuzz::kb_note(text.as_bytes());
    }
}
