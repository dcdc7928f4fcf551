//! The PostgreSQL store read and written whole by `kb copy` ([`Records`]), and the base a copy
//! makes: its schema, tables and rows in one transaction, which nobody sees until it commits
//! (a copy that dies leaves nothing; the server rolls it back).

use postgres::types::ToSql;

use super::super::{Keywords, LinkRecord, NoteRecord, PassageRecord, Records, Store, StoreResult};
use super::{COUNTS, HEADS, LINKS_UNREAD, Postgres, SCHEMA, TABLES, UNACCENT, quote_ident};
use crate::error::{Error, Result};

impl Postgres {
    /// Connect to `url` and open a transaction in which the tables of `name` are made anew in
    /// a schema of the session's own, for [`Records`] to fill and [`Records::switch_copy`] to
    /// put in the base's place. A server that already holds the base is refused, unless
    /// `force`.
    pub(crate) fn create_copy(name: &str, url: &str, force: bool) -> Result<Postgres> {
        let pg = Postgres::connect(name, url)?;
        // The extensions first, by themselves, as `open` makes them (one maker at a time).
        let made = pg.exec(
            "BEGIN;
             SELECT pg_advisory_xact_lock(hashtext('ai_kb'));
             CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;
             CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
             CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;
             COMMIT;",
        );
        if let Err(e) = made {
            pg.exec("ROLLBACK").ok();
            return Err(pg.extension_error(e));
        }
        if !force && pg.holds_base()? {
            return Err(pg.refuse_copy());
        }
        pg.exec("BEGIN")?;
        let made = pg.exec(&format!(
            "CREATE SCHEMA {staging};
             SET search_path = {staging}, public;
             {TABLES}
             {HEADS}
             {LINKS_UNREAD}
             {COUNTS}
             INSERT INTO meta VALUES ('schema', '{SCHEMA}');",
            staging = pg.staging()?
        ));
        if let Err(e) = made {
            pg.exec("ROLLBACK").ok();
            return Err(e.into());
        }
        pg.statements.borrow_mut().clear();
        Ok(pg)
    }

    /// The schema a copy fills before it takes the base's place: the session's own, never
    /// seen by another (it is renamed before its transaction commits).
    fn staging(&self) -> StoreResult<String> {
        let pid: i32 = self
            .row("SELECT pg_backend_pid()", &[])?
            .map_or(Ok(0), |r| r.try_get(0))
            .map_err(|e| self.err(&e))?;
        // Not `ai_kb_…`: no base's schema (a base named `copy_123` has `ai_kb_copy_123`).
        Ok(quote_ident(&format!("ai_kbcopy_{pid}")))
    }

    /// Whether the server holds knowledge base `name` (its tables, committed).
    fn holds_base(&self) -> StoreResult<bool> {
        self.row(
            "SELECT to_regclass($1) IS NOT NULL",
            &[&format!("{}.meta", self.schema())],
        )?
        .map_or(Ok(false), |r| r.try_get(0))
        .map_err(|e| self.err(&e))
    }

    fn refuse_copy(&self) -> Error {
        Error::usage(format!(
            "{} already holds knowledge base {}",
            self.place, self.name
        ))
        .hint(format!(
            "replace it (what is there now is lost) by adding --force to: ai kb copy {} --to …",
            self.name
        ))
    }

    fn get<T>(&self, r: std::result::Result<T, postgres::Error>) -> StoreResult<T> {
        r.map_err(|e| self.err(&e))
    }
}

impl Records for Postgres {
    fn begin_reading(&self) -> StoreResult<()> {
        self.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    }

    fn meta_all(&self) -> StoreResult<Vec<(String, String)>> {
        self.rows("SELECT key, value FROM meta ORDER BY key", &[])?
            .iter()
            .map(|r| Ok((self.get(r.try_get(0))?, self.get(r.try_get(1))?)))
            .collect()
    }

    fn notes_after(&self, after: i64, limit: usize) -> StoreResult<Vec<NoteRecord>> {
        let limit = limit as i64;
        self.rows(
            "SELECT n, id, path, title, ordering, hash, size, mtime, aliases, lang FROM notes
             WHERE n > $1 ORDER BY n LIMIT $2",
            &[&after, &limit],
        )?
        .iter()
        .map(|r| {
            let get = || -> std::result::Result<NoteRecord, postgres::Error> {
                Ok(NoteRecord {
                    n: r.try_get(0)?,
                    id: r.try_get(1)?,
                    path: r.try_get(2)?,
                    title: r.try_get(3)?,
                    ordering: r.try_get(4)?,
                    hash: r.try_get(5)?,
                    size: r.try_get(6)?,
                    mtime: r.try_get(7)?,
                    aliases: r.try_get(8)?,
                    lang: r.try_get(9)?,
                })
            };
            self.get(get())
        })
        .collect()
    }

    fn passages_after(&self, after: i64, limit: usize) -> StoreResult<Vec<PassageRecord>> {
        let limit = limit as i64;
        self.rows(
            "SELECT c, note, seq, heading, start_line, end_line, text, hash, vector FROM chunks
             WHERE c > $1 ORDER BY c LIMIT $2",
            &[&after, &limit],
        )?
        .iter()
        .map(|r| {
            let get = || -> std::result::Result<PassageRecord, postgres::Error> {
                let seq: i32 = r.try_get(2)?;
                let start: i64 = r.try_get(4)?;
                let end: i64 = r.try_get(5)?;
                let vector: Option<pgvector::Vector> = r.try_get(8)?;
                Ok(PassageRecord {
                    c: r.try_get(0)?,
                    note: r.try_get(1)?,
                    seq: i64::from(seq),
                    heading: r.try_get(3)?,
                    start_line: u32::try_from(start).unwrap_or(0),
                    end_line: u32::try_from(end).unwrap_or(0),
                    text: r.try_get(6)?,
                    hash: r.try_get(7)?,
                    vector: vector.map(|v| v.to_vec()),
                })
            };
            self.get(get())
        })
        .collect()
    }

    fn links_after(&self, after: i64, limit: usize) -> StoreResult<Vec<(i64, LinkRecord)>> {
        let limit = limit as i64;
        self.rows(
            "SELECT l, note, line, wiki, name, key FROM links WHERE l > $1 ORDER BY l LIMIT $2",
            &[&after, &limit],
        )?
        .iter()
        .map(|r| {
            let get = || -> std::result::Result<(i64, LinkRecord), postgres::Error> {
                Ok((
                    r.try_get(0)?,
                    LinkRecord {
                        note: r.try_get(1)?,
                        line: r.try_get(2)?,
                        wiki: r.try_get(3)?,
                        name: r.try_get(4)?,
                        key: r.try_get(5)?,
                    },
                ))
            };
            self.get(get())
        })
        .collect()
    }

    fn link_count(&self) -> StoreResult<u64> {
        self.count("SELECT count(*) FROM links")
    }

    fn put_notes(&self, rows: &[NoteRecord]) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let n: Vec<i64> = rows.iter().map(|r| r.n).collect();
        let id: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        let path: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
        let title: Vec<&str> = rows.iter().map(|r| r.title.as_str()).collect();
        let ordering: Vec<Option<&str>> = rows.iter().map(|r| r.ordering.as_deref()).collect();
        let hash: Vec<&str> = rows.iter().map(|r| r.hash.as_str()).collect();
        let size: Vec<i64> = rows.iter().map(|r| r.size).collect();
        let mtime: Vec<i64> = rows.iter().map(|r| r.mtime).collect();
        let aliases: Vec<&str> = rows.iter().map(|r| r.aliases.as_str()).collect();
        let lang: Vec<Option<&str>> = rows.iter().map(|r| r.lang.as_deref()).collect();
        let params: [&(dyn ToSql + Sync); 10] = [
            &n, &id, &path, &title, &ordering, &hash, &size, &mtime, &aliases, &lang,
        ];
        self.execute(
            "INSERT INTO notes (n, id, path, title, ordering, hash, size, mtime, aliases, lang)
             SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[],
                 $6::text[], $7::bigint[], $8::bigint[], $9::text[], $10::text[])",
            &params,
        )
        .map(|_| ())
    }

    fn put_passages(&self, rows: &[(PassageRecord, Option<Keywords>)]) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let c: Vec<i64> = rows.iter().map(|(p, _)| p.c).collect();
        let note: Vec<i64> = rows.iter().map(|(p, _)| p.note).collect();
        let seq: Vec<i32> = rows.iter().map(|(p, _)| p.seq as i32).collect();
        let heading: Vec<&str> = rows.iter().map(|(p, _)| p.heading.as_str()).collect();
        let start: Vec<i64> = rows.iter().map(|(p, _)| i64::from(p.start_line)).collect();
        let end: Vec<i64> = rows.iter().map(|(p, _)| i64::from(p.end_line)).collect();
        let text: Vec<&str> = rows.iter().map(|(p, _)| p.text.as_str()).collect();
        let hash: Vec<&str> = rows.iter().map(|(p, _)| p.hash.as_str()).collect();
        let vector: Vec<Option<pgvector::Vector>> = rows
            .iter()
            .map(|(p, _)| p.vector.clone().map(pgvector::Vector::from))
            .collect();
        let kw = |f: fn(&Keywords) -> &str| -> Vec<Option<&str>> {
            rows.iter().map(|(_, k)| k.as_ref().map(f)).collect()
        };
        let (kt, ka, kh, kx) = (
            kw(|k| &k.title),
            kw(|k| &k.aliases),
            kw(|k| &k.heading),
            kw(|k| &k.text),
        );
        let (gt, gh, gx) = (
            kw(|k| &k.gram_title),
            kw(|k| &k.gram_heading),
            kw(|k| &k.gram_text),
        );
        let params: [&(dyn ToSql + Sync); 16] = [
            &c, &note, &seq, &heading, &start, &end, &text, &hash, &vector, &kt, &ka, &kh, &kx,
            &gt, &gh, &gx,
        ];
        self.execute(
            &format!(
                "INSERT INTO chunks (c, note, seq, heading, start_line, end_line, text, hash, vector,
                     words, gram_title, gram_heading, gram_text)
                 SELECT c, note, seq, heading, sl, el, text, hash, vector,
                     CASE WHEN kt IS NULL THEN NULL ELSE
                         setweight(to_tsvector('simple', {UNACCENT}(kt)), 'A') ||
                         setweight(to_tsvector('simple', {UNACCENT}(ka)), 'B') ||
                         setweight(to_tsvector('simple', {UNACCENT}(kh)), 'C') ||
                         setweight(to_tsvector('simple', {UNACCENT}(kx)), 'D') END,
                     coalesce({UNACCENT}(gt), ''), coalesce({UNACCENT}(gh), ''),
                     coalesce({UNACCENT}(gx), '')
                 FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[], $5::bigint[],
                     $6::bigint[], $7::text[], $8::text[], $9::vector[], $10::text[], $11::text[],
                     $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
                     AS u(c, note, seq, heading, sl, el, text, hash, vector, kt, ka, kh, kx, gt, gh, gx)"
            ),
            &params,
        )
        .map(|_| ())
    }

    fn put_links(&self, rows: &[LinkRecord]) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let note: Vec<i64> = rows.iter().map(|l| l.note).collect();
        let line: Vec<i64> = rows.iter().map(|l| l.line).collect();
        let wiki: Vec<bool> = rows.iter().map(|l| l.wiki).collect();
        let name: Vec<&str> = rows.iter().map(|l| l.name.as_str()).collect();
        let key: Vec<&str> = rows.iter().map(|l| l.key.as_str()).collect();
        self.execute(
            "INSERT INTO links (note, line, wiki, name, key)
             SELECT note, line, wiki, name, key
             FROM unnest($1::bigint[], $2::bigint[], $3::boolean[], $4::text[], $5::text[])
                 WITH ORDINALITY AS u(note, line, wiki, name, key, o)
             ORDER BY o",
            &[&note, &line, &wiki, &name, &key],
        )
        .map(|_| ())
    }

    fn finish_copy(&self, dims: usize) -> StoreResult<()> {
        // The row counters go on after the rows copied with their numbers.
        self.exec(
            "SELECT setval(pg_get_serial_sequence('notes', 'n'), coalesce(max(n), 0) + 1, false) FROM notes;
             SELECT setval(pg_get_serial_sequence('chunks', 'c'), coalesce(max(c), 0) + 1, false) FROM chunks;
             SELECT setval(pg_get_serial_sequence('links', 'l'), coalesce(max(l), 0) + 1, false) FROM links;",
        )?;
        if dims > 0 {
            self.size_vectors(dims)?;
        }
        self.index_rows()
    }

    fn switch_copy(&self, force: bool) -> Result<()> {
        // As a sync holds them: the base's lock, then the makers' (so no sync of the base it
        // replaces is under way, and no other maker makes it meanwhile).
        let key = format!("ai_kb_{}", self.name);
        self.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&key])?;
        self.execute("SELECT pg_advisory_xact_lock(hashtext('ai_kb'))", &[])?;
        if !force && self.holds_base()? {
            return Err(self.refuse_copy());
        }
        let schema = self.schema();
        self.exec(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE;
             ALTER SCHEMA {} RENAME TO {schema};
             SET search_path = {schema}, public;",
            self.staging()?
        ))?;
        self.statements.borrow_mut().clear();
        Ok(())
    }
}
