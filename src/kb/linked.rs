//! Notes by the names links give them, and the notes that link to one: what the note page of
//! `ai serve` needs for Obsidian's `[[wikilinks]]` (read from the index, never from the files).

use rusqlite::{Connection, OptionalExtension, params_from_iter};

/// A note as a link reaches it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Linked {
    pub(crate) id: String,
    pub(crate) title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ordering: Option<String>,
    pub(crate) path: String,
}

/// The most notes listed as linking to one.
pub(crate) const MAX_LINKED_FROM: usize = 200;

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Linked> {
    Ok(Linked {
        id: r.get(0)?,
        title: r.get(1)?,
        ordering: r.get(2)?,
        path: r.get(3)?,
    })
}

/// `name` as `like` reads it literally (`%`, `_` and `\` escaped for `ESCAPE '\'`).
pub(crate) fn literal(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The note `name` names: its ID or path, else (as Obsidian resolves `[[name]]`) its path
/// without `.md`, its file name with or without `.md`, or its title, any case.
pub(crate) fn find(conn: &Connection, name: &str) -> rusqlite::Result<Option<Linked>> {
    const SELECT: &str = "SELECT id, title, ordering, path FROM notes";
    let exact = conn
        .query_row(
            &format!("{SELECT} WHERE id = ?1 OR path = ?1 ORDER BY id = ?1 DESC LIMIT 1"),
            [name],
            row,
        )
        .optional()?;
    if exact.is_some() {
        return Ok(exact);
    }
    let name = name.trim();
    if name.is_empty() {
        return Ok(None);
    }
    let bare = name.strip_suffix(".md").unwrap_or(name);
    let lit = literal(bare);
    conn.query_row(
        &format!(
            "{SELECT} WHERE path = ?1 || '.md' COLLATE NOCASE
                OR path LIKE '%/' || ?2 || '.md' ESCAPE '\\'
                OR path = ?1 COLLATE NOCASE
                OR title = ?1 COLLATE NOCASE
             ORDER BY path = ?1 || '.md' DESC, path NOT LIKE '%/%' DESC, length(path), path
             LIMIT 1"
        ),
        [bare, lit.as_str()],
        row,
    )
    .optional()
}

/// The notes whose text links to `note`: `[[…]]` naming its ID, path, file name or title
/// (with `|label` or `#heading` after it), or a markdown link to its ID or path. Sorted by
/// path, at most [`MAX_LINKED_FROM`].
pub(crate) fn linked_from(conn: &Connection, note: &Linked) -> rusqlite::Result<Vec<Linked>> {
    let patterns = patterns(note);
    let wanted = vec!["c.text LIKE ? ESCAPE '\\'"; patterns.len()].join(" OR ");
    let sql = format!(
        "SELECT DISTINCT n.id, n.title, n.ordering, n.path FROM chunks c
         JOIN notes n ON n.n = c.note
         WHERE n.id <> ? AND ({wanted})
         ORDER BY n.path LIMIT {MAX_LINKED_FROM}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let params = std::iter::once(note.id.clone()).chain(patterns);
    let rows = stmt.query_map(params_from_iter(params), row)?;
    rows.collect()
}

/// The `LIKE` patterns (escaped with `\`) of text that links to `note`.
pub(crate) fn patterns(note: &Linked) -> Vec<String> {
    let stem_path = note.path.strip_suffix(".md").unwrap_or(&note.path);
    let file = stem_path.rsplit('/').next().unwrap_or(stem_path);
    let mut names: Vec<&str> = vec![&note.id, stem_path, &note.path, file, &note.title];
    names.retain(|n| !n.trim().is_empty());
    names.sort_unstable();
    names.dedup();
    let mut patterns: Vec<String> = Vec::new();
    for n in &names {
        let n = literal(n);
        for end in ["]]", "|", "\\|", "#"] {
            patterns.push(format!("%[[{n}{}%", literal(end)));
        }
    }
    for n in [&note.id, &note.path] {
        let n = literal(n);
        patterns.push(format!("%]({n})%"));
        patterns.push(format!("%]({n}#%"));
    }
    patterns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE notes (n INTEGER PRIMARY KEY, id TEXT, path TEXT, title TEXT, ordering TEXT);
             CREATE TABLE chunks (c INTEGER PRIMARY KEY, note INTEGER, text TEXT);
             INSERT INTO notes VALUES (1, 'c3d4e5f60', '01_001_Coffee_c3d4e5f60.md', 'Coffee', '01_001');
             INSERT INTO notes VALUES (2, 'brewing.md', 'sub/Brewing.md', 'How we brew', NULL);
             INSERT INTO notes VALUES (3, 'a.md', 'a.md', 'A', NULL);
             INSERT INTO notes VALUES (4, 'b.md', 'b.md', 'B', NULL);
             INSERT INTO notes VALUES (5, 'x_y.md', 'x_y.md', 'Underscore', NULL);
             INSERT INTO chunks VALUES (1, 3, 'see [[c3d4e5f60]] and [[Brewing|how]]');
             INSERT INTO chunks VALUES (2, 4, 'a [link](c3d4e5f60) and [[sub/Brewing#Steps]]');
             INSERT INTO chunks VALUES (3, 2, 'about [[xay]] not [[x_y]]');
             INSERT INTO chunks VALUES (4, 1, 'itself: [[c3d4e5f60]]');",
        )
        .unwrap();
        c
    }

    fn ids(v: &[Linked]) -> Vec<&str> {
        v.iter().map(|l| l.id.as_str()).collect()
    }

    #[test]
    fn names_find_notes_as_obsidian_does() {
        let c = index();
        let id = |name: &str| find(&c, name).unwrap().map(|l| l.id);
        assert_eq!(id("c3d4e5f60").as_deref(), Some("c3d4e5f60"));
        assert_eq!(id("01_001_Coffee_c3d4e5f60").as_deref(), Some("c3d4e5f60"));
        assert_eq!(id("brewing").as_deref(), Some("brewing.md"));
        assert_eq!(id("sub/Brewing").as_deref(), Some("brewing.md"));
        assert_eq!(id("how we brew").as_deref(), Some("brewing.md"));
        assert_eq!(id("Brewing.md").as_deref(), Some("brewing.md"));
        // `_` and `%` are literal.
        assert_eq!(id("x%y"), None);
        assert_eq!(id("xay"), None);
        assert_eq!(id("nothing"), None);
        assert_eq!(id(" "), None);
    }

    #[test]
    fn backlinks_are_found_by_every_name() {
        let c = index();
        let coffee = find(&c, "c3d4e5f60").unwrap().unwrap();
        assert_eq!(ids(&linked_from(&c, &coffee).unwrap()), ["a.md", "b.md"]);
        let brewing = find(&c, "brewing").unwrap().unwrap();
        assert_eq!(ids(&linked_from(&c, &brewing).unwrap()), ["a.md", "b.md"]);
        let under = find(&c, "x_y").unwrap().unwrap();
        assert_eq!(ids(&linked_from(&c, &under).unwrap()), ["brewing.md"]);
        let a = find(&c, "a").unwrap().unwrap();
        assert!(linked_from(&c, &a).unwrap().is_empty());
    }
}
