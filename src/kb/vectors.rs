//! Vector search without decoding rows: beside `NAME.sqlite`, `NAME.vectors` holds every
//! embedded chunk's vector quantized to 8 bits, one fixed-size record after another, so a query
//! streams through about a quarter of the bytes the f32 BLOBs take and keeps only a small heap.
//! The best candidates are then scored exactly from the BLOBs in SQLite, which stay the truth.
//!
//! The file carries the index's vector generation (`meta.vectors`, bumped by every commit that
//! changes a vector); a file of another generation is not used (the search scans the BLOBs
//! instead) and is rebuilt at the end of a sync.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use rusqlite::params;

use super::store::sqlite::Sqlite as Index;
use super::store::{Kind, Store, StoreResult as Result, vectors_file};

const MAGIC: &[u8; 8] = b"AIKBVEC1";
const HEADER: usize = 8 + 8 + 4 + 4;

/// The index's current vector generation.
pub(crate) fn generation(index: &Index) -> Result<u64> {
    Ok(index
        .meta("vectors")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// The side file, when it is a regular file. Opened without blocking: a FIFO or a device in
/// its place is passed over (the search scans the BLOBs), never waited on.
fn open_side_file(index: &Index) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(vectors_file(&index.path))
        .ok()?;
    f.metadata().ok()?.is_file().then_some(f)
}

/// Whether the side file holds the index's current vectors (else a sync rebuilds it).
pub(crate) fn is_current(index: &Index) -> Result<bool> {
    let Some(mut f) = open_side_file(index) else {
        return Ok(false);
    };
    let mut head = [0u8; HEADER];
    if f.read_exact(&mut head).is_err() || &head[..8] != MAGIC {
        return Ok(false);
    }
    let file_gen = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
    Ok(file_gen == generation(index)?)
}

/// Mark the vectors changed (inside the caller's transaction).
pub(crate) fn bump(index: &Index) -> Result<()> {
    let next = generation(index)? + 1;
    index.set_meta("vectors", Some(&next.to_string()))
}

/// A vector as stored in SQLite: little-endian f32s.
pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

pub(crate) fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Quantize: the scale (largest magnitude / 127) and the 8-bit components.
fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    out.clear();
    if max == 0.0 || !max.is_finite() {
        out.resize(v.len(), 0);
        return 0.0;
    }
    let k = 127.0 / max;
    out.extend(v.iter().map(|x| (x * k).round().clamp(-127.0, 127.0) as i8));
    max / 127.0
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

/// Write the side file from the BLOBs (to a temporary file, then renamed over).
pub(crate) fn rebuild(index: &Index, dims: usize) -> Result<()> {
    let target = vectors_file(&index.path);
    let dir = target.parent().unwrap_or(Path::new("."));
    let stem = target
        .file_name()
        .map_or_else(|| "vectors".into(), |n| n.to_string_lossy().into_owned());
    let (tmp, tmp_file) = crate::config::create_temp(dir, &stem, false)
        .map_err(|e| index.io_error("create", &target, &e))?;
    let result = (|| -> Result<()> {
        let generation = generation(index)?;
        let count = index.count("SELECT count(*) FROM chunks WHERE vector IS NOT NULL")?;
        let mut w = BufWriter::with_capacity(1 << 16, &tmp_file);
        let io = |e| index.io_error("write", &tmp, &e);
        w.write_all(MAGIC).map_err(io)?;
        w.write_all(&generation.to_le_bytes()).map_err(io)?;
        w.write_all(&(dims as u32).to_le_bytes()).map_err(io)?;
        w.write_all(&(count as u32).to_le_bytes()).map_err(io)?;
        let mut st = index
            .conn
            .prepare("SELECT c, vector FROM chunks WHERE vector IS NOT NULL ORDER BY c")
            .map_err(|e| index.damaged(&e))?;
        let mut rows = st.query([]).map_err(|e| index.damaged(&e))?;
        let mut q = Vec::with_capacity(dims);
        let mut written = 0u64;
        while let Some(row) = rows.next().map_err(|e| index.damaged(&e))? {
            let c: i64 = row.get(0).map_err(|e| index.damaged(&e))?;
            let blob = row.get_ref(1).map_err(|e| index.damaged(&e))?;
            let v = from_blob(blob.as_blob().unwrap_or(&[]));
            if v.len() != dims {
                continue;
            }
            let scale = quantize(&v, &mut q);
            w.write_all(&c.to_le_bytes()).map_err(io)?;
            w.write_all(&scale.to_le_bytes()).map_err(io)?;
            // SAFETY-free: i8 to u8 bytes one by one.
            let bytes: Vec<u8> = q.iter().map(|x| *x as u8).collect();
            w.write_all(&bytes).map_err(io)?;
            written += 1;
        }
        w.flush().map_err(io)?;
        drop(w);
        if written != count {
            // Rows of another length were skipped: say how many there really are.
            use std::io::{Seek, SeekFrom};
            let mut f = &tmp_file;
            f.seek(SeekFrom::Start(20)).map_err(io)?;
            f.write_all(&(written as u32).to_le_bytes()).map_err(io)?;
        }
        std::fs::rename(&tmp, &target).map_err(|e| index.io_error("rename", &target, &e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The `top` chunks most similar to `query` (normalized), exactly scored, best first.
pub(crate) fn nearest(index: &Index, query: &[f32], top: usize) -> Result<Vec<(i64, f32)>> {
    if top == 0 {
        return Ok(Vec::new());
    }
    let candidates = match scan_side_file(index, query, top * 4 + 16)? {
        Some(c) => c,
        None => return scan_blobs(index, query, top),
    };
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
        if let Some(b) = blob {
            let v = from_blob(&b);
            if v.len() == query.len() {
                scored.push((c, dot(&v, query)));
            }
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(top);
    Ok(scored)
}

/// Candidates from the side file; `None` when it is missing or of another generation.
fn scan_side_file(index: &Index, query: &[f32], want: usize) -> Result<Option<Vec<i64>>> {
    let Some(f) = open_side_file(index) else {
        return Ok(None);
    };
    let mut r = BufReader::with_capacity(1 << 18, f);
    let mut head = [0u8; HEADER];
    if r.read_exact(&mut head).is_err() || &head[..8] != MAGIC {
        return Ok(None);
    }
    let file_gen = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
    let dims = u32::from_le_bytes(head[16..20].try_into().unwrap_or_default()) as usize;
    let count = u32::from_le_bytes(head[20..24].try_into().unwrap_or_default()) as usize;
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
        let v = from_blob(blob.as_blob().unwrap_or(&[]));
        if v.len() == query.len() {
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
    fn blobs_round_trip() {
        let v = vec![1.5f32, -0.25, 3.0e-8];
        assert_eq!(from_blob(&to_blob(&v)), v);
    }
}
