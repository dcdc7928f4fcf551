//! STUB until the kbtext branch lands.
use super::chunk::Kind;
use crate::error::Result;
use std::path::{Path, PathBuf};
pub(crate) struct Entry {
    pub(crate) rel: String,
    pub(crate) path: PathBuf,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) kind: Kind,
}
#[derive(Default)]
pub(crate) struct Skipped {
    pub(crate) hidden: u64,
    pub(crate) ignored: u64,
    pub(crate) excluded: u64,
    pub(crate) unsupported: u64,
    pub(crate) large: u64,
}
pub(crate) struct Filter;
impl Filter {
    pub(crate) fn new(_include: &[String], _exclude: &[String]) -> Result<Filter> {
        Ok(Filter)
    }
}
pub(crate) const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
pub(crate) fn is_binary(head: &[u8]) -> bool {
    head.contains(&0)
}
pub(crate) fn scan(root: &Path, _f: &Filter) -> Result<(Vec<Entry>, Skipped)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap().flatten() {
        let p = e.path();
        let m = std::fs::metadata(&p).unwrap();
        if m.is_file() && p.extension().is_some_and(|x| x == "md") {
            out.push(Entry {
                rel: e.file_name().to_string_lossy().into_owned(),
                path: p,
                size: m.len(),
                mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                kind: Kind::Markdown,
            });
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((out, Skipped::default()))
}
