//! Search: BM25 over the stemmed words of every passage (title, aliases and headings weigh more
//! than body text), the trigrams of its rarer query terms as a tie-breaker (a compound part such
//! as `sicherung` in "Datenbanksicherung" still finds its note, without substring matches such as
//! `iron` in "environment" outranking whole words), and cosine over the vectors when the
//! knowledge base has them, fused as a weighted sum of their normalized scores (a note far ahead
//! in the words stays ahead of one a weaker list prefers; reciprocal rank fusion, blind to the
//! gaps, let a static model's vectors drag SciFact from 0.693 to 0.657 nDCG@10). The best
//! passage of each note stands for the note.

use std::collections::HashMap;
use std::time::Instant;

use super::embed::{Embedder, Input, Purpose};
use super::lang::{self, Lang, Stems};
use super::store::{Index, Table, fold};
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
    /// How close the passage comes to the best one found, from 0 to 1: its keyword score
    /// (BM25) as a share of the best, or its vector similarity on the scale from the last
    /// candidate to the best, whichever is higher. What the relevance cut-off of grounded turns
    /// looks at.
    #[serde(skip)]
    pub(crate) closeness: f64,
    /// Which passage of the note (0 for the first).
    pub(crate) chunk: u32,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) heading: String,
    pub(crate) lines: [u32; 2],
    pub(crate) passage: String,
}

/// Rank fusion constant (the usual 60: the top of each list counts, the tail little), for
/// `AI_KB_FUSE=rank`.
const RRF_K: f64 = 60.0;
const W_WORDS: f64 = 1.0;
/// The trigram list is a tie-breaker: too light to reorder what the words ranked (a note 1% of
/// the best BM25 score ahead stays ahead), it decides among notes they rank alike, and notes it
/// alone finds (a compound part) come after the words' hits. As a near-equal list
/// (0.8) it cost 0.03 nDCG@10 on SciFact: substrings (`iron` in "environment") outvoted words.
const W_GRAMS: f64 = 0.01;
/// The vectors' weight beside the words' 1.0, in the fusion of normalized scores: a
/// transformer's (all-MiniLM-L6-v2, e5, an HTTP provider's) and a static model's (a table of token
/// vectors, weaker: at a transformer's weight it outvotes the words). Chosen on 300 SciFact
/// *training* claims (bench/quality; the test claims were measured once, after): 0.6 and 0.3
/// were the best there (0.733 and 0.709 nDCG@10, keywords alone 0.691).
const W_VECTORS: f64 = 0.6;
const W_VECTORS_STATIC: f64 = 0.3;

/// The fusion weights (words, trigrams, vectors): the constants above, or for measuring
/// (`bench/quality`) `AI_KB_FUSION=W,G,V` (a 0 leaves that list out, so `0,0,1` searches by
/// vectors alone). Not a setting: the defaults are what the measurements chose.
fn weights(static_vectors: bool) -> (f64, f64, f64) {
    let parsed = std::env::var("AI_KB_FUSION").ok().and_then(|v| {
        let w: Vec<f64> = v
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .ok()
                    .filter(|f: &f64| f.is_finite() && *f >= 0.0)
            })
            .collect::<Option<_>>()?;
        (w.len() == 3).then(|| (w[0], w[1], w[2]))
    });
    let vectors = if static_vectors {
        W_VECTORS_STATIC
    } else {
        W_VECTORS
    };
    parsed.unwrap_or((W_WORDS, W_GRAMS, vectors))
}
/// BM25 weights of the words table's columns: title, aliases, heading, text.
const FIELDS: &[f64] = &[2.0, 2.0, 1.5, 1.0];

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

/// Query words looked up, at most: the rarest ones (a long question's common words add cost,
/// little ranking).
const MAX_WORDS: usize = 12;
/// Query words looked for inside longer words, at most: the rarest ones.
const MAX_GRAMS: usize = 4;

/// A word in more than this share of the passages says little about any of them (1/N).
const COMMON: u64 = 3;
/// ... unless it is in no more passages than this: in a small base every word is in a large
/// share (a word of one note of two is in half), yet it is all there is to tell notes apart,
/// and scoring a handful of passages costs nothing.
const FEW: u64 = 10;
/// Words rarer than this (in passages) are also searched inside longer words (the trigram
/// index): `sicherung` in "Datenbanksicherung". A common word is found as itself already.
const RARE: u64 = 200;

/// The languages query terms are stemmed in: the query's own when it shows one the knowledge
/// base has notes in, else every language its notes are in (a term then matches the stem of
/// either); English for an index from before stemming.
fn query_langs(ix: &Index, query: &str) -> Result<Vec<Lang>> {
    let mut have: Vec<Lang> = ix
        .meta("languages")?
        .unwrap_or_default()
        .split(',')
        .filter_map(Lang::from_code)
        .collect();
    if have.is_empty() {
        have.push(Lang::En);
    }
    Ok(match lang::detect(query) {
        Some(l) if have.contains(&l) => vec![l],
        _ => have,
    })
}

/// How one query term is looked up in the words index: its stems (one per language, the same
/// ones once), or the folded word itself in an index from before stemming.
fn variants(term: &str, stems: &[Stems]) -> Vec<String> {
    if stems.is_empty() {
        return vec![term.to_owned()];
    }
    let mut out: Vec<String> = Vec::with_capacity(stems.len());
    for s in stems {
        let v = s.word(term);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn quoted(variants: &[String]) -> String {
    let q: Vec<String> = variants
        .iter()
        .map(|v| format!("\"{}\"", v.replace('"', "")))
        .collect();
    if q.len() == 1 {
        q.into_iter().next().unwrap_or_default()
    } else {
        format!("({})", q.join(" OR "))
    }
}

/// Which terms go to which index: the FTS5 expressions for the words index, and the terms to
/// look for inside longer words. BM25 must score every passage a term is in, so a term found in
/// a third of all passages costs much and ranks little: it is left out when rarer terms remain.
/// Only rare terms are looked for inside compounds.
/// What [`plan`] decided, and what it counted on the way.
#[derive(Default)]
struct Plan {
    /// FTS5 expressions for the words index.
    words: Vec<String>,
    /// Terms looked for inside longer words.
    grams: Vec<String>,
    /// Each term's document frequency (in passages, capped where no decision changes).
    df: Vec<u64>,
    /// Passages in the index.
    total: u64,
    /// The terms looked up in the words index (indexes into the terms), in the query's order;
    /// empty when all are common.
    telling: Vec<usize>,
}

fn plan(ix: &Index, terms: &[String], stems: &[Stems]) -> Result<Plan> {
    if terms.is_empty() {
        return Ok(Plan::default());
    }
    let total = ix.passages()?.max(1);
    let looked_up: Vec<Vec<String>> = terms.iter().map(|t| variants(t, stems)).collect();
    // Document frequencies of the words (of a term's commonest stem), and of the terms as
    // typed (whether to look for them inside longer words).
    // All of them at once (one round trip to a server), each word once. Counts stop where no
    // decision below changes any more: a word in more than a `COMMON`th of the passages, and
    // in more than `FEW` and `RARE`, is neither telling nor rare, however common it is.
    let mut words: Vec<String> = Vec::new();
    let mut counted = |w: &str| {
        let w = super::store::strip_marks(w);
        match words.iter().position(|x| *x == w) {
            Some(i) => i,
            None => {
                words.push(w);
                words.len() - 1
            }
        }
    };
    let slots: Vec<Vec<usize>> = terms
        .iter()
        .zip(&looked_up)
        .map(|(t, vs)| {
            let mut s: Vec<usize> = vs.iter().map(|v| counted(v)).collect();
            if !vs.iter().any(|v| v == t) {
                s.push(counted(t));
            }
            s
        })
        .collect();
    let cap = (total / COMMON).max(FEW).max(RARE) + 1;
    let counts = ix.doc_freqs(&words, cap)?;
    let df: Vec<u64> = slots
        .iter()
        .map(|s| {
            s.iter()
                .map(|&i| counts.get(i).copied().unwrap_or(0).min(cap))
                .max()
                .unwrap_or(0)
        })
        .collect();
    // The rarest telling terms, at most MAX_WORDS of them, in the query's order.
    let mut by_rarity: Vec<usize> = (0..terms.len())
        .filter(|&i| df[i] * COMMON <= total || df[i] <= FEW)
        .collect();
    by_rarity.sort_by_key(|&i| df[i]);
    // For measuring (bench/quality, bench/run): AI_KB_MAX_WORDS=N.
    let max_words = std::env::var("AI_KB_MAX_WORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &usize| *n > 0)
        .unwrap_or(MAX_WORDS);
    by_rarity.truncate(max_words);
    by_rarity.sort_unstable();
    let telling: Vec<&Vec<String>> = by_rarity.iter().map(|&i| &looked_up[i]).collect();
    // Nothing but common words: they are looked for in titles, aliases and headings only (few
    // passages to score, and where a common word still tells something).
    let words = if telling.is_empty() {
        let columns = if stems.is_empty() {
            "{title heading}"
        } else {
            "{title aliases heading}"
        };
        looked_up
            .iter()
            .map(|vs| format!("{columns} : {}", quoted(vs)))
            .collect()
    } else {
        telling.iter().map(|vs| quoted(vs)).collect()
    };
    // Inside longer words, the rarest few: what a tie-breaker needs, at a bounded cost.
    let mut rare: Vec<usize> = (0..terms.len())
        .filter(|&i| df[i] < RARE && terms[i].chars().count() >= 4)
        .collect();
    rare.sort_by_key(|&i| df[i]);
    rare.truncate(MAX_GRAMS);
    rare.sort_unstable();
    let grams = rare.iter().map(|&i| terms[i].clone()).collect();
    Ok(Plan {
        words,
        grams,
        df,
        total,
        telling: by_rarity,
    })
}

/// A term searched inside longer words counts when it is in fewer passages than this.
const SUBSTRING_CAP: usize = 500;

/// Whether each query matches fewer than `cap` passages (stops counting at `cap`).
fn matches_fewer(ix: &Index, table: Table, queries: &[String], cap: usize) -> Result<Vec<bool>> {
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    Ok(ix.matches_fewer_each(table, queries, cap)?)
}

/// Chunk IDs best first with their BM25 scores (higher is better), title, aliases and heading
/// weighing more than body text.
fn bm25(ix: &Index, table: Table, query: &str, limit: usize) -> Result<Vec<(i64, f64)>> {
    let weights = if table == Table::Words {
        FIELDS
    } else {
        &[3.0, 2.0, 1.0]
    };
    Ok(ix.keyword(table, weights, query, limit)?)
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
    let mut clock = Stages::new();
    let terms = terms(query);
    // An index from before stemming is searched as it was indexed (its next sync updates it).
    let stems: Vec<Stems> = if ix.stemmed()? {
        query_langs(ix, query)?
            .into_iter()
            .map(Stems::new)
            .collect()
    } else {
        Vec::new()
    };
    let (w_words, w_grams, w_vectors) = weights(embedder.is_some_and(Embedder::is_static));
    clock.mark("stems");
    let plan = plan(ix, &terms, &stems)?;
    let (mut words, mut grams) = (plan.words.clone(), plan.grams.clone());
    clock.mark("plan");
    if w_words == 0.0 {
        words.clear();
    }
    if w_grams == 0.0 {
        grams.clear();
    }
    // Each list: its weight and its passages best first, each with its score normalized to
    // 0..1 (see `fuse`).
    let mut lists: Vec<(f64, Vec<(i64, f64)>)> = Vec::with_capacity(3);
    let has_words = !words.is_empty();
    // The words' list further down than the fusion takes it: where a note named inside the
    // query (`named_inside`) stands by its words. (BM25 scores every passage found either way.)
    let mut deeper: Vec<(i64, f64)> = Vec::new();
    if has_words {
        let list = bm25(ix, Table::Words, &words.join(" OR "), depth.max(NAME_SCAN))?;
        let best = list.first().map_or(1.0, |l| l.1).max(f64::MIN_POSITIVE);
        deeper = list.into_iter().map(|(c, s)| (c, s / best)).collect();
        lists.push((w_words, deeper.iter().take(depth).copied().collect()));
    }
    // Inside longer words, only what is found in few passages: a substring found everywhere
    // (`work` in "network") ranks nothing and would make BM25 score every passage.
    let asked: Vec<(String, String)> = grams
        .into_iter()
        .filter_map(|t| fts_query(std::slice::from_ref(&t), 3).map(|q| (t, q)))
        .collect();
    let queries: Vec<String> = asked.iter().map(|(_, q)| q.clone()).collect();
    let fewer = matches_fewer(ix, Table::Grams, &queries, SUBSTRING_CAP)?;
    let inside: Vec<String> = asked
        .into_iter()
        .zip(fewer)
        .filter_map(|((t, _), few)| few.then_some(t))
        .collect();
    // Parts of words are evidence of their own only when no whole word was found: as
    // closeness, they count half beside words.
    let grams_share = if has_words { 0.5 } else { 1.0 };
    if let Some(q) = fts_query(&inside, 3) {
        let list = bm25(ix, Table::Grams, &q, depth)?;
        let best = list.first().map_or(1.0, |l| l.1).max(f64::MIN_POSITIVE);
        lists.push((
            w_grams,
            list.into_iter().map(|(c, s)| (c, s / best)).collect(),
        ));
    }
    let keyword_lists = lists.len();
    clock.mark("words+grams");
    let dims: usize = ix
        .meta("dimensions")?
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    if let Some(e) = embedder
        && dims > 0
        && w_vectors > 0.0
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
            let near = ix.nearest(&v, depth.max(NORM_RANK))?;
            let mut list = normalize_similarity(&near);
            list.truncate(depth);
            lists.push((w_vectors, list));
        }
    }
    clock.mark("vectors");
    // Each passage's closeness to the best one (see `Hit::closeness`).
    let mut close: HashMap<i64, f64> = HashMap::new();
    for (i, (_, list)) in lists.iter().enumerate() {
        let share = if i > 0 && i < keyword_lists {
            grams_share
        } else {
            1.0
        };
        for (c, s) in list {
            let e = close.entry(*c).or_default();
            *e = e.max(share * s);
        }
    }
    let (mut ranked, best) = fuse(&lists, fusion());
    if let Some(c) = named_first(ix, query, &mut ranked, best)? {
        // Named outright, it is as close as a passage gets (the relevance cut-off keeps it).
        close.insert(c, 1.0);
    } else if !stems.is_empty() && w_words > 0.0 {
        let words = (w_words, deeper.as_slice(), depth);
        let asked = Asked {
            query,
            terms: &terms,
            stems: &stems,
            plan: &plan,
        };
        for (c, share) in named_inside(ix, &asked, words, &mut ranked, best)? {
            let e = close.entry(c).or_default();
            *e = e.max(share);
        }
    }
    clock.mark("names");
    let mut hits: Vec<Hit> = Vec::with_capacity(k.min(64));
    let mut notes_taken = std::collections::HashSet::new();
    // The passages' rows a page at a time (one round trip to a server): the first `k` are
    // usually enough, unless several are of one note.
    let mut page = 0;
    let mut rows: Vec<Option<super::store::Passage>> = Vec::new();
    for (i, &(c, score)) in ranked.iter().enumerate() {
        if hits.len() >= k {
            break;
        }
        if i >= page {
            let next = ranked.len().min(i + (k - hits.len()).max(8));
            let cs: Vec<i64> = ranked[i..next].iter().map(|r| r.0).collect();
            rows = ix.passages_by(&cs)?;
            rows.reverse();
            page = next;
        }
        let row = rows.pop().flatten();
        // None: a passage removed by a sync since the lists were read.
        if let Some(p) = row
            && notes_taken.insert(p.n)
        {
            hits.push(Hit {
                kb: ix.name.clone(),
                id: p.id,
                title: p.title,
                ordering: p.ordering,
                path: p.path,
                score: if best > 0.0 {
                    (score / best).min(1.0)
                } else {
                    0.0
                },
                closeness: close.get(&c).copied().unwrap_or(0.0),
                chunk: p.seq,
                heading: p.heading,
                lines: p.lines,
                passage: p.text,
            });
        }
    }
    clock.mark("fuse+rows");
    clock.report();
    Ok(hits)
}

/// The longest query looked up as a note's name.
const MAX_NAME: usize = 200;

/// A query that is a note's whole name (its file name without `.md`, its title, one of its
/// `aliases:` or its ID, any case: what Obsidian's quick switcher finds it by) puts that note
/// first, at the best score: by its best passage among the candidates, else by its first
/// passage. On a real vault "Accounting" was 13th behind notes saying "accounts" more often,
/// "Access Point" 7th behind "contact points", and a release note `v1.3.1` 55th behind
/// `v1.4.4` (the query's words are `v1`, `3` and `1`; bench/vault). Returns the passage put
/// first.
fn named_first(
    ix: &Index,
    query: &str,
    ranked: &mut Vec<(i64, f64)>,
    best: f64,
) -> Result<Option<i64>> {
    let name = query.trim();
    if name.is_empty() || name.len() > MAX_NAME || name.contains('\n') {
        return Ok(None);
    }
    let Some(note) = ix.find_note(name)? else {
        return Ok(None);
    };
    let passages = ix.passages_of_note(&note.id)?;
    let Some(&first) = passages.first() else {
        return Ok(None);
    };
    let top = ranked.first().map_or(best, |r| r.1);
    let c = match ranked.iter().position(|(c, _)| passages.contains(c)) {
        Some(i) => ranked.remove(i).0,
        None => first,
    };
    ranked.insert(0, (c, top));
    Ok(Some(c))
}

/// Names looked for inside a query have at most this many words.
const NAME_WORDS: usize = 10;
/// Passages whose notes' names are compared with the query: the first of those with query words
/// in their title or aliases.
const NAME_SCAN: usize = 100;
/// Query words looked for in titles and aliases, at most: the rarest telling ones.
const NAME_TERMS: usize = 4;
/// Notes named inside one query that are moved up, at most.
const MAX_NAMED: usize = 20;
/// What a note named inside a query gains, times the share of the query its name carries and
/// the best score: being named counts twice the words the name covers, so a note named by
/// most of a question's weight ("What do my notes say about grep?") comes before notes that
/// only use its words, on both stores' keyword scores.
const W_NAMED: f64 = 2.0;

/// What a query may name a note by: each run of up to [`NAME_WORDS`] of its words (split at
/// white space, punctuation around the run dropped, internal punctuation kept: `v1.3.1`,
/// `CWE-287`), folded; runs of stop words and one-letter words only are left out.
fn spans(query: &str) -> std::collections::HashSet<String> {
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut out = std::collections::HashSet::new();
    let edge = |c: char| !c.is_alphanumeric();
    for i in 0..words.len() {
        for j in i + 1..=words.len().min(i + NAME_WORDS) {
            let run = words[i..j].join(" ");
            let run = fold(run.trim_matches(edge));
            if run.is_empty() || run.len() > MAX_NAME {
                continue;
            }
            let telling = run
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w.chars().count() > 1 && !STOP.contains(&w));
            if telling {
                out.insert(run);
            }
        }
    }
    out
}

/// A name as [`spans`] folds a query's words: folded, white space as one space.
fn name_key(name: &str) -> String {
    fold(&name.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A query as the search took it apart.
struct Asked<'a> {
    query: &'a str,
    terms: &'a [String],
    stems: &'a [Stems],
    plan: &'a Plan,
}

/// A note named inside a longer query ("What do my notes say about grep?": the note `grep`) is
/// moved up: its best passage (else its first) gains [`W_NAMED`] times the share of the
/// query's weight its name covers (the inverse document frequencies of the query's terms in
/// the name, over all of the query's terms found) times the best score. Words found in every
/// note weigh little, so "notes" in that question hardly moves a note named `Notes`, while
/// `grep`, the rarest word, moves its note first. Without this, notes that use the question's
/// other words ("notes", "say") beside `grep` outranked it: a title is one short field among a
/// passage's words (bench/vault: `grep` 36th). Names are file names without `.md`, titles and
/// aliases, any case, among the notes with the query's rarest telling words in their title or
/// aliases. Returns each passage moved and its closeness (its new score as a share of the
/// best). `words`: the words' weight, their list (deeper than the candidates) and how far down
/// the fusion took it.
fn named_inside(
    ix: &Index,
    asked: &Asked<'_>,
    words: (f64, &[(i64, f64)], usize),
    ranked: &mut Vec<(i64, f64)>,
    best: f64,
) -> Result<Vec<(i64, f64)>> {
    let Asked {
        query,
        terms,
        stems,
        plan,
    } = *asked;
    // A query of one word is a whole name, which `named_first` looks up, except in letters
    // beyond ASCII: the stores' SQL folds their case otherwise (SQLite not at all, PostgreSQL as
    // the database's locale says), so it is compared here, folded alike on every store.
    if plan.telling.is_empty() || query.split_whitespace().nth(1).is_none() && query.is_ascii() {
        return Ok(Vec::new());
    }
    let spans = spans(query);
    if spans.is_empty() {
        return Ok(Vec::new());
    }
    // The notes whose titles or aliases have the query's rarest telling words, and the parts
    // of the query's version numbers (`3` and `1` of `v1.3.1`, too short and common to be
    // telling).
    // The rarest few: a name is known by its rare words (one made of common words only is
    // no name to move a note for), and a common word's passages cost much to read.
    let mut rarest = plan.telling.clone();
    rarest.sort_by_key(|&i| plan.df.get(i).copied().unwrap_or(0));
    rarest.truncate(NAME_TERMS);
    // Each as typed too: a name is said as it is written, and the note's words may have been
    // stemmed in another language than the query's guess (`ärger` alone reads as German:
    // `arg`; a note `Ärger` about something in English keeps `ärger`).
    let mut wanted: Vec<Vec<String>> = rarest
        .iter()
        .map(|&i| {
            let mut v = variants(&terms[i], stems);
            if !v.contains(&terms[i]) {
                v.push(terms[i].clone());
            }
            v
        })
        .collect();
    for span in spans.iter().filter(|s| !s.contains(' ') && s.contains('.')) {
        for part in span.split(|c: char| !c.is_alphanumeric()) {
            if !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()) {
                let v = vec![part.to_owned()];
                if !wanted.contains(&v) {
                    wanted.push(v);
                }
            }
        }
    }
    let expr = format!(
        "{{title aliases}} : ({})",
        wanted
            .iter()
            .map(|v| quoted(v))
            .collect::<Vec<_>>()
            .join(" OR ")
    );
    let found = bm25(ix, Table::Words, &expr, NAME_SCAN)?;
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let cs: Vec<i64> = found.iter().map(|f| f.0).collect();
    // Each note once, with the longest of its names the query says.
    let mut named: Vec<(String, f64)> = Vec::new();
    for note in ix.note_names(&cs)? {
        if named.iter().any(|(id, _)| *id == note.id) {
            continue;
        }
        let file = note.path.rsplit('/').next().unwrap_or(&note.path);
        let file = file.strip_suffix(".md").unwrap_or(file);
        let names = [note.title.as_str(), file]
            .into_iter()
            .chain(note.aliases.lines());
        let covered = names
            .map(name_key)
            .filter(|n| spans.contains(n))
            .map(|n| coverage(&n, terms, plan))
            .fold(0.0, f64::max);
        if covered > 0.0 {
            named.push((note.id, covered));
        }
    }
    named.sort_by(|a, b| b.1.total_cmp(&a.1));
    named.truncate(MAX_NAMED);
    let top = ranked.first().map_or(best, |r| r.1);
    let mut moved = Vec::with_capacity(named.len());
    for (id, covered) in named {
        let passages = ix.passages_of_note(&id)?;
        let Some(&first) = passages.first() else {
            continue;
        };
        let gain = W_NAMED * covered * top;
        // Its best passage by the words (where the fusion took them, or further down), else
        // by the other lists, else its first.
        let (weight, list, fused) = words;
        let by_words = list.iter().position(|(c, _)| passages.contains(c));
        let at = ranked.iter().position(|(c, _)| passages.contains(c));
        let c = by_words.map_or_else(|| at.map_or(first, |i| ranked[i].0), |i| list[i].0);
        // A passage further down the words than the fusion took them has not had their score.
        let missed = by_words
            .filter(|&i| i >= fused)
            .map_or(0.0, |i| weight * list[i].1);
        match ranked.iter_mut().find(|r| r.0 == c) {
            Some(r) => r.1 += missed + gain,
            None => ranked.push((c, missed + gain)),
        }
        moved.push(c);
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let top = ranked.first().map_or(best, |r| r.1).max(f64::MIN_POSITIVE);
    Ok(moved
        .into_iter()
        .map(|c| {
            let s = ranked.iter().find(|r| r.0 == c).map_or(0.0, |r| r.1);
            (c, (s / top).min(1.0))
        })
        .collect())
}

/// The share of the query's weight (the inverse document frequencies of its terms found in the
/// index) that the terms of `name` carry.
fn coverage(name: &str, terms: &[String], plan: &Plan) -> f64 {
    let idf = |i: usize| {
        let n = plan.total as f64;
        let df = plan.df.get(i).copied().unwrap_or(0) as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln().max(0.0)
    };
    let of_name = self::terms(name);
    let (mut all, mut in_name) = (0.0, 0.0);
    for (i, t) in terms.iter().enumerate() {
        // A word in no passage ranks nothing, and takes no share.
        if plan.df.get(i).is_none_or(|&df| df == 0) {
            continue;
        }
        let w = idf(i);
        all += w;
        if of_name.contains(t) {
            in_name += w;
        }
    }
    if all > 0.0 { in_name / all } else { 0.0 }
}

/// How the lists are fused into one ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fusion {
    /// Reciprocal rank: each list adds `weight / (60 + rank)`. Blind to how far apart the
    /// scores are, so a weak list moves notes as much as a strong one.
    Rank,
    /// A weighted sum of the normalized scores (BM25 as a share of the best, similarity on the
    /// scale from the `NORM_RANK`th passage to the best): a note far ahead in one list stays
    /// ahead.
    Score,
}

/// The fusion: [`Fusion::Score`], or for measuring `AI_KB_FUSE=rank|score`.
fn fusion() -> Fusion {
    match std::env::var("AI_KB_FUSE").as_deref() {
        Ok("rank" | "rrf") => Fusion::Rank,
        Ok("score" | "convex") => Fusion::Score,
        _ => DEFAULT_FUSION,
    }
}

const DEFAULT_FUSION: Fusion = Fusion::Score;

/// Similarities are normalized against the one at this rank (or the last, in a smaller
/// knowledge base), whatever the number of notes asked for: so `-k 5` and `-k 100` rank their
/// first notes alike.
const NORM_RANK: usize = 100;

/// Cosine similarities (best first) on the scale from the `NORM_RANK`th to the best, 0 to 1.
fn normalize_similarity(near: &[(i64, f32)]) -> Vec<(i64, f64)> {
    let (Some(first), Some(last)) = (near.first(), near.get(NORM_RANK - 1).or(near.last())) else {
        return Vec::new();
    };
    let (top, floor) = (f64::from(first.1), f64::from(last.1));
    let span = top - floor;
    near.iter()
        .map(|(c, s)| {
            let v = if span < 1e-6 {
                1.0
            } else {
                ((f64::from(*s) - floor) / span).clamp(0.0, 1.0)
            };
            (*c, v)
        })
        .collect()
}

/// Fuses weighted lists of (passage, normalized score), best first, into one ranking best
/// first; also returns the highest fused score possible (a passage first in every list).
fn fuse(lists: &[(f64, Vec<(i64, f64)>)], how: Fusion) -> (Vec<(i64, f64)>, f64) {
    let mut fused: HashMap<i64, f64> = HashMap::new();
    let mut best = 0.0;
    for (w, list) in lists {
        match how {
            Fusion::Rank => {
                best += w / (RRF_K + 1.0);
                for (rank, (c, _)) in list.iter().enumerate() {
                    *fused.entry(*c).or_default() += w / (RRF_K + rank as f64 + 1.0);
                }
            }
            Fusion::Score => {
                best += w;
                for (c, s) in list {
                    *fused.entry(*c).or_default() += w * s;
                }
            }
        }
    }
    let mut ranked: Vec<(i64, f64)> = fused.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    (ranked, best)
}

/// Where a search spends its time, on stderr when `AI_KB_TIMING=1` (for profiling by hand and
/// bench/run; perf is not always at hand).
struct Stages {
    on: bool,
    last: Instant,
    marks: Vec<(&'static str, f64)>,
}

impl Stages {
    fn new() -> Stages {
        Stages {
            on: std::env::var_os("AI_KB_TIMING").is_some_and(|v| v == "1"),
            last: Instant::now(),
            marks: Vec::new(),
        }
    }

    fn mark(&mut self, what: &'static str) {
        if self.on {
            let now = Instant::now();
            self.marks
                .push((what, now.duration_since(self.last).as_secs_f64() * 1000.0));
            self.last = now;
        }
    }

    #[allow(
        clippy::print_stderr,
        reason = "profiling output asked for by AI_KB_TIMING"
    )]
    fn report(&self) {
        if self.on {
            let parts: Vec<String> = self
                .marks
                .iter()
                .map(|(w, ms)| format!("{w} {ms:.2} ms"))
                .collect();
            eprintln!("ai: search timing: {}", parts.join(", "));
        }
    }
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
    fn score_fusion_keeps_a_clear_lead_that_rank_fusion_gives_away() {
        // Words: note 1 far ahead (a whole share), 2 and 3 barely found. Vectors: a weak list
        // that puts 2 first, 1 just behind.
        let words = (1.0, vec![(1, 1.0), (2, 0.1), (3, 0.05)]);
        let vectors = (1.0, vec![(2, 1.0), (1, 0.95), (3, 0.0)]);
        let lists = [words, vectors];
        let (by_score, best) = fuse(&lists, Fusion::Score);
        assert_eq!(by_score[0].0, 1);
        assert!((best - 2.0).abs() < 1e-9);
        assert!((by_score[0].1 - 1.95).abs() < 1e-9);
        // By rank alone 1 and 2 tie (first in one list, second in the other): the lower ID
        // wins the tie, so the weak list drew level with the strong one.
        let (by_rank, _) = fuse(&lists, Fusion::Rank);
        assert!((by_rank[0].1 - by_rank[1].1).abs() < 1e-12);
    }

    #[test]
    fn score_fusion_weighs_each_list() {
        let lists = [
            (1.0, vec![(1, 1.0), (2, 0.5)]),
            (0.4, vec![(2, 1.0), (1, 0.0)]),
        ];
        let (ranked, best) = fuse(&lists, Fusion::Score);
        assert_eq!(ranked.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2]);
        assert!((best - 1.4).abs() < 1e-9);
        // A list left out (weight 0) decides nothing.
        let lists = [(0.0, vec![(1, 1.0)]), (1.0, vec![(2, 1.0), (1, 0.2)])];
        assert_eq!(fuse(&lists, Fusion::Score).0[0].0, 2);
    }

    #[test]
    fn similarities_scale_from_a_fixed_rank_whatever_the_depth() {
        let near: Vec<(i64, f32)> = (0..300).map(|i| (i, 0.9 - i as f32 * 0.002)).collect();
        let all = normalize_similarity(&near);
        assert!((all[0].1 - 1.0).abs() < 1e-6);
        assert!(all[NORM_RANK - 1].1.abs() < 1e-6);
        assert!(
            all[NORM_RANK + 50].1 == 0.0,
            "below the floor is 0, not negative"
        );
        let half = all[NORM_RANK / 2].1;
        assert!(half > 0.45 && half < 0.55, "{half}");
        // A small knowledge base: the last passage is the floor; a single one is 1.
        let few = normalize_similarity(&near[..3]);
        assert!((few[0].1 - 1.0).abs() < 1e-6 && few[2].1.abs() < 1e-6);
        assert_eq!(normalize_similarity(&near[..1]), vec![(0, 1.0)]);
        assert!(normalize_similarity(&[]).is_empty());
    }

    #[test]
    fn a_query_names_notes_by_runs_of_its_words() {
        let s = spans("What do my notes say about \"Local Data Staging\" in v1.3.1?");
        for name in [
            "local data staging",
            "local",
            "notes say",
            "v1.3.1",
            "staging\" in v1.3.1",
        ] {
            assert!(s.contains(name), "{name}: {s:?}");
        }
        // Runs of stop words alone name nothing; punctuation around a run is not part of it.
        for name in ["what do my", "about", "\"local", "v1.3.1?", "in"] {
            assert!(!s.contains(name), "{name}: {s:?}");
        }
        assert_eq!(name_key("  Local   Data Straße "), "local data strasse");
        assert!(s.len() < 8 * NAME_WORDS);
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
        let t = std::time::Instant::now();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
            .unwrap();
        eprintln!(
            "{:8.1} ms count(*) of chunks: {n}",
            t.elapsed().as_secs_f64() * 1000.0
        );
        // Document frequencies: the vocabulary table against counting matches (capped).
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_terms USING fts5vocab(main, words, 'row')",
        )
        .unwrap();
        for sql in [
            "SELECT doc FROM temp.words_terms WHERE term = ?1",
            "SELECT count(*) FROM (SELECT rowid FROM words WHERE words MATCH '\"' || ?1 || '\"' LIMIT 100000)",
            "SELECT count(*) FROM (SELECT rowid FROM words WHERE words MATCH '\"' || ?1 || '\"' LIMIT 2000)",
        ] {
            let t = std::time::Instant::now();
            let mut st = conn.prepare(sql).unwrap();
            let counts: Vec<i64> = terms
                .iter()
                .map(|w| st.query_row([w], |r| r.get(0)).unwrap_or(0))
                .collect();
            eprintln!(
                "{:8.1} ms {counts:?} {sql}",
                t.elapsed().as_secs_f64() * 1000.0
            );
        }
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
