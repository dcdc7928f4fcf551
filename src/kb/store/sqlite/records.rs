//! The SQLite index read and written whole by `kb copy` ([`Records`]).

use rusqlite::params;

use super::super::{Keywords, LinkRecord, NoteRecord, PassageRecord, Records, Store, StoreResult};
use super::Sqlite;
// The SQLite store's own encoding of vectors, as `sqlite.rs` imports it.
use super::vectors;

impl Records for Sqlite {
    fn begin_reading(&self) -> StoreResult<()> {
        // A read transaction: one state of the index (WAL) until it ends.
        self.conn
            .execute_batch("BEGIN DEFERRED")
            .map_err(|e| self.damaged(&e))?;
        self.count("SELECT count(*) FROM meta").map(|_| ())
    }

    fn meta_all(&self) -> StoreResult<Vec<(String, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT key, value FROM meta ORDER BY key")
            .map_err(|e| self.damaged(&e))?;
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.damaged(&e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.damaged(&e))
    }

    fn notes_after(&self, after: i64, limit: usize) -> StoreResult<Vec<NoteRecord>> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT n, id, path, title, ordering, hash, size, mtime, aliases, lang FROM notes
                 WHERE n > ?1 ORDER BY n LIMIT ?2",
            )
            .map_err(|e| self.damaged(&e))?;
        st.query_map(params![after, limit as i64], |r| {
            Ok(NoteRecord {
                n: r.get(0)?,
                id: r.get(1)?,
                path: r.get(2)?,
                title: r.get(3)?,
                ordering: r.get(4)?,
                hash: r.get(5)?,
                size: r.get(6)?,
                mtime: r.get(7)?,
                aliases: r.get(8)?,
                lang: r.get(9)?,
            })
        })
        .map_err(|e| self.damaged(&e))?
        .collect::<rusqlite::Result<_>>()
        .map_err(|e| self.damaged(&e))
    }

    fn passages_after(&self, after: i64, limit: usize) -> StoreResult<Vec<PassageRecord>> {
        let dims = self.dims()?;
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT c, note, seq, heading, start_line, end_line, text, hash, vector FROM chunks
                 WHERE c > ?1 ORDER BY c LIMIT ?2",
            )
            .map_err(|e| self.damaged(&e))?;
        st.query_map(params![after, limit as i64], |r| {
            Ok(PassageRecord {
                c: r.get(0)?,
                note: r.get(1)?,
                seq: r.get(2)?,
                heading: r.get(3)?,
                start_line: r.get(4)?,
                end_line: r.get(5)?,
                text: r.get(6)?,
                hash: r.get(7)?,
                vector: r
                    .get::<_, Option<Vec<u8>>>(8)?
                    .and_then(|b| vectors::from_blob(&b, dims)),
            })
        })
        .map_err(|e| self.damaged(&e))?
        .collect::<rusqlite::Result<_>>()
        .map_err(|e| self.damaged(&e))
    }

    fn links_after(&self, after: i64, limit: usize) -> StoreResult<Vec<(i64, LinkRecord)>> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT rowid, note, line, wiki, name, key FROM links
                 WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
            )
            .map_err(|e| self.damaged(&e))?;
        st.query_map(params![after, limit as i64], |r| {
            Ok((
                r.get(0)?,
                LinkRecord {
                    note: r.get(1)?,
                    line: r.get(2)?,
                    wiki: r.get(3)?,
                    name: r.get(4)?,
                    key: r.get(5)?,
                },
            ))
        })
        .map_err(|e| self.damaged(&e))?
        .collect::<rusqlite::Result<_>>()
        .map_err(|e| self.damaged(&e))
    }

    fn link_count(&self) -> StoreResult<u64> {
        self.count("SELECT count(*) FROM links")
    }

    fn put_notes(&self, rows: &[NoteRecord]) -> StoreResult<()> {
        let mut st = self
            .conn
            .prepare_cached(
                "INSERT INTO notes (n, id, path, title, ordering, hash, size, mtime, aliases, lang)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .map_err(|e| self.damaged(&e))?;
        for r in rows {
            st.execute(params![
                r.n, r.id, r.path, r.title, r.ordering, r.hash, r.size, r.mtime, r.aliases, r.lang
            ])
            .map_err(|e| self.damaged(&e))?;
        }
        Ok(())
    }

    fn put_passages(&self, rows: &[(PassageRecord, Option<Keywords>)]) -> StoreResult<()> {
        for (p, k) in rows {
            self.conn
                .prepare_cached(
                    "INSERT INTO chunks (c, note, seq, heading, start_line, end_line, text, hash, vector)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .and_then(|mut st| {
                    st.execute(params![
                        p.c,
                        p.note,
                        p.seq,
                        p.heading,
                        p.start_line,
                        p.end_line,
                        p.text,
                        p.hash,
                        p.vector.as_deref().map(vectors::to_blob)
                    ])
                })
                .map_err(|e| self.damaged(&e))?;
            if let Some(k) = k {
                self.index_keywords(p.c, k)?;
            }
        }
        Ok(())
    }

    fn put_links(&self, rows: &[LinkRecord]) -> StoreResult<()> {
        let mut st = self
            .conn
            .prepare_cached(
                "INSERT INTO links (note, line, wiki, name, key) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(|e| self.damaged(&e))?;
        for l in rows {
            st.execute(params![l.note, l.line, l.wiki, l.name, l.key])
                .map_err(|e| self.damaged(&e))?;
        }
        Ok(())
    }

    fn finish_copy(&self, _dims: usize) -> StoreResult<()> {
        // A new vector generation: the side file is written for it after the commit.
        self.vectors_changed()
    }

    fn switch_copy(&self, _force: bool) -> crate::error::Result<()> {
        // The file is put in place after the commit (`store::switch`).
        Ok(())
    }
}
