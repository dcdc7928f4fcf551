//! Whole-file replacement (temp file, sync, rename) and the temp files it leaves behind when a
//! writer is killed part-way.
//!
//! Every temp file is named `.<stem>.<pid>.<n>.tmp` next to the file it replaces, so its
//! writer can be told apart (older versions wrote `.<stem>.<pid>.tmp`; both are recognised).

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Create a fresh temp file for `stem` in `dir` (mode 0600), opened to write, and with
/// `read_append` to read and append. A file already there with our name was left by an earlier
/// process that had our PID (no live writer can own it): it is removed and the name taken.
pub(crate) fn create_temp(
    dir: &Path,
    stem: &str,
    read_append: bool,
) -> std::io::Result<(PathBuf, File)> {
    let tmp = temp_path(dir, stem);
    let open = || {
        let mut o = fs::OpenOptions::new();
        if read_append {
            o.read(true).append(true);
        } else {
            o.write(true);
        }
        o.create_new(true).mode(0o600).open(&tmp)
    };
    match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            fs::remove_file(&tmp)?;
            open().map(|f| (tmp.clone(), f))
        }
        other => other.map(|f| (tmp.clone(), f)),
    }
}

/// A temp file older than this is a leftover even if its PID now names a live process (PIDs
/// are reused); no write of ours takes that long.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// A fresh temp name for `stem` in `dir`, unique within this process (threads of `several`
/// write `last_chat` at the same time) and across processes (the PID).
fn temp_path(dir: &Path, stem: &str) -> PathBuf {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{stem}.{}.{n}.tmp", std::process::id()))
}

/// The stem and PID of a temp file name written by [`temp_path`] (or an older version).
pub(crate) fn parse_temp_name(name: &str) -> Option<(&str, u32)> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    // `<stem>.<pid>` or `<stem>.<pid>.<n>`; the stem may hold dots (`config.json`).
    let (rest, last) = inner.rsplit_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(last) {
        return None;
    }
    if let Some((stem, pid)) = rest.rsplit_once('.')
        && digits(pid)
        && !stem.is_empty()
    {
        return Some((stem, pid.parse().ok()?));
    }
    (!rest.is_empty()).then_some((rest, last.parse().ok()?))
}

/// Remove leftover temp files in `dir` whose stem `wanted` accepts and whose writer is gone:
/// its PID is not running, or the file is old and nobody holds a lock on it. Returns how many
/// were removed. Only regular files are touched (never followed links or FIFOs).
pub(crate) fn remove_stale_temps(dir: &Path, wanted: impl Fn(&str) -> bool) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some((stem, pid)) = parse_temp_name(name) else {
            continue;
        };
        if !wanted(stem) || pid == std::process::id() {
            continue;
        }
        let path = entry.path();
        if is_stale(&path, pid) && fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn is_stale(path: &Path, pid: u32) -> bool {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.file_type().is_file() {
        return false;
    }
    if !process_alive(pid) {
        return true;
    }
    let old = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age > STALE_AFTER);
    // Chat rewrites hold a lock on their temp file while they write it.
    old && fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .is_ok_and(|f| f.try_lock().is_ok())
}

fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Replace `path` with `bytes` so a reader sees the old file or the new one, never a mix, and
/// the new one survives a power cut once this returns. A symbolic link is written through: the
/// file it points to is replaced (next to itself, mode 0600 like every save), and the link stays
/// (dotfile managers such as stow or home-manager link config files).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_file(path, bytes, true)
}

/// Like [`write_atomic`] without the syncs: for small state a crash may lose (`last_chat`).
pub(crate) fn write_atomic_unsynced(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_file(path, bytes, false)
}

/// Where a chain of symbolic links at `path` ends (at most 40 links, as the kernel allows).
fn resolve_links(path: &Path) -> PathBuf {
    let mut at = path.to_owned();
    for _ in 0..40 {
        match fs::read_link(&at) {
            Ok(target) if target.is_absolute() => at = target,
            Ok(target) => at = at.parent().unwrap_or(Path::new(".")).join(target),
            Err(_) => break,
        }
    }
    at
}

fn replace_file(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let target = resolve_links(path);
    let path = target.as_path();
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, mut file) =
        create_temp(dir, &name, false).map_err(|e| Error::io("write", path, e))?;
    let result = (|| {
        file.write_all(bytes)?;
        if durable {
            file.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        // Make the rename itself durable.
        if durable && let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    let result = result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io("write", path, e)
    });
    if result.is_ok() {
        remove_stale_temps(dir, |stem| stem == name);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leftover of an earlier process that had our PID is not taken for a live writer.
    #[test]
    fn a_leftover_with_our_pid_does_not_block_a_temp_file() {
        let dir = std::env::temp_dir().join(format!("ai-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let next = SEQ.load(Ordering::Relaxed);
        for n in next..next + 50 {
            fs::write(
                dir.join(format!(".X.{}.{n}.tmp", std::process::id())),
                "old",
            )
            .unwrap();
        }
        let (path, _file) = create_temp(&dir, "X", false).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_names() {
        assert_eq!(parse_temp_name(".K7Q.123.tmp"), Some(("K7Q", 123)));
        assert_eq!(parse_temp_name(".K7Q.123.4.tmp"), Some(("K7Q", 123)));
        assert_eq!(
            parse_temp_name(".config.json.9.0.tmp"),
            Some(("config.json", 9))
        );
        assert_eq!(
            parse_temp_name(".config.json.9.tmp"),
            Some(("config.json", 9))
        );
        assert_eq!(
            parse_temp_name(".last_chat.77.tmp"),
            Some(("last_chat", 77))
        );
        assert_eq!(parse_temp_name("K7Q.jsonl"), None);
        assert_eq!(parse_temp_name(".K7Q.x.tmp"), None);
        assert_eq!(parse_temp_name("..1.tmp"), None);
        let t = temp_path(Path::new("/d"), "ABC");
        let n = t.file_name().unwrap().to_str().unwrap();
        assert_eq!(parse_temp_name(n), Some(("ABC", std::process::id())));
    }
}
