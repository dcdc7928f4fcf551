//! A sync's writes to the server a note or a batch at a time: a round trip costs the same for
//! one row as for hundreds, so the passages of a note (with their keywords), its links, and a
//! batch of vectors each go in one statement over arrays (`unnest`).

use postgres::types::ToSql;

use super::super::{Keywords, Kind, PassageRow, Store, StoreError, StoreResult};
use super::{Postgres, UNACCENT};
use crate::kb::linked;

impl Postgres {
    /// Note `n`'s passages and their keywords, in one statement.
    pub(super) fn insert_passages_at_once(
        &self,
        n: i64,
        rows: &[(PassageRow<'_>, Keywords)],
    ) -> StoreResult<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let seq: Vec<i32> = rows.iter().map(|(p, _)| p.seq as i32).collect();
        let heading: Vec<&str> = rows.iter().map(|(p, _)| p.heading).collect();
        let start: Vec<i64> = rows.iter().map(|(p, _)| i64::from(p.start_line)).collect();
        let end: Vec<i64> = rows.iter().map(|(p, _)| i64::from(p.end_line)).collect();
        let text: Vec<&str> = rows.iter().map(|(p, _)| p.text).collect();
        let hash: Vec<&str> = rows.iter().map(|(p, _)| p.hash).collect();
        let vector: Vec<Option<pgvector::Vector>> = rows
            .iter()
            .map(|(p, _)| p.vector.map(|v| pgvector::Vector::from(v.to_vec())))
            .collect();
        let kw =
            |f: fn(&Keywords) -> &str| -> Vec<&str> { rows.iter().map(|(_, k)| f(k)).collect() };
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
        let params: [&(dyn ToSql + Sync); 15] = [
            &n, &seq, &heading, &start, &end, &text, &hash, &vector, &kt, &ka, &kh, &kx, &gt, &gh,
            &gx,
        ];
        // In their order, so row numbers follow it as they do one by one.
        self.execute(
            &format!(
                "INSERT INTO chunks (note, seq, heading, start_line, end_line, text, hash, vector,
                     words, gram_title, gram_heading, gram_text)
                 SELECT $1, seq, heading, sl, el, text, hash, vector,
                     setweight(to_tsvector('simple', {UNACCENT}(kt)), 'A') ||
                     setweight(to_tsvector('simple', {UNACCENT}(ka)), 'B') ||
                     setweight(to_tsvector('simple', {UNACCENT}(kh)), 'C') ||
                     setweight(to_tsvector('simple', {UNACCENT}(kx)), 'D'),
                     {UNACCENT}(gt), {UNACCENT}(gh), {UNACCENT}(gx)
                 FROM unnest($2::int[], $3::text[], $4::bigint[], $5::bigint[], $6::text[],
                     $7::text[], $8::vector[], $9::text[], $10::text[], $11::text[], $12::text[],
                     $13::text[], $14::text[], $15::text[])
                     WITH ORDINALITY AS u(seq, heading, sl, el, text, hash, vector, kt, ka, kh, kx,
                         gt, gh, gx, o)
                 ORDER BY o"
            ),
            &params,
        )
        .map(|_| ())
    }

    /// What is embedded for passages `cs`, in their order.
    pub(super) fn embed_inputs_at_once(
        &self,
        cs: &[i64],
    ) -> StoreResult<Vec<(String, String, String)>> {
        let rows = self.rows(
            "SELECT u.o, c.heading, c.text, n.title
             FROM unnest($1::bigint[]) WITH ORDINALITY AS u(c, o)
             JOIN chunks c ON c.c = u.c JOIN notes n ON n.n = c.note ORDER BY u.o",
            &[&cs],
        )?;
        if rows.len() != cs.len() {
            return Err(StoreError::new(
                Kind::Damaged,
                &self.name,
                &self.place,
                "a passage is gone",
            ));
        }
        rows.iter()
            .map(|r| {
                let get = || -> std::result::Result<_, postgres::Error> {
                    Ok((r.try_get(1)?, r.try_get(2)?, r.try_get(3)?))
                };
                get().map_err(|e| self.err(&e))
            })
            .collect()
    }

    /// Vectors of several passages, in one statement (the first gives the column its size).
    pub(super) fn set_vectors_at_once(&self, rows: &[(i64, Vec<f32>)]) -> StoreResult<()> {
        let Some((_, first)) = rows.first() else {
            return Ok(());
        };
        self.size_vectors(first.len())?;
        let c: Vec<i64> = rows.iter().map(|(c, _)| *c).collect();
        let v: Vec<pgvector::Vector> = rows
            .iter()
            .map(|(_, v)| pgvector::Vector::from(v.clone()))
            .collect();
        self.execute(
            "UPDATE chunks SET vector = u.v FROM unnest($1::bigint[], $2::vector[]) AS u(c, v)
             WHERE chunks.c = u.c",
            &[&c, &v],
        )
        .map(|_| ())
    }

    /// Note `n`'s links as it reads now, in one statement.
    pub(super) fn set_links_at_once(&self, n: i64, links: &[linked::Written]) -> StoreResult<()> {
        let line: Vec<i64> = links.iter().map(|l| i64::from(l.line)).collect();
        let wiki: Vec<bool> = links.iter().map(|l| l.wiki).collect();
        let name: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
        let key: Vec<String> = links.iter().map(|l| linked::key(&l.name)).collect();
        self.execute(
            "WITH gone AS (DELETE FROM links WHERE note = $1)
             INSERT INTO links (note, line, wiki, name, key)
             SELECT $1, line, wiki, name, key
             FROM unnest($2::bigint[], $3::boolean[], $4::text[], $5::text[])
                 WITH ORDINALITY AS u(line, wiki, name, key, o)
             ORDER BY o",
            &[&n, &line, &wiki, &name, &key],
        )
        .map(|_| ())
    }
}
