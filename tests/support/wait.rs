//! Waiting and small helpers: poll for a condition, a file or a process to end (all bounded by
//! [`DEADLINE`] or the limit given), signal a process, age a file, and build test data.

use std::fs::{self, File};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use super::DEADLINE;

/// Poll `cond` every 10 ms until it holds; fail the test after [`DEADLINE`].
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Set a file's modification time to `ago` before now.
pub fn age(path: &Path, ago: Duration) {
    let f = File::options().write(true).open(path).expect("open to age");
    f.set_modified(SystemTime::now() - ago).expect("set mtime");
}

/// Send a signal to a process (group, with a negative pid) this test started.
pub fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) takes no pointers; the pid is one of our own children.
    let rc = unsafe { libc::kill(pid, sig) };
    assert!(
        rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH),
        "kill({pid}, {sig}) failed: {}",
        std::io::Error::last_os_error()
    );
}

/// Strings as owned argv.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// Wait (polling) until `path` exists; false after `limit`.
pub fn wait_for_file(path: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    path.exists()
}

/// The pid a fake wrote into `path`, once the whole line is there: a shell's `echo $$ > FILE`
/// creates the file before it writes the number, so a reader polling for the file can find it
/// empty (a flake of the `ai mcp` SIGTERM test, "pid is a number: Empty").
pub fn read_pid(path: &Path) -> u32 {
    let mut text = String::new();
    wait_for("a whole pid line", || {
        text = fs::read_to_string(path).unwrap_or_default();
        text.ends_with('\n')
    });
    text.trim().parse().expect("pid is a number")
}

/// Has the process ended? A zombie counts as ended: it no longer runs, and in a container the
/// reaper of orphans may never collect it.
pub fn process_gone(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            // "pid (comm) S …": the state follows the last ')'.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            matches!(state, Some("Z") | Some("X"))
        }
    }
}

/// Wait until the process has ended; false if it still runs after `limit`. (A kill is
/// asynchronous: the caller's exit can precede the last process dying by a moment.)
pub fn wait_gone(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if process_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    process_gone(pid)
}

/// Read a pipe to its end on a thread (so a hang cannot block the test).
pub fn drain<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Read a pipe on a thread, passing on each piece as it arrives (to see output while the
/// process still runs); the channel ends with the pipe.
pub fn chunks<R: Read + Send + 'static>(
    mut r: R,
) -> (
    std::sync::mpsc::Receiver<Vec<u8>>,
    std::thread::JoinHandle<()>,
) {
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    (rx, reader)
}

/// A deterministic text of exactly `len` bytes with many lines, multi-byte characters and shell
/// metacharacters, and no trailing newline.
pub fn big_text(len: usize) -> String {
    let pattern = "line $(x) `y` 'q' \"d\" ; | & > < \\ é ü 中文 🙂 \t tab\n";
    let mut s = String::with_capacity(len + pattern.len());
    let mut i = 0usize;
    while s.len() < len {
        s.push_str(&format!("{i:07} "));
        s.push_str(pattern);
        i += 1;
    }
    // Cut on a char boundary at or below len, then pad with ASCII to the exact length.
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    while s.len() < len {
        s.push('x');
    }
    if s.ends_with('\n') {
        s.pop();
        s.push('z');
    }
    s
}
