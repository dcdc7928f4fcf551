//! Reading every chat at once, for the commands that look through all of them (`chat search`,
//! `usage`, the monthly budget): each file is read whole into a buffer kept per thread, on as
//! many threads as there are cores, and handed to a function that keeps what it wants. No
//! index: 10,000 chats of a few KiB are read from the page cache in tens of milliseconds.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use super::open::open_regular;
use super::store::Store;
use crate::error::Result;

/// One chat file, as listed.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    /// A chat of the Python tool (`<ID>.json`).
    pub(crate) legacy: bool,
    /// Last modified: when the chat was last used.
    pub(crate) mtime: SystemTime,
}

/// What a scan found.
#[derive(Debug)]
pub(crate) struct Scanned<T> {
    pub(crate) found: Vec<(Entry, T)>,
    /// Chat files read.
    pub(crate) read: usize,
    /// Chat files that could not be read (not regular files, I/O errors); the function never
    /// saw them.
    pub(crate) unreadable: usize,
}

/// Read every chat changed at or after `since` (all when `None`) and keep what `keep` returns
/// for it. `keep` gets the entry and the file's bytes; it runs on several threads at once.
pub(crate) fn scan<T: Send>(
    store: &Store,
    since: Option<SystemTime>,
    keep: &(dyn Fn(&Entry, &[u8]) -> Option<T> + Sync),
) -> Result<Scanned<T>> {
    let entries = store.entries()?;
    let next = AtomicUsize::new(0);
    let read = AtomicUsize::new(0);
    let unreadable = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 8)
        .min(entries.len().div_ceil(64).max(1));
    let work = || {
        let mut buf = Vec::new();
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((id, path, legacy)) = entries.get(i) else {
                break;
            };
            let file = match open_regular(path, false) {
                Ok(Some(f)) => f,
                // Deleted while we looked: it is not there.
                Ok(None) => continue,
                Err(_) => {
                    unreadable.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
            let Ok(mtime) = file.metadata().and_then(|m| m.modified()) else {
                unreadable.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            if since.is_some_and(|s| mtime < s) {
                continue;
            }
            buf.clear();
            if (&file).read_to_end(&mut buf).is_err() {
                unreadable.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            read.fetch_add(1, Ordering::Relaxed);
            let entry = Entry {
                id: id.clone(),
                path: path.clone(),
                legacy: *legacy,
                mtime,
            };
            if let Some(t) = keep(&entry, &buf) {
                mine.push((entry, t));
            }
        }
        if let Ok(mut all) = found.lock() {
            all.append(&mut mine);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    // Most recently used first, then by ID: the same order whatever the threads did.
    found.sort_by(|a, b| b.0.mtime.cmp(&a.0.mtime).then_with(|| a.0.id.cmp(&b.0.id)));
    Ok(Scanned {
        found,
        read: read.into_inner(),
        unreadable: unreadable.into_inner(),
    })
}

/// Each line of a chat file (without its newline), with its index; blank lines skipped.
pub(crate) fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut at = 0;
    let mut n = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
            let line = &bytes[at..end];
            let no = n;
            at = end + 1;
            n += 1;
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Some((no, line));
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_skip_blanks_and_keep_numbers() {
        let got: Vec<(usize, &[u8])> = lines(b"a\n\nb\n  \nc").collect();
        assert_eq!(got, vec![(0, &b"a"[..]), (2, &b"b"[..]), (4, &b"c"[..])]);
        assert_eq!(lines(b"").count(), 0);
        assert_eq!(lines(b"x\n").count(), 1);
    }
}
