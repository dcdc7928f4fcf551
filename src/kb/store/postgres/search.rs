//! A search's reads in as few round trips as it has stages: the document frequencies of all its
//! words in one statement, the counts of all its substrings in one, the rows of the passages
//! found a page at a time. Statements a search runs once go with their parameters' types
//! (`query_typed`: parse, bind and execute in one round trip, where a prepared statement costs
//! a second one to prepare it).

use postgres::types::{ToSql, Type};

use super::super::{Passage, StoreResult, Table};
use super::{Postgres, UNACCENT, lexeme, like_patterns, tsquery};

impl Postgres {
    /// Rows of `sql`, its parameters given with their types: one round trip.
    pub(super) fn typed(
        &self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> StoreResult<Vec<postgres::Row>> {
        self.client
            .borrow_mut()
            .query_typed(sql, params)
            .map_err(|e| self.err(&e))
    }

    /// In how many passages the words table has each word (a word that is more than one
    /// lexeme to the server's parser: counted, up to `cap`).
    pub(super) fn doc_freqs_at_once(&self, words: &[String], cap: u64) -> StoreResult<Vec<u64>> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let queries: Vec<String> = words.iter().map(|w| lexeme(w, "")).collect();
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        // A word of one lexeme is looked up in the counts the server keeps ([`super::COUNTS`]):
        // its query is that lexeme, and the passages it matches are those whose `words` hold it.
        let rows = self.typed(
            &format!(
                "WITH q AS MATERIALIZED (
                     SELECT i, to_tsquery('simple', {UNACCENT}(l)) AS tq,
                         to_tsvector('simple', {UNACCENT}(w)) AS tv
                     FROM unnest($1::text[], $3::text[]) WITH ORDINALITY AS u(l, w, i))
                 SELECT CASE WHEN numnode(tq) = 1 AND length(tv) = 1
                     THEN coalesce((SELECT n FROM freqs WHERE word = (tsvector_to_array(tv))[1]), 0)
                     ELSE (SELECT count(*) FROM (SELECT 1 FROM chunks WHERE words @@ tq LIMIT $2) m)
                 END
                 FROM q ORDER BY i"
            ),
            &[
                (&queries, Type::TEXT_ARRAY),
                (&cap, Type::INT8),
                (&words, Type::TEXT_ARRAY),
            ],
        )?;
        self.counts(&rows, words.len())
    }

    /// Whether each query matches fewer than `cap` passages of `table`.
    pub(super) fn matches_fewer_at_once(
        &self,
        table: Table,
        queries: &[String],
        cap: usize,
    ) -> StoreResult<Vec<bool>> {
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let limit = cap as i64;
        let rows = match table {
            Table::Words => {
                let tsqueries: Vec<String> = queries.iter().map(|q| tsquery(q)).collect();
                self.typed(
                    &format!(
                        "SELECT (SELECT count(*) FROM (SELECT 1 FROM chunks
                                 WHERE words @@ to_tsquery('simple', {UNACCENT}(q)) LIMIT $2) m)
                         FROM unnest($1::text[]) WITH ORDINALITY AS u(q, i) ORDER BY i"
                    ),
                    &[(&tsqueries, Type::TEXT_ARRAY), (&limit, Type::INT8)],
                )?
            }
            Table::Grams => {
                // The patterns of every query in one array, each with its query's number.
                let mut patterns: Vec<String> = Vec::new();
                let mut of: Vec<i32> = Vec::new();
                for (i, q) in queries.iter().enumerate() {
                    for p in like_patterns(q) {
                        patterns.push(p);
                        of.push(i as i32);
                    }
                }
                let n = queries.len() as i32;
                self.typed(
                    "SELECT (SELECT count(*) FROM (SELECT 1 FROM chunks
                             WHERE grams LIKE ANY(g.ps) LIMIT $4) m)
                     FROM generate_series(0, $3 - 1) AS i
                     LEFT JOIN (SELECT q, array_agg(p) AS ps FROM unnest($1::text[], $2::int4[]) AS u(p, q)
                                GROUP BY q) g ON g.q = i
                     ORDER BY i",
                    &[
                        (&patterns, Type::TEXT_ARRAY),
                        (&of, Type::INT4_ARRAY),
                        (&n, Type::INT4),
                        (&limit, Type::INT8),
                    ],
                )?
            }
        };
        Ok(self
            .counts(&rows, queries.len())?
            .into_iter()
            .map(|n| (n as usize) < cap)
            .collect())
    }

    /// Passages `cs` with their notes, in their order (`None`: removed by a sync since).
    pub(super) fn passages_at_once(&self, cs: &[i64]) -> StoreResult<Vec<Option<Passage>>> {
        if cs.is_empty() {
            return Ok(Vec::new());
        }
        let cs = cs.to_vec();
        let rows = self.typed(
            "SELECT u.o, n.id, n.title, n.ordering, n.path, c.seq, c.heading, c.start_line,
                    c.end_line, c.text, n.n
             FROM unnest($1::int8[]) WITH ORDINALITY AS u(c, o)
             JOIN chunks c ON c.c = u.c JOIN notes n ON n.n = c.note",
            &[(&cs, Type::INT8_ARRAY)],
        )?;
        let mut out: Vec<Option<Passage>> = (0..cs.len()).map(|_| None).collect();
        for r in rows {
            let get = || -> std::result::Result<(i64, Passage), postgres::Error> {
                let seq: i32 = r.try_get(5)?;
                let start: i64 = r.try_get(7)?;
                let end: i64 = r.try_get(8)?;
                Ok((
                    r.try_get(0)?,
                    Passage {
                        id: r.try_get(1)?,
                        title: r.try_get(2)?,
                        ordering: r.try_get(3)?,
                        path: r.try_get(4)?,
                        seq: seq.max(0) as u32,
                        heading: r.try_get(6)?,
                        lines: [start.max(0) as u32, end.max(0) as u32],
                        text: r.try_get(9)?,
                        n: r.try_get(10)?,
                    },
                ))
            };
            let (o, p) = get().map_err(|e| self.err(&e))?;
            if let Some(slot) = usize::try_from(o - 1).ok().and_then(|i| out.get_mut(i)) {
                *slot = Some(p);
            }
        }
        Ok(out)
    }

    /// One count a row, `n` of them.
    fn counts(&self, rows: &[postgres::Row], n: usize) -> StoreResult<Vec<u64>> {
        let counts = rows
            .iter()
            .map(|r| r.try_get::<_, i64>(0).map(|n| n.max(0) as u64))
            .collect::<std::result::Result<Vec<u64>, _>>()
            .map_err(|e| self.err(&e))?;
        if counts.len() != n {
            return Err(super::StoreError::new(
                super::Kind::Bug,
                &self.name,
                &self.place,
                format!("{} counts for {n} words", counts.len()),
            ));
        }
        Ok(counts)
    }
}
