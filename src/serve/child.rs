//! One `ai` process per request, supervised: its stdout read line by line as it comes, what it
//! keeps in memory bounded, its run bounded in time, and the client watched, so that a client
//! that goes away stops the call as Ctrl+C would (the child saves its partial reply, marked
//! interrupted). Nothing a child does can take the server down.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use crate::signal::ChildGroup;

/// How long a stopped child may take to save what it has before it is killed.
const GRACE: Duration = Duration::from_secs(10);
/// How long to wait for the end of its output once it has exited (a process it started may
/// still hold the pipe open).
const AFTER_EXIT: Duration = Duration::from_secs(2);
/// Lines of output waiting for the caller at most.
const QUEUE: usize = 256;
/// How the done line of `ai --json-stream` starts.
const DONE: &[u8] = br#"{"type":"done""#;
/// The longest line kept from a child being stopped (an error line is short).
const LATE_LINE: usize = 16 * 1024;
/// How often the client is checked for having gone.
const WATCH: Duration = Duration::from_millis(200);

enum Event {
    /// One line of stdout, with its newline (the last one may lack it).
    Line(Vec<u8>),
    /// stdout ended.
    End,
    /// A line of stdout, or stderr, is longer than the bound.
    TooLong,
    /// The client closed the connection.
    Gone,
}

/// What the caller does after a line.
pub(crate) enum Flow {
    Go,
    /// The client is gone (a write failed): stop the child.
    Gone,
    /// The caller holds too much already: stop the child.
    TooLarge,
}

/// How a supervised call ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// It ended by itself, with this exit code (128 + the signal when killed by one).
    Exited(i32),
    /// The client went away; the child was stopped.
    Gone,
    /// It ran past the call timeout; the child was stopped.
    TimedOut,
    /// Its output went past the bound; the child was stopped.
    TooLarge,
}

pub(crate) struct Outcome {
    pub(crate) ending: Ending,
    /// What it wrote on stderr (bounded).
    pub(crate) stderr: String,
    /// The lines of stdout it wrote while being stopped (its error line, naming its chat),
    /// bounded: not passed to the caller's `on_line`.
    pub(crate) late: Vec<Vec<u8>>,
}

/// A started child.
pub(crate) struct Running {
    child: Child,
    _group: ChildGroup,
    events: Receiver<Event>,
    tx: SyncSender<Event>,
    stderr: Receiver<Vec<u8>>,
}

/// Start `ai ARGS` (this very program), `stdin` on its stdin, in a process group of its own,
/// so that a Ctrl+C at the server's terminal reaches it once, through the server (which
/// passes it on as it does to any backend). `face` (`serve`, `mcp`) tells it that nobody can
/// answer a question before a tool runs (`tools::approve`).
pub(crate) fn start(
    exe: &Path,
    face: &'static str,
    args: &[String],
    stdin: Option<String>,
    max_output: usize,
) -> io::Result<Running> {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env(crate::tools::approve::FACE_VAR, face)
        // The server's secret is no child's business, nor its backends' (agent CLIs and the
        // commands they run): it could end up in their logs, or be printed on request.
        .env_remove("AI_CLI_SERVER_TOKEN")
        .process_group(0)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Query embeddings from the local model this server keeps loaded.
    if let Some(socket) = crate::kb::local::service::socket() {
        cmd.env(crate::kb::local::service::ENV, socket);
    }
    let (mut child, group) = ChildGroup::spawn(&mut cmd)?;
    // Bounded: a client slow to read holds the child back rather than filling memory.
    let (tx, events) = mpsc::sync_channel(QUEUE);
    let (err_tx, stderr) = mpsc::channel();
    let started = (|| -> io::Result<()> {
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            std::thread::Builder::new()
                .name("serve-stdin".into())
                .spawn(move || {
                    let _ = pipe.write_all(text.as_bytes());
                })?;
        }
        if let Some(out) = child.stdout.take() {
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("serve-stdout".into())
                .spawn(move || read_lines(out, &tx, max_output))?;
        }
        if let Some(err) = child.stderr.take() {
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("serve-stderr".into())
                .spawn(move || {
                    let _ = err_tx.send(read_bounded(err, &tx, max_output));
                })?;
        }
        Ok(())
    })();
    if let Err(e) = started {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e);
    }
    Ok(Running {
        child,
        _group: group,
        events,
        tx,
        stderr,
    })
}

/// Pass stdout on line by line; a line longer than `max` ends the reading (the rest is
/// drained unread so the child never blocks on a full pipe). The `--json-stream` done line is
/// not bounded: it comes after the reply was saved, which its pieces carried already, so
/// refusing it would report a saved reply as failed.
fn read_lines(mut out: impl Read, tx: &SyncSender<Event>, max: usize) {
    let mut line = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let mut listening = true;
    let mut over = false;
    loop {
        let n = match out.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if over || !listening {
            continue;
        }
        for piece in chunk[..n].split_inclusive(|b| *b == b'\n') {
            line.extend_from_slice(piece);
            if line.len() > max && !line.starts_with(DONE) {
                over = true;
                line = Vec::new();
                listening = tx.send(Event::TooLong).is_ok();
                break;
            }
            if line.ends_with(b"\n") {
                listening = tx.send(Event::Line(std::mem::take(&mut line))).is_ok();
                if !listening {
                    break;
                }
            }
        }
    }
    if listening && !over && !line.is_empty() {
        let _ = tx.send(Event::Line(line));
    }
    let _ = tx.send(Event::End);
}

/// Keep at most `max` bytes of stderr; past that, say so once and drain the rest.
fn read_bounded(mut err: impl Read, tx: &SyncSender<Event>, max: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let mut over = false;
    loop {
        match err.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) if !over => {
                if kept.len() + n > max {
                    over = true;
                    let _ = tx.send(Event::TooLong);
                } else {
                    kept.extend_from_slice(&chunk[..n]);
                }
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    kept
}

/// Reads the client's side of the connection while a call runs: the end of it (or an error)
/// means the client is gone.
fn watch(mut conn: TcpStream, tx: SyncSender<Event>, done: Arc<AtomicBool>) {
    if conn.set_read_timeout(Some(WATCH)).is_err() {
        return;
    }
    let mut sink = [0u8; 1024];
    while !done.load(Ordering::SeqCst) {
        match conn.read(&mut sink) {
            Ok(0) => {
                let _ = tx.send(Event::Gone);
                return;
            }
            // More bytes (a pipelined request) are not served on this connection.
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(_) => {
                let _ = tx.send(Event::Gone);
                return;
            }
        }
    }
}

/// Stops a supervised call from another thread, as a client gone does (SIGINT: the child
/// saves what it has, marked interrupted). `ai mcp` uses it for a request the client cancels.
#[derive(Clone)]
pub(crate) struct Stopper(SyncSender<Event>);

impl Stopper {
    pub(crate) fn stop(&self) {
        // Fails only once the call has ended: nothing left to stop.
        let _ = self.0.send(Event::Gone);
    }
}

impl Running {
    /// A handle that stops this call from another thread.
    pub(crate) fn stopper(&self) -> Stopper {
        Stopper(self.tx.clone())
    }

    /// Run it to its end: each line of stdout goes to `on_line`; the child is stopped when the
    /// client goes away (`client` is watched, and `on_line` reports failed writes), when it
    /// runs past `timeout`, or when its output goes past the bound.
    pub(crate) fn supervise(
        mut self,
        client: Option<&TcpStream>,
        timeout: Duration,
        on_line: &mut dyn FnMut(&[u8]) -> Flow,
    ) -> Outcome {
        let done = Arc::new(AtomicBool::new(false));
        if let Some(conn) = client.and_then(|c| c.try_clone().ok()) {
            let (tx, flag) = (self.tx.clone(), Arc::clone(&done));
            // Without a watcher (no thread to be had) a streamed call still notices a client
            // gone when writing to it.
            let _ = std::thread::Builder::new()
                .name("serve-watch".into())
                .spawn(move || watch(conn, tx, flag));
        }
        // A timeout too large to be a point in time (`--timeout 1e19`): none, in effect.
        let now = Instant::now();
        let deadline = now
            .checked_add(timeout)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut ended = false;
        let mut exited: Option<(i32, Instant)> = None;
        let mut late = Vec::new();
        let ending = loop {
            if exited.is_none()
                && let Ok(Some(status)) = self.child.try_wait()
            {
                exited = Some((code_of(status), Instant::now()));
            }
            if let Some((code, at)) = exited
                && (ended || at.elapsed() > AFTER_EXIT)
            {
                break Ending::Exited(code);
            }
            let now = Instant::now();
            if now >= deadline {
                late = self.stop();
                break Ending::TimedOut;
            }
            if ended {
                // stdout is done; only the exit is awaited.
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            let wait = (deadline - now).min(Duration::from_millis(100));
            match self.events.recv_timeout(wait) {
                Ok(Event::Line(line)) => match on_line(&line) {
                    Flow::Go => {}
                    Flow::Gone => {
                        late = self.stop();
                        break Ending::Gone;
                    }
                    Flow::TooLarge => {
                        late = self.stop();
                        break Ending::TooLarge;
                    }
                },
                Ok(Event::End) => ended = true,
                Ok(Event::TooLong) => {
                    late = self.stop();
                    break Ending::TooLarge;
                }
                Ok(Event::Gone) => {
                    late = self.stop();
                    break Ending::Gone;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => ended = true,
            }
        };
        done.store(true, Ordering::SeqCst);
        let wait = if matches!(ending, Ending::Exited(_)) {
            AFTER_EXIT
        } else {
            Duration::from_millis(200)
        };
        let stderr = self.stderr.recv_timeout(wait).unwrap_or_default();
        Outcome {
            ending,
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            late,
        }
    }

    /// Stop it as Ctrl+C would (SIGINT: it stops its backend and saves what it has), and kill
    /// it if it has not ended after [`GRACE`]. The short lines it writes meanwhile are kept
    /// (its error line among them); the rest are dropped.
    fn stop(&mut self) -> Vec<Vec<u8>> {
        let mut late = Vec::new();
        let Ok(pid) = i32::try_from(self.child.id()) else {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return late;
        };
        // SAFETY: kill(2) takes no pointers; the child is not reaped yet, so the pid is ours.
        unsafe {
            libc::kill(pid, libc::SIGINT);
        }
        let until = Instant::now() + GRACE;
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            if Instant::now() >= until {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            // Its output is read meanwhile, so it never blocks writing.
            if let Ok(Event::Line(line)) = self.events.recv_timeout(Duration::from_millis(20))
                && line.len() <= LATE_LINE
                && late.len() < QUEUE
            {
                late.push(line);
            }
        }
        // What it wrote just before it ended.
        let until = Instant::now() + Duration::from_millis(500);
        while let Ok(Event::Line(line)) = self.events.recv_timeout(Duration::from_millis(50)) {
            if line.len() <= LATE_LINE && late.len() < QUEUE {
                late.push(line);
            }
            if Instant::now() >= until {
                break;
            }
        }
        late
    }
}

/// The exit code, or 128 + the signal that ended it.
fn code_of(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let (tx, rx) = mpsc::sync_channel(1000);
        read_lines(input, &tx, max);
        drop(tx);
        rx.iter()
            .map(|e| match e {
                Event::Line(l) => String::from_utf8(l).unwrap(),
                Event::End => "END".into(),
                Event::TooLong => "TOO LONG".into(),
                Event::Gone => "GONE".into(),
            })
            .collect()
    }

    #[test]
    fn stdout_is_split_into_bounded_lines() {
        assert_eq!(lines(b"a\nbc\n\nd", 10), ["a\n", "bc\n", "\n", "d", "END"]);
        assert_eq!(lines(b"", 10), ["END"]);
        assert_eq!(
            lines(b"short\n0123456789ab\nmore\n", 10),
            ["short\n", "TOO LONG", "END"]
        );
        let big = vec![b'x'; 100_000];
        assert_eq!(lines(&big, 50_000), ["TOO LONG", "END"]);
        // The done line is not bounded (the reply it repeats is saved already).
        let done = format!("{{\"type\":\"done\",\"reply\":\"{}\"}}\n", "y".repeat(100));
        let got = lines(format!("a\n{done}").as_bytes(), 20);
        assert_eq!(got, ["a\n", done.as_str(), "END"]);
        let other = format!("{{\"type\":\"delta\",\"text\":\"{}\"}}\n", "y".repeat(100));
        assert_eq!(lines(other.as_bytes(), 20), ["TOO LONG", "END"]);
    }

    #[test]
    fn stderr_is_bounded() {
        let (tx, rx) = mpsc::sync_channel(10);
        assert_eq!(read_bounded(&b"abc"[..], &tx, 10), b"abc");
        assert!(rx.try_recv().is_err());
        assert_eq!(read_bounded(&[b'e'; 100][..], &tx, 10), b"");
        assert!(matches!(rx.try_recv(), Ok(Event::TooLong)));
    }
}
