//! Search: BM25 over the words and over the trigrams of every passage, and cosine over the
//! vectors when the knowledge base has them, fused by reciprocal rank. The best passage of each
//! note stands for the note.

use std::collections::HashMap;
use std::time::Instant;

use rusqlite::params;

use super::embed::{Embedder, Input, Purpose};
use super::store::{Index, fold};
use super::vectors;
use crate::error::Result;

/// One note found, by its best passage.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Hit {
    pub(crate) kb: String,
    pub(crate) id: String,
    pub(crate) title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ordering: Option<String>,
    pub(crate) path: String,
    /// Relevance from 0 to 1, for ranking only (not comparable between queries).
    pub(crate) score: f64,
    /// Which passage of the note (0 for the first).
    pub(crate) chunk: u32,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) heading: String,
    pub(crate) lines: [u32; 2],
    pub(crate) passage: String,
}

/// Rank fusion constant (the usual 60: the top of each list counts, the tail little).
const RRF_K: f64 = 60.0;
const W_WORDS: f64 = 1.0;
const W_GRAMS: f64 = 0.8;
const W_VECTORS: f64 = 1.2;

/// Words that carry no meaning for a search, in English and German.
const STOP: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for",
    "from", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "should", "so", "that", "the", "their", "then", "there", "these", "this", "to", "was", "we",
    "what", "when", "where", "which", "who", "why", "will", "with", "you", "your", "also", "aber",
    "als", "am", "an", "auch", "auf", "aus", "bei", "bin", "bis", "das", "dass", "dem", "den",
    "der", "des", "die", "doch", "du", "ein", "eine", "einem", "einen", "einer", "eines", "er",
    "es", "für", "hat", "ich", "ihr", "im", "in", "ist", "kann", "mit", "nach", "nicht", "noch",
    "oder", "sich", "sie", "sind", "so", "um", "und", "uns", "von", "vor", "was", "wie", "wir",
    "wird", "wo", "zu", "zum", "zur", "über", "welche", "welcher", "wann", "warum", "gibt",
];

/// The search terms of a query: folded words, stop words dropped (unless nothing else is left),
/// each once, at most 32.
pub(crate) fn terms(query: &str) -> Vec<String> {
    let folded = fold(query);
    let mut all: Vec<&str> = folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut seen = std::collections::HashSet::new();
    all.retain(|w| seen.insert(*w));
    let meaningful: Vec<&str> = all
        .iter()
        .copied()
        .filter(|w| w.chars().count() > 1 && !STOP.contains(w))
        .collect();
    let chosen = if meaningful.is_empty() {
        all
    } else {
        meaningful
    };
    chosen.into_iter().take(32).map(str::to_owned).collect()
}

fn fts_query(terms: &[String], min_chars: usize) -> Option<String> {
    let quoted: Vec<String> = terms
        .iter()
        .filter(|t| t.chars().count() >= min_chars)
        .map(|t| format!("\"{}\"", t.replace('"', "")))
        .collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

/// Notes a search returns, at most (`-k`, `kb.top_k`).
pub(crate) const MAX_K: usize = 1000;

/// A word in more than this share of the passages says little about any of them (1/N).
const COMMON: u64 = 3;
/// Words rarer than this (in passages) are also searched inside longer words (the trigram
/// index): `sicherung` in "Datenbanksicherung". A common word is found as itself already.
const RARE: u64 = 200;

/// Which terms go to which index: the FTS5 expressions for the words index, and the terms to
/// look for inside longer words. BM25 must score every passage a term is in, so a term found in
/// a third of all passages costs much and ranks little: it is left out when rarer terms remain.
/// Only rare terms are looked for inside compounds.
fn plan(ix: &Index, terms: &[String]) -> Result<(Vec<String>, Vec<String>)> {
    if terms.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    ix.conn
        .execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_terms USING fts5vocab(main, words, 'row')",
        )
        .map_err(|e| ix.damaged(&e))?;
    let total = ix.count("SELECT count(*) FROM chunks")?.max(1);
    let mut st = ix
        .conn
        .prepare_cached("SELECT doc FROM temp.words_terms WHERE term = ?1")
        .map_err(|e| ix.damaged(&e))?;
    let mut df = Vec::with_capacity(terms.len());
    for t in terms {
        let n: i64 = st
            .query_row([strip_marks(t)], |r| r.get(0))
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(0),
                e => Err(e),
            })
            .map_err(|e| ix.damaged(&e))?;
        df.push(n.max(0) as u64);
    }
    let telling: Vec<String> = terms
        .iter()
        .zip(&df)
        .filter(|(_, d)| **d * COMMON <= total)
        .map(|(t, _)| t.clone())
        .collect();
    // Nothing but common words: they are looked for in titles and headings only (few
    // passages to score, and where a common word still tells something).
    let words = if telling.is_empty() {
        terms
            .iter()
            .map(|t| format!("{{title heading}} : \"{}\"", t.replace('"', "")))
            .collect()
    } else {
        telling
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "")))
            .collect()
    };
    let grams = terms
        .iter()
        .zip(&df)
        .filter(|(t, d)| **d < RARE && t.chars().count() >= 4)
        .map(|(t, _)| t.clone())
        .collect();
    Ok((words, grams))
}

/// Latin letters without their marks, as the `unicode61` tokenizer folds them (`läuft` is
/// indexed as `lauft`), for looking terms up in its vocabulary.
fn strip_marks(term: &str) -> String {
    term.chars()
        .map(|c| match c {
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => 'a',
            'ç' | 'ć' | 'č' => 'c',
            'ď' => 'd',
            'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => 'e',
            'ì' | 'í' | 'î' | 'ï' | 'ī' | 'į' => 'i',
            'ñ' | 'ń' | 'ň' => 'n',
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => 'o',
            'ř' => 'r',
            'ś' | 'š' | 'ş' => 's',
            'ť' | 'ţ' => 't',
            'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' | 'ų' => 'u',
            'ý' | 'ÿ' => 'y',
            'ź' | 'ż' | 'ž' => 'z',
            c => c,
        })
        .collect()
}

/// A term searched inside longer words counts when it is in fewer passages than this.
const SUBSTRING_CAP: usize = 500;

/// Whether `query` matches fewer than `cap` passages (stops counting at `cap`).
fn matches_fewer(ix: &Index, table: &str, query: &str, cap: usize) -> Result<bool> {
    let mut st = ix
        .conn
        .prepare_cached(&format!(
            "SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ?1 LIMIT ?2)"
        ))
        .map_err(|e| ix.damaged(&e))?;
    let n: i64 = st
        .query_row(params![query, cap as i64], |r| r.get(0))
        .map_err(|e| ix.damaged(&e))?;
    Ok((n as usize) < cap)
}

/// Chunk IDs best first, by BM25 (title and heading weigh more than body text).
fn bm25(ix: &Index, table: &str, query: &str, limit: usize) -> Result<Vec<i64>> {
    let mut st = ix
        .conn
        .prepare_cached(&format!(
            "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY bm25({table}, 3.0, 2.0, 1.0) LIMIT ?2"
        ))
        .map_err(|e| ix.damaged(&e))?;
    let rows = st
        .query_map(params![query, limit as i64], |r| r.get(0))
        .map_err(|e| ix.damaged(&e))?;
    rows.collect::<rusqlite::Result<_>>()
        .map_err(|e| ix.damaged(&e))
}

/// The `k` notes that best answer `query`, best first.
pub(crate) fn search(
    ix: &Index,
    query: &str,
    k: usize,
    embedder: Option<&Embedder>,
    deadline: Option<Instant>,
) -> Result<Vec<Hit>> {
    if k == 0 {
        return Ok(Vec::new());
    }
    let k = k.min(MAX_K);
    let depth = (k * 5).max(25);
    let terms = terms(query);
    let (words, grams) = plan(ix, &terms)?;
    let mut lists: Vec<(f64, Vec<i64>)> = Vec::with_capacity(3);
    if !words.is_empty() {
        lists.push((W_WORDS, bm25(ix, "words", &words.join(" OR "), depth)?));
    }
    // Inside longer words, only what is found in few passages: a substring found everywhere
    // (`work` in "network") ranks nothing and would make BM25 score every passage.
    let mut inside = Vec::with_capacity(grams.len());
    for t in grams {
        if let Some(q) = fts_query(std::slice::from_ref(&t), 3)
            && matches_fewer(ix, "grams", &q, SUBSTRING_CAP)?
        {
            inside.push(t);
        }
    }
    if let Some(q) = fts_query(&inside, 3) {
        lists.push((W_GRAMS, bm25(ix, "grams", &q, depth)?));
    }
    let dims: usize = ix
        .meta("dimensions")?
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    if let Some(e) = embedder
        && dims > 0
        && !query.trim().is_empty()
    {
        let mut v = e
            .embed(
                &[Input {
                    text: query,
                    title: None,
                }],
                Purpose::Query,
                deadline,
            )?
            .pop()
            .unwrap_or_default();
        vectors::normalize(&mut v);
        if v.len() == dims {
            let near = vectors::nearest(ix, &v, depth)?;
            lists.push((W_VECTORS, near.into_iter().map(|(c, _)| c).collect()));
        }
    }
    let best: f64 = lists.iter().map(|(w, _)| w / (RRF_K + 1.0)).sum();
    let mut fused: HashMap<i64, f64> = HashMap::new();
    for (w, list) in &lists {
        for (rank, c) in list.iter().enumerate() {
            *fused.entry(*c).or_default() += w / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut ranked: Vec<(i64, f64)> = fused.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));

    let mut st = ix
        .conn
        .prepare_cached(
            "SELECT n.id, n.title, n.ordering, n.path, c.seq, c.heading, c.start_line, c.end_line, c.text, n.n
             FROM chunks c JOIN notes n ON n.n = c.note WHERE c.c = ?1",
        )
        .map_err(|e| ix.damaged(&e))?;
    let mut hits: Vec<Hit> = Vec::with_capacity(k.min(64));
    let mut notes_taken = std::collections::HashSet::new();
    for (c, score) in ranked {
        if hits.len() >= k {
            break;
        }
        let row = st.query_row([c], |r| {
            Ok((
                Hit {
                    kb: ix.name.clone(),
                    id: r.get(0)?,
                    title: r.get(1)?,
                    ordering: r.get(2)?,
                    path: r.get(3)?,
                    score: if best > 0.0 { score / best } else { 0.0 },
                    chunk: r.get(4)?,
                    heading: r.get(5)?,
                    lines: [r.get(6)?, r.get(7)?],
                    passage: r.get(8)?,
                },
                r.get::<_, i64>(9)?,
            ))
        });
        match row {
            Ok((hit, n)) => {
                if notes_taken.insert(n) {
                    hits.push(hit);
                }
            }
            // A passage removed by a sync since the lists were read.
            Err(rusqlite::Error::QueryReturnedNoRows) => {}
            Err(e) => return Err(ix.damaged(&e)),
        }
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_stop_words_and_fold() {
        assert_eq!(
            terms("Wie läuft die Datenbank-Sicherung über Nacht?"),
            vec!["läuft", "datenbank", "sicherung", "nacht"]
        );
        assert_eq!(terms("Straße"), vec!["strasse"]);
        assert_eq!(terms("the"), vec!["the"]);
        assert!(terms("  ?! ").is_empty());
    }

    #[test]
    fn fts_query_quotes_every_term() {
        let t = vec!["a\"b".to_owned(), "or".to_owned(), "xy".to_owned()];
        assert_eq!(fts_query(&t, 1).unwrap(), "\"ab\" OR \"or\" OR \"xy\"");
        assert_eq!(fts_query(&t, 4), None);
    }
}

#[cfg(test)]
mod timing {
    /// By hand: `AI_KB_INDEX=/path/NAME.sqlite cargo test --lib kb_timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    #[allow(clippy::print_stderr)]
    fn kb_timing() {
        let Some(path) = std::env::var_os("AI_KB_INDEX") else {
            return;
        };
        let conn = rusqlite::Connection::open(path).unwrap();
        let q = std::env::var("AI_KB_QUERY").unwrap_or_else(|_| "backup tape sicherung".into());
        let terms = super::terms(&q);
        for (table, min) in [("words", 1), ("grams", 3)] {
            let fq = super::fts_query(&terms, min).unwrap();
            for sql in [
                format!(
                    "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY bm25({table}, 3.0, 2.0, 1.0) LIMIT 25"
                ),
                format!("SELECT rowid FROM {table} WHERE {table} MATCH ?1 LIMIT 25"),
                format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
            ] {
                let t = std::time::Instant::now();
                let mut st = conn.prepare(&sql).unwrap();
                let n = st.query_map([&fq], |_| Ok(())).unwrap().count();
                eprintln!(
                    "{:8.1} ms {n:6} {sql} [{fq}]",
                    t.elapsed().as_secs_f64() * 1000.0
                );
            }
        }
    }
}
