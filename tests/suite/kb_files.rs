//! Knowledge bases over a real vault's files: `[[wikilinks]]` resolved to the notes they name
//! (and listed by `ai kb show` with the notes that link back); PDF and HTML files indexed as
//! text with their pages and headings, hostile PDFs bounded.

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
    if kb_store::sqlite_only("writes a SQLite index of the version before links by hand") {
        return;
    }
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

/// A PDF file of `objects` (numbered from 1; the first is the catalog), with a correct cross-
/// reference table and `trailer_extra` in its trailer.
fn pdf_file(objects: &[Vec<u8>], trailer_extra: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R {trailer_extra} >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut s = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    s.extend_from_slice(data);
    s.extend_from_slice(b"\nendstream");
    s
}

/// A PDF whose pages show these lines of text (an empty page shows none: a scan's page).
fn text_pdf(pages: &[&str]) -> Vec<u8> {
    text_pdf_with(pages, "", Vec::new(), "")
}

/// [`text_pdf`] with `catalog_extra` in its catalog, `extra` objects after the pages' (the
/// first is object 4 + 2 × the pages), and `trailer_extra` in its trailer.
fn text_pdf_with(
    pages: &[&str],
    catalog_extra: &str,
    extra: Vec<Vec<u8>>,
    trailer_extra: &str,
) -> Vec<u8> {
    let mut objects =
        vec![format!("<< /Type /Catalog /Pages 2 0 R {catalog_extra} >>").into_bytes()];
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", 4 + 2 * i))
        .collect();
    objects.push(
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        )
        .into_bytes(),
    );
    objects.push(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec());
    for (i, text) in pages.iter().enumerate() {
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
                5 + 2 * i
            )
            .into_bytes(),
        );
        let content = if text.is_empty() {
            String::new()
        } else {
            format!("BT /F1 12 Tf 72 712 Td ({text}) Tj ET")
        };
        objects.push(stream("", content.as_bytes()));
    }
    objects.extend(extra);
    pdf_file(&objects, trailer_extra)
}

fn search(env: &Env, query: &str) -> Vec<Value> {
    env.run(&["kb", "search", "vault", query, "--json"])
        .success()
        .json()
        .as_array()
        .expect("an array")
        .clone()
}

#[test]
fn pdf_and_html_files_are_indexed_with_their_pages_and_headings() {
    let env = Env::echo();
    let dir = folder(
        &env,
        &[(
            "guide.html",
            "<html><head><title>Operations guide</title><script>var secret = 1;</script>\
             </head><body><h1>Operations</h1><p>Read this first.</p>\
             <h2>Backups</h2><p>The nightly snapshot goes to the tape library.</p></body></html>",
        )],
    );
    std::fs::write(
        dir.join("report.pdf"),
        text_pdf(&[
            "Quarterly invoices are paid.",
            "The dolphin migration was observed.",
        ]),
    )
    .unwrap();
    let out = add(&env, &dir);
    assert!(out.stdout.contains("2 notes"), "{}", out.stdout);
    let hits = search(&env, "dolphin");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["path"], "report.pdf");
    assert_eq!(hits[0]["title"], "report");
    assert_eq!(hits[0]["heading"], "p. 2");
    assert!(
        hits[0]["passage"]
            .as_str()
            .unwrap()
            .contains("dolphin migration")
    );
    let hits = search(&env, "snapshot tape");
    assert_eq!(hits[0]["path"], "guide.html");
    assert_eq!(hits[0]["title"], "Operations guide");
    // The heading the passage is under (small sections are packed together under their
    // common heading, as a markdown note's are).
    assert_eq!(hits[0]["heading"], "Operations");
    assert!(hits[0]["passage"].as_str().unwrap().contains("## Backups"));
    // Markup and scripts are no text.
    assert!(search(&env, "secret").is_empty());
    assert!(search(&env, "html").is_empty());
    // Shown as the text it was indexed as.
    let shown = env.run(&["kb", "show", "vault", "report.pdf"]).success();
    assert!(shown.stdout.contains("## p. 2"), "{}", shown.stdout);
    assert!(
        shown.stdout.contains("dolphin migration"),
        "{}",
        shown.stdout
    );
    // A source line of a grounded turn says the page.
    let out = env
        .run(&["echo", "--kb", "vault", "what about the dolphin migration?"])
        .success();
    assert!(
        out.stderr.contains("[1] report · p. 2 (report.pdf, vault)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_pdf_is_titled_by_its_metadata() {
    let env = Env::echo();
    let dir = folder(&env, &[("readme.md", "# Readme\n\nThe archive's notes.\n")]);
    // /Title of the information dictionary, in UTF-16BE: "Übergabe der Bänder".
    let utf16: String = "\u{feff}Übergabe der Bänder"
        .encode_utf16()
        .map(|u| format!("{u:04X}"))
        .collect();
    std::fs::write(
        dir.join("scan_0042.pdf"),
        text_pdf_with(
            &["The tapes were handed over on Monday."],
            "",
            vec![format!("<< /Title <{utf16}> /Author (Archive) >>").into_bytes()],
            "/Info 6 0 R",
        ),
    )
    .unwrap();
    // No information dictionary: dc:title of the XMP metadata.
    let xmp = "<?xpacket begin=''?><x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF>\
               <rdf:Description><dc:title><rdf:Alt><rdf:li xml:lang='x-default'>Tides &amp; \
               Currents</rdf:li></rdf:Alt></dc:title></rdf:Description></rdf:RDF></x:xmpmeta>";
    std::fs::write(
        dir.join("doc1.pdf"),
        text_pdf_with(
            &["High water comes twice a day."],
            "/Metadata 6 0 R",
            vec![stream("/Type /Metadata /Subtype /XML", xmp.as_bytes())],
            "",
        ),
    )
    .unwrap();
    // A title of blanks says nothing: the file name.
    std::fs::write(
        dir.join("walrus-notes.pdf"),
        text_pdf_with(
            &["The walrus sleeps on the ice."],
            "",
            vec![b"<< /Title (   ) >>".to_vec()],
            "/Info 6 0 R",
        ),
    )
    .unwrap();
    add(&env, &dir);
    let hits = search(&env, "tapes handed");
    assert_eq!(hits[0]["path"], "scan_0042.pdf");
    assert_eq!(hits[0]["title"], "Übergabe der Bänder");
    // The title is searchable.
    let hits = search(&env, "übergabe");
    assert_eq!(hits[0]["path"], "scan_0042.pdf");
    let hits = search(&env, "high water");
    assert_eq!(hits[0]["title"], "Tides & Currents");
    let hits = search(&env, "walrus");
    assert_eq!(hits[0]["title"], "walrus-notes");
    // The source line of a grounded turn names it by its title.
    let out = env
        .run(&["echo", "--kb", "vault", "when were the tapes handed over?"])
        .success();
    assert!(
        out.stderr
            .contains("[1] Übergabe der Bänder · p. 1 (scan_0042.pdf, vault)"),
        "{}",
        out.stderr
    );
}

#[test]
fn pdfs_without_text_are_skipped_with_the_reason_and_not_parsed_again() {
    let env = Env::echo();
    let dir = folder(&env, &[("note.md", "A note.\n")]);
    std::fs::write(dir.join("scan.pdf"), text_pdf(&["", ""])).unwrap();
    std::fs::write(dir.join("broken.pdf"), b"%PDF-1.4\nthis is no PDF at all\n").unwrap();
    let mut locked = text_pdf(&["Secret text."]);
    // An encryption dictionary the empty password does not open.
    let trailer_at = memchr_last(&locked, b"trailer");
    locked.truncate(trailer_at);
    let enc = "<< /Filter /Standard /V 1 /R 2 /O <0102030405060708090a0b0c0d0e0f100102030405060708090a0b0c0d0e0f10> \
               /U <1112131415161718191a1b1c1d1e1f201112131415161718191a1b1c1d1e1f20> /P -4 >>";
    let mut objects_end = locked.clone();
    objects_end.extend_from_slice(format!("99 0 obj\n{enc}\nendobj\n").as_bytes());
    let locked = rebuild_xref(
        &objects_end,
        "/Encrypt 99 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]",
    );
    std::fs::write(dir.join("locked.pdf"), locked).unwrap();
    let out = add(&env, &dir);
    assert!(out.stdout.contains("1 note"), "{}", out.stdout);
    assert!(out.stderr.contains("3 without text"), "{}", out.stderr);
    let stats = env.run(&["kb", "stats", "vault", "--skipped"]).success();
    assert!(
        stats
            .stdout
            .contains("without text        scan.pdf (no text layer (scanned?))"),
        "{}",
        stats.stdout
    );
    assert!(
        stats
            .stdout
            .contains("without text        broken.pdf (damaged or not readable)"),
        "{}",
        stats.stdout
    );
    assert!(
        stats
            .stdout
            .contains("without text        locked.pdf (encrypted)"),
        "{}",
        stats.stdout
    );
    let json = env
        .run(&["kb", "stats", "vault", "--skipped", "--json"])
        .success()
        .json();
    assert_eq!(json["no_text"], 3);
    // Unchanged, they are not parsed again, and the freshness check counts them as known.
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(out.stdout.contains("unchanged 1"), "{}", out.stdout);
    assert!(out.stderr.contains("3 without text"), "{}", out.stderr);
    let out = env.run(&["echo", "--kb", "vault", "anything"]).success();
    assert!(!out.stderr.contains("changed since"), "{}", out.stderr);
    // Given a text layer, the scan is indexed.
    std::fs::write(
        dir.join("scan.pdf"),
        text_pdf(&["", "Recognized walrus text."]),
    )
    .unwrap();
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(out.stdout.contains("added 1"), "{}", out.stdout);
    assert_eq!(search(&env, "walrus")[0]["heading"], "p. 2");
    let stats = env.run(&["kb", "stats", "vault", "--skipped"]).success();
    assert!(!stats.stdout.contains("scan.pdf"), "{}", stats.stdout);
}

fn memchr_last(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .rposition(|w| w == needle)
        .expect("found")
}

/// A PDF file's objects (up to its `xref`) with a fresh cross-reference table and trailer.
fn rebuild_xref(body: &[u8], trailer_extra: &str) -> Vec<u8> {
    let mut objects: Vec<(u32, Vec<u8>)> = Vec::new();
    let text = body;
    let mut i = 0;
    while let Some(p) = text[i..].windows(7).position(|w| w == b" 0 obj\n") {
        let at = i + p;
        let start = text[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |k| k + 1);
        let n: u32 = std::str::from_utf8(&text[start..at])
            .unwrap()
            .parse()
            .unwrap();
        let end = at
            + text[at..]
                .windows(7)
                .position(|w| w == b"endobj\n")
                .unwrap();
        objects.push((n, text[at + 7..end - 1].to_vec()));
        i = end;
    }
    let max = objects.iter().map(|o| o.0).max().unwrap();
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = vec![None; max as usize + 1];
    for (n, body) in &objects {
        offsets[*n as usize] = Some(out.len());
        out.extend_from_slice(format!("{n} 0 obj\n").as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", max + 1).as_bytes());
    for o in &offsets[1..] {
        match o {
            Some(o) => out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes()),
            None => out.extend_from_slice(b"0000000000 65535 f \n"),
        }
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R {trailer_extra} >>\nstartxref\n{xref}\n%%EOF\n",
            max + 1
        )
        .as_bytes(),
    );
    out
}

/// A zlib stream that inflates to `blocks` × 16 MiB of zeros, a few KiB a block: the same
/// sync-flushed deflate block repeated (its checksum is wrong, which a reader finds only at the
/// end, after inflating it all).
fn zlib_bomb(blocks: usize) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::fast(), false);
    let zeros = vec![0u8; 16 * 1024 * 1024];
    let mut block = Vec::with_capacity(1 << 20);
    c.compress_vec(&zeros, &mut block, flate2::FlushCompress::Sync)
        .unwrap();
    assert_eq!(c.total_in() as usize, zeros.len(), "one call takes it all");
    let mut out = vec![0x78, 0x01];
    for _ in 0..blocks {
        out.extend_from_slice(&block);
    }
    out.extend_from_slice(&[0x03, 0x00, 0, 0, 0, 0]);
    out
}

#[test]
fn hostile_pdfs_are_bounded_and_skipped() {
    let env = Env::echo();
    let dir = folder(&env, &[("note.md", "A note about otters.\n")]);
    let page = |contents: &str| {
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 3 0 R >> >> /Contents {contents} >>"
        )
        .into_bytes()
    };
    let catalog = b"<< /Type /Catalog /Pages 2 0 R >>".to_vec();
    let font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec();
    // A compression bomb: 1.5 GiB of zeros behind 1.5 MiB.
    let bomb = pdf_file(
        &[
            catalog.clone(),
            b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>".to_vec(),
            font.clone(),
            page("5 0 R"),
            stream("/Filter /FlateDecode", &zlib_bomb(96)),
        ],
        "",
    );
    std::fs::write(dir.join("bomb.pdf"), bomb).unwrap();
    // Objects nested a million deep.
    let deep = format!(
        "<< /Type /Catalog /Pages 2 0 R /Deep {}{} >>",
        "[".repeat(1_000_000),
        "]".repeat(1_000_000)
    );
    let nested = pdf_file(
        &[
            deep.into_bytes(),
            b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>".to_vec(),
            font.clone(),
            page("5 0 R"),
            stream("", b"BT /F1 12 Tf 72 712 Td (Nested) Tj ET"),
        ],
        "",
    );
    std::fs::write(dir.join("nested.pdf"), nested).unwrap();
    // A page tree that contains itself.
    let looped = pdf_file(
        &[
            catalog.clone(),
            b"<< /Type /Pages /Kids [2 0 R 4 0 R] /Count 2 >>".to_vec(),
            font.clone(),
            page("5 0 R"),
            stream("", b"BT /F1 12 Tf 72 712 Td (Looped) Tj ET"),
        ],
        "",
    );
    std::fs::write(dir.join("looped.pdf"), looped).unwrap();
    // 200,000 pages (one page object, listed again and again).
    let kids = vec!["4 0 R"; 200_000].join(" ");
    let many = pdf_file(
        &[
            catalog,
            format!("<< /Type /Pages /Kids [{kids}] /Count 200000 >>").into_bytes(),
            font,
            page("5 0 R"),
            stream("", b"BT /F1 12 Tf 72 712 Td (Manatee) Tj ET"),
        ],
        "",
    );
    std::fs::write(dir.join("many.pdf"), many).unwrap();
    let out = env
        .command(&["kb", "add", "vault", dir.to_str().unwrap()])
        .deadline(std::time::Duration::from_secs(600))
        .run()
        .success();
    assert!(out.stdout.contains("note"), "{}", out.stdout);
    let stats = env.run(&["kb", "stats", "vault", "--skipped"]).success();
    assert!(
        stats
            .stdout
            .contains("bomb.pdf (too costly to read (memory or time limit))"),
        "{}",
        stats.stdout
    );
    // The others are skipped or read in part; none ends the sync, and the notes are there.
    assert_eq!(search(&env, "otters")[0]["path"], "note.md");
    if let Some(hit) = search(&env, "manatee").first() {
        assert_eq!(hit["path"], "many.pdf");
        let shown = env.run(&["kb", "show", "vault", "many.pdf"]).success();
        let pages = shown.stdout.matches("## p. ").count();
        assert!(pages <= 2_000, "{pages} pages read");
    } else {
        assert!(stats.stdout.contains("many.pdf"), "{}", stats.stdout);
    }
}

#[test]
fn sync_watch_syncs_what_changes_until_ctrl_c() {
    let env = Env::echo();
    let dir = folder(&env, &[("a.md", "The first note.\n")]);
    add(&env, &dir);
    let mut proc = env.spawn(&["kb", "sync", "vault", "--watch"]);
    wait_for("the watcher", || {
        proc.stderr_now().contains("ai: watching vault")
    });
    write(&dir, "sub/new.md", "A note about narwhals.\n");
    wait_for("the new note synced", || {
        proc.stdout_now().contains("vault: added 1 ")
    });
    assert_eq!(search(&env, "narwhals")[0]["path"], "sub/new.md");
    std::fs::remove_file(dir.join("a.md")).unwrap();
    wait_for("the removed note synced", || {
        proc.stdout_now().contains("deleted 1 ")
    });
    signal(proc.pid(), libc::SIGINT);
    let status = proc.wait_status();
    assert_eq!(status.code(), Some(0), "{}", proc.stderr_now());
    assert!(
        proc.stderr_now().contains("ai: stopped watching"),
        "{}",
        proc.stderr_now()
    );
    // The index is whole: a sync after it finds nothing to do.
    let out = env.run(&["kb", "sync", "vault"]).success();
    assert!(
        out.stdout.contains("added 0 · updated 0 · deleted 0"),
        "{}",
        out.stdout
    );
}

/// The watched folder removed (and made again): its watch was gone, so nothing more was
/// synced, and Ctrl+C still ended with 0. The watcher ends at once with the sync's error.
#[test]
fn sync_watch_ends_with_an_error_when_its_folder_is_removed() {
    let env = Env::echo();
    let dir = folder(&env, &[("a.md", "The first note.\n")]);
    add(&env, &dir);
    let mut proc = env.spawn(&["kb", "sync", "vault", "--watch"]);
    wait_for("the watcher", || {
        proc.stderr_now().contains("ai: watching vault")
    });
    std::fs::remove_dir_all(&dir).unwrap();
    let status = proc.wait_status();
    assert_ne!(status.code(), Some(0), "{}", proc.stderr_now());
    let err = proc.stderr_now();
    assert!(err.contains("error: "), "{err}");
    assert!(err.contains("missing"), "{err}");
    assert!(err.contains("ai: stopped watching"), "{err}");
}

#[test]
fn sync_watch_refuses_json() {
    let env = Env::echo();
    let dir = folder(&env, &[("a.md", "x\n")]);
    add(&env, &dir);
    env.run(&["kb", "sync", "vault", "--watch", "--json"])
        .code(2);
}

/// An HTML file nested 100,000 elements deep (1 MB) kept `kb add` busy for minutes, deaf to
/// Ctrl+C: turning HTML into text costs the square of its depth. It is skipped as too costly
/// and the rest of the folder is indexed.
#[test]
fn html_nested_too_deep_is_skipped_as_too_costly() {
    let env = Env::echo();
    let dir = folder(&env, &[("note.md", "A note about espresso.\n")]);
    let deep = format!(
        "<html><body>{}x{}</body></html>",
        "<div>".repeat(100_000),
        "</div>".repeat(100_000)
    );
    std::fs::write(dir.join("deep.html"), deep).unwrap();
    std::fs::write(
        dir.join("fine.html"),
        "<html><head><title>Grinder</title></head><body><h1>Burrs</h1><p>Conical burrs.</body></html>",
    )
    .unwrap();
    let out = add(&env, &dir);
    assert!(out.stdout.contains("2 notes"), "{}", out.stdout);
    assert!(out.stderr.contains("1 without text"), "{}", out.stderr);
    let stats = env.run(&["kb", "stats", "vault", "--skipped"]).success();
    assert!(
        stats
            .stdout
            .contains("without text        deep.html (too costly to read (memory or time limit))"),
        "{}",
        stats.stdout
    );
}
