//! Vector search without decoding rows: beside `NAME.sqlite`, `NAME.vectors` holds every
//! embedded chunk's vector, one fixed-size record after another, so a query streams through
//! the vectors alone (not the pages of passage text around them) and keeps only a small heap.
//! The best candidates are then scored again from the BLOBs in SQLite, which stay the truth.
//!
//! Both keep a vector in 8 bits ([`to_blob`]: a scale and one signed byte per dimension, a
//! quarter of the f32s, which an index of schema 1 held and its next sync converts): on
//! SciFact this ranks as the f32s did (README, beside `bench/index_size`). A record is the
//! chunk ID followed by the BLOB's bytes, so the file is derived from the index without a
//! change of form.
//!
//! The file carries the index's vector generation (`meta.vectors`, bumped by every commit that
//! changes a vector); a file of another generation is not used (the search scans the BLOBs
//! instead). A sync brings it up to date at its end by what the sync touched: each vector
//! written is also noted in the table `vector_log` (in the same transaction), and its record is
//! appended to the file. Records are never changed in place: the header's record count is
//! raised only after the records it covers are written, so a reader (which reads that many) never
//! sees a torn vector, and a sync killed at any moment leaves either the old file, whose
//! generation no longer matches (searches scan the BLOBs), or records past the count that the next
//! sync writes again. A passage deleted or re-embedded leaves its old record behind: harmless, as
//! every candidate is scored again from SQLite (a chunk gone scores nothing), and the file is
//! written anew when such records pass a fifth of it.
//!
//! Format 2 (`AIKBVEC2`): a header of magic, generation (u64), dimensions (u32), record count
//! (u32), then records of chunk ID (i64), scale (f32) and one signed byte per dimension, little
//! endian. A file of format 1 (`AIKBVEC1`, rewritten whole by every sync) is never read: the next
//! sync writes it anew, and says so.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use rusqlite::params;

use super::store::sqlite::Sqlite as Index;
use super::store::{Kind, Store, StoreResult as Result, vectors_file};

const MAGIC: &[u8; 8] = b"AIKBVEC2";
/// The format before records were appended: never read.
const MAGIC_1: &[u8; 8] = b"AIKBVEC1";
const HEADER: usize = 8 + 8 + 4 + 4;
/// Where the header keeps the generation and the record count.
const AT_GENERATION: u64 = 8;
const AT_COUNT: u64 = 20;

/// The index's current vector generation.
pub(crate) fn generation(index: &Index) -> Result<u64> {
    Ok(index
        .meta("vectors")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// The side file, when it is a regular file. Opened without blocking: a FIFO or a device in
/// its place is passed over (the search scans the BLOBs), never waited on.
fn open_side_file(index: &Index, write: bool) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NONBLOCK)
        .open(vectors_file(&index.path))
        .ok()?;
    f.metadata().ok()?.is_file().then_some(f)
}

/// What a side file's header says.
#[derive(Debug, PartialEq)]
enum Head {
    /// Format 2: its generation, dimensions and record count.
    Current {
        generation: u64,
        dims: usize,
        count: usize,
    },
    /// Written by an earlier version (format 1).
    Old,
    /// Too short, or not a side file.
    Unknown,
}

fn parse_head(head: &[u8; HEADER]) -> Head {
    let u32_at = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().unwrap_or_default());
    match &head[..8] {
        m if m == MAGIC => Head::Current {
            generation: u64::from_le_bytes(head[8..16].try_into().unwrap_or_default()),
            dims: u32_at(16) as usize,
            count: u32_at(20) as usize,
        },
        m if m == MAGIC_1 => Head::Old,
        _ => Head::Unknown,
    }
}

fn read_head(f: &File) -> Head {
    let mut head = [0u8; HEADER];
    match f.read_exact_at(&mut head, 0) {
        Ok(()) => parse_head(&head),
        Err(_) => Head::Unknown,
    }
}

/// Mark the vectors changed (inside the caller's transaction). `vectors_logged` says the
/// change was made by a version that notes what it writes in `vector_log`: a generation that
/// an earlier version made has no such mark, and the side file is then written anew.
pub(crate) fn bump(index: &Index) -> Result<()> {
    // The first generation of an index is drawn at random, not 1: a side file of another base
    // (copied in its place, restored from a backup) has another generation, and is not used.
    let next = match index.meta("vectors")?.and_then(|v| v.parse::<u64>().ok()) {
        Some(g) => g.wrapping_add(1),
        None => rand::random::<u64>() >> 1,
    }
    .to_string();
    index.set_meta("vectors", Some(&next))?;
    index.set_meta("vectors_logged", Some(&next))
}

/// Note that chunk `c`'s vector was written (inside the caller's transaction).
pub(crate) fn log(index: &Index, c: i64) -> Result<()> {
    index
        .conn
        .prepare_cached("INSERT OR IGNORE INTO vector_log (c) VALUES (?1)")
        .and_then(|mut st| st.execute([c]))
        .map(|_| ())
        .map_err(|e| index.damaged(&e))
}

/// The table of vectors written since the side file was last brought up to date.
pub(crate) const LOG: &str = "CREATE TABLE IF NOT EXISTS vector_log (c INTEGER PRIMARY KEY);";

/// What bringing the side file up to date did.
#[derive(Debug, PartialEq)]
pub(crate) enum Update {
    /// It was current.
    Current,
    /// Records appended for the vectors written since.
    Appended(u64),
    /// Written anew; `old` when the file was of an earlier format.
    Rewritten { old: bool },
}

/// Bring the side file up to the index's vectors: the records of the vectors written since it
/// was last brought up to date are appended; it is written anew when it is missing, of another
/// generation than the log starts from, of an earlier format, or when records of passages gone
/// pass a fifth of it. Called by the index's only writer (a sync holds the base's lock).
pub(crate) fn update(index: &Index, dims: usize) -> Result<Update> {
    let current = generation(index)?;
    let Some(f) = open_side_file(index, true) else {
        rebuild(index, dims)?;
        return Ok(Update::Rewritten { old: false });
    };
    let (file_gen, count) = match read_head(&f) {
        Head::Current {
            generation,
            dims: d,
            count,
        } if d == dims => (generation, count),
        Head::Old => {
            drop(f);
            rebuild(index, dims)?;
            return Ok(Update::Rewritten { old: true });
        }
        _ => {
            drop(f);
            rebuild(index, dims)?;
            return Ok(Update::Rewritten { old: false });
        }
    };
    if file_gen == current {
        clear_log(index, current)?;
        return Ok(Update::Current);
    }
    let log_from = index
        .meta("vectors_log")?
        .and_then(|v| v.parse::<u64>().ok());
    let logged = index
        .meta("vectors_logged")?
        .and_then(|v| v.parse::<u64>().ok());
    if log_from != Some(file_gen) || logged != Some(current) || !has_log(index)? {
        drop(f);
        rebuild(index, dims)?;
        return Ok(Update::Rewritten { old: false });
    }
    let live = index.count("SELECT count(*) FROM chunks")?
        - index.count("SELECT count(*) FROM chunks WHERE vector IS NULL")?;
    let new = index.count(
        "SELECT count(*) FROM vector_log l JOIN chunks c ON c.c = l.c WHERE c.vector IS NOT NULL",
    )?;
    let records = count as u64 + new;
    if records > u64::from(u32::MAX) || records.saturating_sub(live) * 5 > live.max(64) {
        drop(f);
        rebuild(index, dims)?;
        return Ok(Update::Rewritten { old: false });
    }
    let path = vectors_file(&index.path);
    let io = |e| index.io_error("write", &path, &e);
    let size = 12 + dims;
    let end = (HEADER + count * size) as u64;
    let mut buf = Vec::with_capacity(new as usize * size);
    let mut written = 0u64;
    {
        let mut st = index
            .conn
            .prepare(
                "SELECT c.c, c.vector FROM vector_log l JOIN chunks c ON c.c = l.c
                 WHERE c.vector IS NOT NULL ORDER BY l.c",
            )
            .map_err(|e| index.damaged(&e))?;
        let mut rows = st.query([]).map_err(|e| index.damaged(&e))?;
        while let Some(row) = rows.next().map_err(|e| index.damaged(&e))? {
            let c: i64 = row.get(0).map_err(|e| index.damaged(&e))?;
            let blob = row.get_ref(1).map_err(|e| index.damaged(&e))?;
            if record(&mut buf, c, blob.as_blob().unwrap_or(&[]), dims) {
                written += 1;
            }
        }
    }
    // The records past the count first (what a killed append left there is written over),
    // then the count, then the generation: a reader that sees the new generation sees the new
    // count (it reads the generation first), and every record the count covers is whole.
    f.write_all_at(&buf, end).map_err(io)?;
    f.set_len(end + buf.len() as u64).map_err(io)?;
    f.sync_data().map_err(io)?;
    let total = count as u64 + written;
    f.write_all_at(&(total as u32).to_le_bytes(), AT_COUNT)
        .map_err(io)?;
    f.write_all_at(&current.to_le_bytes(), AT_GENERATION)
        .map_err(io)?;
    f.sync_data().map_err(io)?;
    clear_log(index, current)?;
    Ok(Update::Appended(written))
}

/// Whether the index has the table `vector_log`.
fn has_log(index: &Index) -> Result<bool> {
    Ok(index
        .count("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'vector_log'")?
        > 0)
}

/// The side file holds generation `generation`: the log starts afresh from it.
fn clear_log(index: &Index, generation: u64) -> Result<()> {
    let from = generation.to_string();
    if index.meta("vectors_log")?.as_deref() == Some(from.as_str())
        && has_log(index)?
        && index.count("SELECT count(*) FROM (SELECT 1 FROM vector_log LIMIT 1)")? == 0
    {
        return Ok(());
    }
    index
        .conn
        .execute_batch(&format!(
            "BEGIN IMMEDIATE; {LOG} DELETE FROM vector_log;
             INSERT INTO meta VALUES ('vectors_log', '{from}')
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value;
             COMMIT;"
        ))
        .map_err(|e| {
            index.rollback();
            index.damaged(&e)
        })
}

/// One record: chunk ID, then the vector as the index stores it (scale, quantized components).
/// Nothing when the stored vector is not of `dims` dimensions.
fn record(out: &mut Vec<u8>, c: i64, blob: &[u8], dims: usize) -> bool {
    let Some(stored) = compact_blob(blob, dims) else {
        return false;
    };
    out.extend_from_slice(&c.to_le_bytes());
    out.extend_from_slice(&stored);
    true
}

/// A vector as the SQLite index keeps it: the scale of [`quantize`] (f32) and one signed byte
/// per dimension, little endian, `dims + 4` bytes (the f32s took `4 * dims`). The same bytes
/// follow the chunk ID in a side file record.
pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    let mut q = Vec::with_capacity(v.len());
    let scale = quantize(v, &mut q);
    let mut out = Vec::with_capacity(4 + v.len());
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(q.iter().map(|x| *x as u8));
    out
}

/// A stored vector of `dims` dimensions: 8-bit ([`to_blob`]), or the little-endian f32s of an
/// index from before (schema 1) that no sync has converted yet. `None` for any other length.
pub(crate) fn from_blob(b: &[u8], dims: usize) -> Option<Vec<f32>> {
    if dims == 0 {
        return None;
    }
    if b.len() == dims + 4 {
        let scale = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        Some(b[4..].iter().map(|x| f32::from(*x as i8) * scale).collect())
    } else if b.len() == dims * 4 {
        Some(
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    } else {
        None
    }
}

/// A stored vector in the 8-bit form (converted when it is f32s); `None` for another length.
pub(crate) fn compact_blob(b: &[u8], dims: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
    if b.len() == dims + 4 {
        Some(std::borrow::Cow::Borrowed(b))
    } else {
        from_blob(b, dims).map(|v| std::borrow::Cow::Owned(to_blob(&v)))
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Quantize: the scale (largest magnitude / 127) and the 8-bit components. The scale keeps 17
/// significant bits, so that a component times it is exact in f32 and a vector read back
/// ([`from_blob`]) quantizes to the same bytes: a vector kept by an edit, or copied to
/// PostgreSQL and back, is stored as it was.
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    out.clear();
    if max == 0.0 || !max.is_finite() {
        out.resize(v.len(), 0);
        return 0.0;
    }
    let scale = f32::from_bits(((max / 127.0).to_bits() + 64) & !127);
    if scale == 0.0 || !scale.is_finite() {
        out.resize(v.len(), 0);
        return 0.0;
    }
    out.extend(
        v.iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
    );
    scale
}

#[cfg(test)]
fn dot8(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum()
}

/// [`dot8`] of a stored vector (its bytes as read) with the query, in lanes of 16 that the
/// compiler turns into vector instructions.
fn dot8_bytes(a: &[u8], b: &[i8]) -> i32 {
    const LANES: usize = 16;
    let mut acc = [0i32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += i32::from(x[i] as i8) * i32::from(y[i]);
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += i32::from(*x as i8) * i32::from(*y);
    }
    sum
}

/// Write the side file from the BLOBs (to a temporary file, synced, then renamed over), and
/// start the log afresh from its generation.
pub(crate) fn rebuild(index: &Index, dims: usize) -> Result<()> {
    let target = vectors_file(&index.path);
    let dir = target.parent().unwrap_or(Path::new("."));
    let stem = target
        .file_name()
        .map_or_else(|| "vectors".into(), |n| n.to_string_lossy().into_owned());
    let (tmp, tmp_file) = crate::config::create_temp(dir, &stem, false)
        .map_err(|e| index.io_error("create", &target, &e))?;
    let generation = generation(index)?;
    let result = (|| -> Result<()> {
        let mut w = BufWriter::with_capacity(1 << 16, &tmp_file);
        let io = |e| index.io_error("write", &tmp, &e);
        w.write_all(MAGIC).map_err(io)?;
        w.write_all(&generation.to_le_bytes()).map_err(io)?;
        w.write_all(&(dims as u32).to_le_bytes()).map_err(io)?;
        // The count, once the records are written.
        w.write_all(&0u32.to_le_bytes()).map_err(io)?;
        let mut st = index
            .conn
            .prepare("SELECT c, vector FROM chunks WHERE vector IS NOT NULL ORDER BY c")
            .map_err(|e| index.damaged(&e))?;
        let mut rows = st.query([]).map_err(|e| index.damaged(&e))?;
        let mut buf = Vec::with_capacity(12 + dims);
        let mut written = 0u64;
        while let Some(row) = rows.next().map_err(|e| index.damaged(&e))? {
            let c: i64 = row.get(0).map_err(|e| index.damaged(&e))?;
            let blob = row.get_ref(1).map_err(|e| index.damaged(&e))?;
            buf.clear();
            if record(&mut buf, c, blob.as_blob().unwrap_or(&[]), dims) {
                w.write_all(&buf).map_err(io)?;
                written += 1;
            }
        }
        w.flush().map_err(io)?;
        drop(w);
        if written > u64::from(u32::MAX) {
            return Err(index.io_error(
                "write",
                &tmp,
                &std::io::Error::other("more vectors than the side file counts"),
            ));
        }
        tmp_file
            .write_all_at(&(written as u32).to_le_bytes(), AT_COUNT)
            .map_err(io)?;
        tmp_file.sync_data().map_err(io)?;
        std::fs::rename(&tmp, &target).map_err(|e| index.io_error("rename", &target, &e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    clear_log(index, generation)
}

/// The `top` chunks most similar to `query` (normalized), scored from the index's vectors,
/// best first.
pub(crate) fn nearest(index: &Index, query: &[f32], top: usize) -> Result<Vec<(i64, f32)>> {
    if top == 0 {
        return Ok(Vec::new());
    }
    let mut candidates = match scan_side_file(index, query, top * 4 + 16)? {
        Some(c) => c,
        None => return scan_blobs(index, query, top),
    };
    candidates.sort_unstable();
    candidates.dedup();
    let mut st = index
        .conn
        .prepare_cached("SELECT vector FROM chunks WHERE c = ?1")
        .map_err(|e| index.damaged(&e))?;
    let mut scored = Vec::with_capacity(candidates.len());
    for c in candidates {
        let blob: Option<Vec<u8>> = st
            .query_row(params![c], |r| r.get(0))
            .map_err(|e| index.damaged(&e))
            .or_else(|e| match e.kind {
                Kind::Damaged => Ok(None),
                _ => Err(e),
            })?;
        if let Some(v) = blob.and_then(|b| from_blob(&b, query.len())) {
            scored.push((c, dot(&v, query)));
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(top);
    Ok(scored)
}

/// Candidates from the side file; `None` when it is missing, of another format or of another
/// generation. A chunk may come twice (an old record of it); the caller scores each once.
fn scan_side_file(index: &Index, query: &[f32], want: usize) -> Result<Option<Vec<i64>>> {
    let Some(f) = open_side_file(index, false) else {
        return Ok(None);
    };
    let mut r = BufReader::with_capacity(1 << 18, f);
    let mut head = [0u8; HEADER];
    if r.read_exact(&mut head).is_err() {
        return Ok(None);
    }
    let Head::Current {
        generation: file_gen,
        dims,
        count,
    } = parse_head(&head)
    else {
        return Ok(None);
    };
    if file_gen != generation(index)? || dims != query.len() {
        return Ok(None);
    }
    let mut q = Vec::with_capacity(dims);
    let qscale = quantize(query, &mut q);
    let size = 12 + dims;
    // Records are read a block at a time and scored in place.
    let per_block = ((1 << 20) / size).max(1);
    let mut block = vec![0u8; per_block * size];
    // A min-heap of the best `want` (score, chunk).
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(Score, i64)>> =
        std::collections::BinaryHeap::with_capacity(want + 1);
    let mut left = count;
    while left > 0 {
        let n = left.min(per_block);
        let bytes = &mut block[..n * size];
        if r.read_exact(bytes).is_err() {
            return Ok(None);
        }
        for rec in bytes.chunks_exact(size) {
            let c = i64::from_le_bytes(rec[0..8].try_into().unwrap_or_default());
            let scale = f32::from_le_bytes(rec[8..12].try_into().unwrap_or_default());
            let score = dot8_bytes(&rec[12..], &q) as f32 * scale * qscale;
            let item = std::cmp::Reverse((Score(score), c));
            if heap.len() < want {
                heap.push(item);
            } else if let Some(min) = heap.peek()
                && item.0.0 > min.0.0
            {
                heap.pop();
                heap.push(item);
            }
        }
        left -= n;
    }
    Ok(Some(heap.into_iter().map(|r| r.0.1).collect()))
}

/// Exact scores straight from the BLOBs (no side file yet, or a sync is changing them).
fn scan_blobs(index: &Index, query: &[f32], top: usize) -> Result<Vec<(i64, f32)>> {
    let mut st = index
        .conn
        .prepare("SELECT c, vector FROM chunks WHERE vector IS NOT NULL")
        .map_err(|e| index.damaged(&e))?;
    let mut rows = st.query([]).map_err(|e| index.damaged(&e))?;
    let mut all = Vec::new();
    while let Some(row) = rows.next().map_err(|e| index.damaged(&e))? {
        let c: i64 = row.get(0).map_err(|e| index.damaged(&e))?;
        let blob = row.get_ref(1).map_err(|e| index.damaged(&e))?;
        if let Some(v) = from_blob(blob.as_blob().unwrap_or(&[]), query.len()) {
            all.push((c, dot(&v, query)));
        }
    }
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.truncate(top);
    Ok(all)
}

/// An f32 ordered totally, for the heap.
#[derive(Clone, Copy, PartialEq)]
struct Score(f32);
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Scale `v` to unit length (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 && n.is_finite() {
        for x in v {
            *x /= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Home;
    use crate::kb::store::{NoteRow, PassageRow, file};

    const DIMS: usize = 8;

    /// A unit vector along axis `i` (mod DIMS), tilted a little towards the next axis.
    fn axis(i: usize) -> Vec<f32> {
        let mut v = vec![0f32; DIMS];
        v[i % DIMS] = 1.0;
        v[(i + 1) % DIMS] = 0.1 * (i / DIMS) as f32;
        normalize(&mut v);
        v
    }

    struct Fixture {
        _t: tempfile::TempDir,
        ix: Index,
    }

    fn index() -> Fixture {
        let t = tempfile::tempdir().unwrap();
        let h = Home {
            dir: t.path().to_owned(),
        };
        let ix = Index::open(&h, "notes", file(&h, "notes"), true).unwrap();
        ix.prepare_sync().unwrap();
        ix.set_meta("dimensions", Some(&DIMS.to_string())).unwrap();
        Fixture { _t: t, ix }
    }

    /// Notes `n0`… each with the unit vector of its number, synced into the side file.
    fn synced_axes(ix: &Index, n: usize) {
        for i in 0..n {
            put(ix, &format!("n{i}"), &axis(i));
        }
        update(ix, DIMS).unwrap();
    }

    /// Note `id` with one passage holding `v`, in a transaction of its own; its chunk ID.
    fn put(ix: &Index, id: &str, v: &[f32]) -> i64 {
        ix.begin().unwrap();
        let n = ix
            .insert_note(&NoteRow {
                id,
                path: id,
                title: id,
                ordering: None,
                hash: id,
                size: 1,
                mtime: 1,
                aliases: "",
                lang: "en",
            })
            .unwrap();
        let c = ix
            .insert_passage(
                n,
                &PassageRow {
                    seq: 0,
                    heading: "",
                    start_line: 1,
                    end_line: 1,
                    text: id,
                    hash: id,
                    vector: None,
                },
            )
            .unwrap();
        ix.set_vector(c, v).unwrap();
        bump(ix).unwrap();
        ix.commit().unwrap();
        c
    }

    fn drop_note(ix: &Index, id: &str) {
        let n: i64 = ix
            .conn
            .query_row("SELECT n FROM notes WHERE id = ?1", [id], |r| r.get(0))
            .unwrap();
        ix.begin().unwrap();
        ix.delete_note(n).unwrap();
        ix.commit().unwrap();
    }

    fn side(ix: &Index) -> Vec<u8> {
        std::fs::read(vectors_file(&ix.path)).unwrap()
    }

    fn head(ix: &Index) -> Head {
        let bytes = side(ix);
        parse_head(bytes[..HEADER].try_into().unwrap())
    }

    /// The nearest chunk to axis `i`, through the side file only (None: it was not used).
    fn via_side_file(ix: &Index, i: usize) -> Option<Vec<i64>> {
        scan_side_file(ix, &axis(i), 1).unwrap()
    }

    #[test]
    fn a_side_file_of_another_base_is_not_used() {
        // Two bases written alike (as many vectors, as many commits), with other vectors.
        let (a, b) = (index(), index());
        let mine: Vec<i64> = (0..40)
            .map(|i| put(&a.ix, &format!("n{i}"), &axis(i)))
            .collect();
        for i in 0..40 {
            put(&b.ix, &format!("n{i}"), &axis(39 - i));
        }
        update(&a.ix, DIMS).unwrap();
        update(&b.ix, DIMS).unwrap();
        assert_eq!(via_side_file(&a.ix, 0).map(|c| c.len()), Some(1));
        // B's file put in the place of A's: passed over, A's own vectors answer.
        std::fs::copy(vectors_file(&b.ix.path), vectors_file(&a.ix.path)).unwrap();
        assert_eq!(via_side_file(&a.ix, 0), None);
        for i in [0, 17, 39] {
            assert_eq!(nearest(&a.ix, &axis(i), 1).unwrap()[0].0, mine[i], "{i}");
        }
        // The next sync writes A's file anew.
        assert_eq!(
            update(&a.ix, DIMS).unwrap(),
            Update::Rewritten { old: false }
        );
        assert_eq!(via_side_file(&a.ix, 5), Some(vec![mine[5]]));
    }

    #[test]
    fn an_edit_appends_what_it_wrote_and_nothing_else() {
        let f = index();
        let ix = &f.ix;
        let cs: Vec<i64> = (0..6)
            .map(|i| put(ix, &format!("n{i}"), &axis(i)))
            .collect();
        assert_eq!(update(ix, DIMS).unwrap(), Update::Rewritten { old: false });
        let before = side(ix);
        let size = 12 + DIMS;
        assert_eq!(before.len(), HEADER + 6 * size);
        // Nothing changed: nothing written.
        assert_eq!(update(ix, DIMS).unwrap(), Update::Current);
        assert_eq!(side(ix), before);
        // One new vector: one record appended, the records before it untouched.
        let c = put(ix, "n6", &axis(6));
        assert_eq!(update(ix, DIMS).unwrap(), Update::Appended(1));
        let after = side(ix);
        assert_eq!(after.len(), HEADER + 7 * size);
        assert_eq!(after[HEADER..before.len()], before[HEADER..]);
        assert_eq!(
            i64::from_le_bytes(after[before.len()..before.len() + 8].try_into().unwrap()),
            c
        );
        assert_eq!(via_side_file(ix, 6), Some(vec![c]));
        assert_eq!(nearest(ix, &axis(3), 1).unwrap()[0].0, cs[3]);
        // A note gone leaves its record, which finds nothing.
        drop_note(ix, "n3");
        assert_eq!(update(ix, DIMS).unwrap(), Update::Appended(0));
        assert_eq!(side(ix).len(), after.len());
        assert_ne!(nearest(ix, &axis(3), 1).unwrap()[0].0, cs[3]);
    }

    #[test]
    fn records_of_passages_gone_are_cleared_out_past_a_fifth() {
        let f = index();
        let ix = &f.ix;
        synced_axes(ix, 100);
        // Edits: each note written again (a new passage; the old one's record is dead).
        let mut rewritten = false;
        for round in 0..40 {
            let id = format!("n{round}");
            drop_note(ix, &id);
            put(ix, &id, &axis(round));
            match update(ix, DIMS).unwrap() {
                Update::Appended(1) => {}
                Update::Rewritten { old: false } => {
                    rewritten = true;
                    break;
                }
                other => panic!("{other:?}"),
            }
            let Head::Current { count, .. } = head(ix) else {
                panic!()
            };
            assert!(count <= 100 + 100 / 5, "{count}");
        }
        assert!(rewritten);
        let Head::Current { count, .. } = head(ix) else {
            panic!()
        };
        assert_eq!(count, 100);
    }

    #[test]
    fn an_append_killed_at_any_point_leaves_a_file_that_searches_right_and_is_mended() {
        let f = index();
        let ix = &f.ix;
        synced_axes(ix, 5);
        let good = side(ix);
        let c = put(ix, "n5", &axis(5));
        // Killed with the new records part written, the header not yet changed: the file is of
        // the old generation (searches scan the BLOBs and find the new note).
        let mut torn = good.clone();
        torn.extend_from_slice(&c.to_le_bytes());
        torn.extend_from_slice(&[1, 2, 3]);
        std::fs::write(vectors_file(&ix.path), &torn).unwrap();
        assert_eq!(via_side_file(ix, 5), None);
        assert_eq!(nearest(ix, &axis(5), 1).unwrap()[0].0, c);
        // The next sync writes the records again over what was torn.
        assert_eq!(update(ix, DIMS).unwrap(), Update::Appended(1));
        let mended = side(ix);
        assert_eq!(mended.len(), good.len() + 12 + DIMS);
        assert_eq!(via_side_file(ix, 5), Some(vec![c]));
        // Killed after the count was raised, before the generation: still the old generation.
        let d = put(ix, "n6", &axis(6));
        let mut half = side(ix);
        let mut rec = Vec::new();
        assert!(record(&mut rec, d, &to_blob(&axis(6)), DIMS));
        half.extend_from_slice(&rec);
        half[AT_COUNT as usize..AT_COUNT as usize + 4].copy_from_slice(&7u32.to_le_bytes());
        std::fs::write(vectors_file(&ix.path), &half).unwrap();
        assert_eq!(via_side_file(ix, 6), None);
        assert_eq!(nearest(ix, &axis(6), 1).unwrap()[0].0, d);
        assert_eq!(update(ix, DIMS).unwrap(), Update::Appended(1));
        assert_eq!(via_side_file(ix, 6), Some(vec![d]));
        // Killed after the file was brought up to date, before the log was emptied: current.
        let e = put(ix, "n7", &axis(7));
        let log_from = ix.meta("vectors_log").unwrap();
        update(ix, DIMS).unwrap();
        ix.set_meta("vectors_log", log_from.as_deref()).unwrap();
        log(ix, e).unwrap();
        let current = side(ix);
        assert_eq!(update(ix, DIMS).unwrap(), Update::Current);
        assert_eq!(side(ix), current);
        // And the log starts afresh: the next edit appends.
        put(ix, "n8", &axis(8));
        assert_eq!(update(ix, DIMS).unwrap(), Update::Appended(1));
    }

    #[test]
    fn a_file_of_another_format_or_an_unlogged_change_is_written_anew() {
        let f = index();
        let ix = &f.ix;
        synced_axes(ix, 3);
        // Format 1: never read, written anew with a notice.
        let mut old = side(ix);
        old[..8].copy_from_slice(MAGIC_1);
        std::fs::write(vectors_file(&ix.path), &old).unwrap();
        assert_eq!(via_side_file(ix, 1), None);
        assert_eq!(update(ix, DIMS).unwrap(), Update::Rewritten { old: true });
        assert!(via_side_file(ix, 1).is_some());
        // A change by a version that does not log (the generation without its mark).
        ix.begin().unwrap();
        let next = (generation(ix).unwrap() + 1).to_string();
        ix.set_meta("vectors", Some(&next)).unwrap();
        ix.commit().unwrap();
        assert_eq!(update(ix, DIMS).unwrap(), Update::Rewritten { old: false });
        // Garbage, a file too short, another size of vectors.
        for bad in [vec![7u8; 100], b"AIKBVEC2".to_vec()] {
            std::fs::write(vectors_file(&ix.path), &bad).unwrap();
            assert_eq!(via_side_file(ix, 1), None);
            assert_eq!(update(ix, DIMS).unwrap(), Update::Rewritten { old: false });
        }
        assert_eq!(
            update(ix, DIMS * 2).unwrap(),
            Update::Rewritten { old: false }
        );
    }

    #[test]
    fn an_index_of_f32s_is_converted_and_given_back_its_room_even_after_a_kill() {
        const WIDE: usize = 256;
        let wide = |i: usize| -> Vec<f32> {
            let mut v: Vec<f32> = (0..WIDE)
                .map(|k| {
                    let mut h = (i * 1_000_003 + k) as u64;
                    h ^= h >> 33;
                    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
                    h ^= h >> 33;
                    (h % 2001) as f32 - 1000.0
                })
                .collect();
            normalize(&mut v);
            v
        };
        let f = index();
        let ix = &f.ix;
        ix.set_meta("dimensions", Some(&WIDE.to_string())).unwrap();
        let cs: Vec<i64> = (0..300)
            .map(|i| put(ix, &format!("n{i}"), &wide(i)))
            .collect();
        update(ix, WIDE).unwrap();
        // As the version before wrote it: f32s, schema 1.
        for (i, c) in cs.iter().enumerate() {
            let f32s: Vec<u8> = wide(i).iter().flat_map(|x| x.to_le_bytes()).collect();
            ix.conn
                .execute(
                    "UPDATE chunks SET vector = ?2 WHERE c = ?1",
                    params![c, f32s],
                )
                .unwrap();
        }
        ix.set_meta("schema", Some("1")).unwrap();
        ix.conn.execute_batch("VACUUM").unwrap();
        let bytes = |ix: &Index| {
            ix.count("PRAGMA page_count").unwrap() * ix.count("PRAGMA page_size").unwrap()
        };
        let before = bytes(ix);
        // Killed after the conversion's commit, before the sync's end: nothing lost, and the
        // next sync gives the room back.
        assert!(ix.migrate_vectors().unwrap());
        let path = ix.path.clone();
        let ix = Index::open(
            &crate::config::Home {
                dir: f._t.path().to_owned(),
            },
            "notes",
            path,
            false,
        )
        .unwrap();
        assert!(!ix.migrate_vectors().unwrap(), "converted once");
        assert_eq!(ix.meta("schema").unwrap().as_deref(), Some("2"));
        assert_eq!(ix.finish_sync(WIDE).unwrap(), None);
        let after = bytes(&ix);
        let saved = (300 * (WIDE * 4 - (WIDE + 4))) as u64;
        assert!(before - after >= saved * 3 / 4, "{before} -> {after}");
        assert_eq!(ix.meta("compact").unwrap(), None);
        for (i, c) in cs.iter().enumerate().step_by(37) {
            let hit = nearest(&ix, &wide(i), 1).unwrap();
            assert_eq!(hit[0].0, *c);
            assert!((hit[0].1 - 1.0).abs() < 0.01, "{}", hit[0].1);
        }
    }

    #[test]
    fn quantized_dot_ranks_like_exact() {
        let a = [0.6f32, 0.8, 0.0];
        let b = [0.8f32, 0.6, 0.0];
        let c = [0.0f32, 0.0, 1.0];
        let (mut qa, mut qb, mut qc) = (Vec::new(), Vec::new(), Vec::new());
        let (sa, sb, sc) = (
            quantize(&a, &mut qa),
            quantize(&b, &mut qb),
            quantize(&c, &mut qc),
        );
        let ab = dot8(&qa, &qb) as f32 * sa * sb;
        let ac = dot8(&qa, &qc) as f32 * sa * sc;
        assert!((ab - dot(&a, &b)).abs() < 0.02, "{ab}");
        assert!(ab > ac);
    }

    #[test]
    fn the_lane_dot_is_the_plain_dot() {
        let a: Vec<i8> = (0..777).map(|i| ((i * 37) % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..777).map(|i| ((i * 11) % 255 - 127) as i8).collect();
        let bytes: Vec<u8> = a.iter().map(|x| *x as u8).collect();
        assert_eq!(dot8_bytes(&bytes, &b), dot8(&a, &b));
    }

    #[test]
    fn blobs_are_a_byte_a_dimension_and_round_trip_within_a_step() {
        let v = vec![0.6f32, -0.25, 3.0e-4, -0.8];
        let blob = to_blob(&v);
        assert_eq!(blob.len(), v.len() + 4);
        let back = from_blob(&blob, v.len()).unwrap();
        for (a, b) in v.iter().zip(&back) {
            assert!((a - b).abs() <= 0.8 / 254.0 + 1e-6, "{a} {b}");
        }
        // Stored again as it was read: the same bytes (an edit that keeps a vector).
        assert_eq!(to_blob(&back), blob);
        // The f32s of an index from before are read as they are, and converted to the same.
        let f32s: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(from_blob(&f32s, v.len()).unwrap(), v);
        assert_eq!(compact_blob(&f32s, v.len()).unwrap().as_ref(), blob);
        // Read back and stored again, for any scale: the same bytes.
        for k in 0..2000 {
            let w: Vec<f32> = (0..5)
                .map(|i| ((k * 7919 + i * 104_729) % 2001) as f32 / 1000.0 - 1.0)
                .map(|x| x * (1.0 + k as f32 / 97.0))
                .collect();
            let once = to_blob(&w);
            assert_eq!(to_blob(&from_blob(&once, 5).unwrap()), once, "{w:?}");
        }
        // Any other length is no vector of that size.
        assert_eq!(from_blob(&blob, v.len() + 1), None);
        assert_eq!(from_blob(&blob[1..], v.len()), None);
        assert_eq!(from_blob(&[], 0), None);
        // A zero vector stays zero.
        assert_eq!(from_blob(&to_blob(&[0.0; 3]), 3).unwrap(), vec![0.0; 3]);
    }
}
