//! Notes by the names links give them, and the notes that link to one: what the note page of
//! `ai serve` and `ai kb show` need for Obsidian's `[[wikilinks]]` (read from the index, never
//! from the files).
//!
//! A link's target is resolved when it is read, not when it is indexed, so a note written after
//! the one that links to it is found without reading the linking note again. As Obsidian does:
//! a `[[name]]` names the note whose file name without `.md` is `name` (any case; the shortest
//! path when several are; a `[[dir/name]]` the one whose path ends so), or the note with that
//! ID. Where no file has the name, the note with that title, else that alias, is named (a
//! Zettelkasten's `[[Espresso]]` for `01_002_Espresso_d4e5f6071.md`; Obsidian itself leaves
//! those unresolved, and writes `[[file|alias]]`). A markdown link names the file at its path
//! (with or without `.md`), or a note's ID.

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

/// Whether the index open on `conn` has the links table (indexes from before it have not).
pub(crate) fn has_links(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'links'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// A link of a note, as the index keeps it (its target resolved when read: [`links`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    /// A wikilink's target name as written (`[[Name#h|label]]` → `Name`), a markdown link's path
    /// from the folder's root (`../b.md` from `a/x.md` → `b.md`), or a note's Zettelkasten ID.
    pub(crate) name: String,
    /// The file line it is on.
    pub(crate) line: u32,
    pub(crate) wiki: bool,
}

/// A link of a note and the note it reaches (none: unresolved, kept as written).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Link {
    pub(crate) name: String,
    pub(crate) line: u32,
    pub(crate) wiki: bool,
    pub(crate) note: Option<Linked>,
}

/// How the links table looks a link's name up: its last part, without a markdown extension,
/// in lowercase (`Dir/Coffee.md` → `coffee`).
pub(crate) fn key(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let lower = last.to_lowercase();
    for ext in [".md", ".markdown", ".mdx"] {
        if let Some(stem) = lower.strip_suffix(ext)
            && !stem.is_empty()
        {
            return stem.to_owned();
        }
    }
    lower
}

/// The note a link names, by the rules above.
pub(crate) fn resolve(
    conn: &Connection,
    name: &str,
    wiki: bool,
) -> rusqlite::Result<Option<Linked>> {
    const SELECT: &str = "SELECT id, title, ordering, path FROM notes";
    let by_id = conn
        .query_row(&format!("{SELECT} WHERE id = ?1"), [name], row)
        .optional()?;
    if by_id.is_some() {
        return Ok(by_id);
    }
    if !wiki {
        return conn
            .query_row(
                &format!(
                    "{SELECT} WHERE path = ?1 OR path = ?1 || '.md' ORDER BY path = ?1 DESC LIMIT 1"
                ),
                [name],
                row,
            )
            .optional();
    }
    let name = name.trim_start_matches('/');
    let bare = match name.len().checked_sub(3) {
        Some(k) if name.is_char_boundary(k) && name[k..].eq_ignore_ascii_case(".md") => &name[..k],
        _ => name,
    };
    if bare.is_empty() {
        return Ok(None);
    }
    let lit = literal(bare);
    // LIKE is case-insensitive (ASCII), as Obsidian's lookup is.
    let by_file = conn.query_row(
        &format!(
            "{SELECT} WHERE path LIKE ?1 || '.md' ESCAPE '\\' OR path LIKE '%/' || ?1 || '.md' ESCAPE '\\'
                OR path LIKE ?1 ESCAPE '\\' OR path LIKE '%/' || ?1 ESCAPE '\\'
             ORDER BY path LIKE ?1 || '.md' ESCAPE '\\' OR path LIKE ?1 ESCAPE '\\' DESC,
                 length(path), path
             LIMIT 1"
        ),
        [lit.as_str()],
        row,
    )
    .optional()?;
    if by_file.is_some() || bare.contains('/') {
        return Ok(by_file);
    }
    conn.query_row(
        &format!(
            "{SELECT} WHERE title = ?1 COLLATE NOCASE
                OR (char(10) || aliases || char(10)) LIKE '%' || char(10) || ?2 || char(10) || '%' ESCAPE '\\'
             ORDER BY title = ?1 COLLATE NOCASE DESC, length(path), path LIMIT 1"
        ),
        [bare, lit.as_str()],
        row,
    )
    .optional()
}

/// The links of the note with ID `id`, in order, each with the note it reaches. Empty for an
/// index from before the links table (its next sync fills it).
pub(crate) fn links(conn: &Connection, id: &str) -> rusqlite::Result<Vec<Link>> {
    if !has_links(conn)? {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare(
        "SELECT l.name, l.line, l.wiki FROM links l JOIN notes n ON n.n = l.note
         WHERE n.id = ?1 ORDER BY l.rowid",
    )?;
    let rows: Vec<(String, u32, bool)> = st
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut seen: std::collections::HashMap<(String, bool), Option<Linked>> =
        std::collections::HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for (name, line, wiki) in rows {
        let note = match seen.get(&(name.clone(), wiki)) {
            Some(n) => n.clone(),
            None => {
                let n = resolve(conn, &name, wiki)?;
                seen.insert((name.clone(), wiki), n.clone());
                n
            }
        };
        out.push(Link {
            name,
            line,
            wiki,
            note,
        });
    }
    Ok(out)
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
/// without `.md`, its file name with or without `.md`, or its title, any case; else (as
/// Obsidian's quick switcher finds it) one of its front-matter `aliases:`, any case.
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
    let by_name = conn
        .query_row(
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
        .optional()?;
    if by_name.is_some() {
        return Ok(by_name);
    }
    // An alias is one line of `aliases` (LIKE: any case, ASCII); an index from before aliases
    // has none.
    let has_aliases: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_table_info('notes') WHERE name = 'aliases'",
        [],
        |r| r.get(0),
    )?;
    if has_aliases == 0 {
        return Ok(None);
    }
    let lit = literal(name);
    conn.query_row(
        &format!(
            "{SELECT} WHERE (char(10) || aliases || char(10)) LIKE '%' || char(10) || ?1 || char(10) || '%' ESCAPE '\\'
             ORDER BY path NOT LIKE '%/%' DESC, length(path), path LIMIT 1"
        ),
        [lit.as_str()],
        row,
    )
    .optional()
}

/// The notes with a link that resolves to `note` ([`resolve`]), sorted by path, at most
/// [`MAX_LINKED_FROM`]. An index from before the links table is searched by its text instead.
pub(crate) fn linked_from(conn: &Connection, note: &Linked) -> rusqlite::Result<Vec<Linked>> {
    if !has_links(conn)? {
        return linked_from_text(conn, note);
    }
    // Every name a link may give it: ID, file name, title, aliases.
    let aliases: String = conn
        .query_row("SELECT aliases FROM notes WHERE id = ?1", [&note.id], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or_default();
    let mut keys = vec![key(&note.id), key(&note.path), key(&note.title)];
    keys.extend(aliases.lines().map(key));
    keys.sort_unstable();
    keys.dedup();
    let wanted = vec!["?"; keys.len()].join(", ");
    let mut st = conn.prepare(&format!(
        "SELECT DISTINCT l.name, l.wiki, n.id, n.title, n.ordering, n.path FROM links l
         JOIN notes n ON n.n = l.note
         WHERE l.key IN ({wanted}) AND n.id <> ? ORDER BY n.path"
    ))?;
    let params = keys.iter().map(String::as_str).chain([note.id.as_str()]);
    let rows: Vec<(String, bool, Linked)> = st
        .query_map(params_from_iter(params), |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                Linked {
                    id: r.get(2)?,
                    title: r.get(3)?,
                    ordering: r.get(4)?,
                    path: r.get(5)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut reaches: std::collections::HashMap<(String, bool), bool> =
        std::collections::HashMap::new();
    let mut out: Vec<Linked> = Vec::new();
    for (name, wiki, from) in rows {
        if out.last().is_some_and(|l| l.id == from.id) {
            continue;
        }
        let hit = match reaches.get(&(name.clone(), wiki)) {
            Some(&h) => h,
            None => {
                let h = resolve(conn, &name, wiki)?.is_some_and(|t| t.id == note.id);
                reaches.insert((name, wiki), h);
                h
            }
        };
        if hit {
            out.push(from);
            if out.len() >= MAX_LINKED_FROM {
                break;
            }
        }
    }
    Ok(out)
}

/// [`linked_from`] for an index without the links table: `[[…]]` naming its ID, path, file
/// name or title (with `|label` or `#heading` after it), or a markdown link to its ID or path.
fn linked_from_text(conn: &Connection, note: &Linked) -> rusqlite::Result<Vec<Linked>> {
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
            "CREATE TABLE notes (n INTEGER PRIMARY KEY, id TEXT, path TEXT, title TEXT, ordering TEXT,
                 aliases TEXT NOT NULL DEFAULT '');
             CREATE TABLE chunks (c INTEGER PRIMARY KEY, note INTEGER, text TEXT);
             INSERT INTO notes VALUES (1, 'c3d4e5f60', '01_001_Coffee_c3d4e5f60.md', 'Coffee', '01_001', '');
             INSERT INTO notes VALUES (2, 'brewing.md', 'sub/Brewing.md', 'How we brew', NULL,
                 'Brew guide' || char(10) || 'Kaffee kochen');
             INSERT INTO notes VALUES (3, 'a.md', 'a.md', 'A', NULL, '');
             INSERT INTO notes VALUES (4, 'b.md', 'b.md', 'B', NULL, 'Coffee');
             INSERT INTO notes VALUES (5, 'x_y.md', 'x_y.md', 'Underscore', NULL, '');
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
        // An alias, any case, when no file name or title is the name: a title before an alias.
        assert_eq!(id("kaffee KOCHEN").as_deref(), Some("brewing.md"));
        assert_eq!(id("brew guide").as_deref(), Some("brewing.md"));
        assert_eq!(id("Coffee").as_deref(), Some("c3d4e5f60"));
        assert_eq!(id("brew"), None);
        assert_eq!(id("guide"), None);
        // `_` and `%` are literal.
        assert_eq!(id("x%y"), None);
        assert_eq!(id("brew%"), None);
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
