//! A running `ai` under the hang guard. It starts in a process group of its own; a watchdog
//! thread kills it, its group and every process it started if it still runs after
//! [`DEADLINE`], and the test then fails naming the command. No test can hang on `ai`: not on
//! its exit, and not on a pipe a leftover grandchild holds open.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::http::assert_no_leak;
use super::run::Out;

/// How long one `ai` may run, and how long any wait on a condition may take, before the test
/// fails. Generous: only a hang or a broken build gets near it, so it never makes a test flaky
/// (60 s was reached by a 200-note PostgreSQL sync at load average 15-20 on 2 cores).
pub const DEADLINE: Duration = Duration::from_secs(180);

/// A running `ai`. Dropped before it was waited for, it is killed with all it started. It
/// derefs to its [`Child`] for pipes (`proc.stdout.take()`) and the pid.
pub struct Proc {
    child: Child,
    guard: Watchdog,
    status: Option<ExitStatus>,
    call: Call,
}

/// What a [`Proc`] knows about its call.
pub(super) struct Call {
    /// The program and its arguments, for failure messages.
    pub label: String,
    /// The arguments alone, for [`Out`].
    pub args: Vec<String>,
    pub deadline: Duration,
    /// Where stdout and stderr are captured, unless the test asked for pipes.
    pub out_path: Option<PathBuf>,
    pub err_path: Option<PathBuf>,
    /// `AI_CLI_HOME`, checked for the key when the call ends.
    pub home: PathBuf,
}

impl Proc {
    pub(super) fn start(
        cmd: &mut Command,
        stdin_bytes: Option<Vec<u8>>,
        call: Call,
    ) -> io::Result<Proc> {
        let mut child = cmd.process_group(0).spawn()?;
        let guard = Watchdog::start(child.id(), call.deadline, call.label.clone());
        if let Some(bytes) = stdin_bytes {
            let mut pipe = child.stdin.take().expect("stdin is a pipe");
            // Not joined: a child that never reads its stdin must not block the test.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        Ok(Proc {
            child,
            guard,
            status: None,
            call,
        })
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// What it has written to stderr so far (when stderr goes to a file).
    pub fn stderr_now(&self) -> String {
        self.call
            .err_path
            .as_ref()
            .map(|p| fs::read_to_string(p).unwrap_or_default())
            .unwrap_or_default()
    }

    /// What it has written to stdout so far (when stdout goes to a file).
    pub fn stdout_now(&self) -> String {
        self.call
            .out_path
            .as_ref()
            .map(|p| fs::read_to_string(p).unwrap_or_default())
            .unwrap_or_default()
    }

    /// Does it still run? (Never reaps it, so the guard cannot hit a recycled pid.)
    pub fn running(&mut self) -> bool {
        self.status.is_none() && !exited(self.child.id(), false)
    }

    /// SIGKILL to `ai` alone, as `kill -KILL PID`; what it started lives on.
    pub fn kill(&mut self) {
        if self.status.is_none() {
            self.child.kill().expect("kill ai");
        }
    }

    /// Act as if its deadline had passed now: the guard kills it and all it started (for
    /// testing the guard without waiting for it).
    pub fn expire(&mut self) {
        if let Some(tx) = &self.guard.stop {
            let _ = tx.send(());
        }
    }

    /// Wait for it to exit; fails the test when the hang guard had to kill it.
    #[track_caller]
    pub fn wait_status(&mut self) -> ExitStatus {
        if let Some(status) = self.status {
            return status;
        }
        // Wait without reaping: while the pid is a zombie it cannot be recycled, so the
        // watchdog, stopped next, never signals a stranger.
        exited(self.child.id(), true);
        let fired = self.guard.stop();
        let status = self.child.wait().expect("wait for ai");
        self.status = Some(status);
        assert!(
            !fired,
            "{} still ran after {:?}: the hang guard killed it and all it started",
            self.call.label, self.call.deadline
        );
        status
    }

    /// As [`Proc::wait_status`], but the test fails (and it is killed with all it started) when
    /// it still runs `limit` from now: for a test that bounds how soon `ai` must stop, more
    /// tightly than the hang guard does.
    #[track_caller]
    pub fn wait_status_within(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        while self.running() {
            assert!(
                start.elapsed() < limit,
                "{} still ran {limit:?} after the test began waiting for it",
                self.call.label
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        self.wait_status()
    }

    /// Wait for it to exit; its status and what it printed (into files, or still unread on
    /// pipes the test asked for). The key must have leaked nowhere.
    #[track_caller]
    pub fn finish(mut self) -> Output {
        let pipes = (self.child.stdout.take(), self.child.stderr.take());
        let readers = (pipes.0.map(read_on_thread), pipes.1.map(read_on_thread));
        let status = self.wait_status();
        let call = &self.call;
        let read = |path: &Option<PathBuf>, reader: Option<Receiver<Vec<u8>>>| match reader {
            // A process it left behind may hold the pipe open: bounded too.
            Some(r) => r.recv_timeout(call.deadline).unwrap_or_else(|_| {
                panic!(
                    "{} exited, but what it started still held its output open after {:?}",
                    call.label, call.deadline
                )
            }),
            None => path
                .as_ref()
                .map(|p| fs::read(p).expect("read captured output"))
                .unwrap_or_default(),
        };
        let output = Output {
            status,
            stdout: read(&self.call.out_path, readers.0),
            stderr: read(&self.call.err_path, readers.1),
        };
        assert_no_leak(&self.call.label, &output, &self.call.home);
        output
    }

    /// Wait for it to exit (failing the test after [`DEADLINE`]).
    #[track_caller]
    pub fn wait(self) -> Out {
        let args = self.call.args.clone();
        Out::new(args, self.finish())
    }

    /// As `Child::wait_with_output`, under the guard.
    pub fn wait_with_output(self) -> io::Result<Output> {
        Ok(self.finish())
    }
}

impl std::ops::Deref for Proc {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl std::ops::DerefMut for Proc {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.status.is_none() {
            // Not waited for (the test is done with it, or failed): end everything it started.
            kill_tree(self.child.id());
            self.guard.stop();
            let _ = self.child.wait();
        }
    }
}

/// Read a pipe to its end on a thread; the bytes arrive on the channel.
fn read_on_thread<R: Read + Send + 'static>(mut r: R) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// Has child `pid` exited? With `block`, wait until it has. Never reaps it.
fn exited(pid: u32, block: bool) -> bool {
    let flags = libc::WEXITED | libc::WNOWAIT | if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: waitid writes only into the zeroed siginfo_t we own.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(libc::P_PID, pid, &mut info, flags) };
        if rc == 0 {
            // SAFETY: filled in by waitid (0 when nothing has exited yet).
            return unsafe { info.si_pid() } != 0;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            // Already reaped (ECHILD): it has exited.
            return true;
        }
    }
}

/// The thread that kills a call still running after its deadline.
struct Watchdog {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    fired: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(pid: u32, limit: Duration, label: String) -> Watchdog {
        let (tx, rx) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&fired);
        let thread = std::thread::spawn(move || {
            // A message means "expire now"; a dropped sender means the call is over.
            if !matches!(rx.recv_timeout(limit), Err(RecvTimeoutError::Disconnected)) {
                flag.store(true, Ordering::SeqCst);
                eprintln!("hang guard: {label} still runs after {limit:?}; killing it");
                kill_tree(pid);
            }
        });
        Watchdog {
            stop: Some(tx),
            thread: Some(thread),
            fired,
        }
    }

    /// Stop watching (waits for a kill in progress); did it fire?
    fn stop(&mut self) -> bool {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.fired.load(Ordering::SeqCst)
    }
}

/// SIGKILL to `pid`, its process group, and every descendant and its group (a backend runs in
/// a group of its own). The descendants are found first: once `pid` dies they are orphans
/// that no longer point back to it.
fn kill_tree(pid: u32) {
    // SAFETY: getpgrp and kill take no pointers.
    let ours = unsafe { libc::getpgrp() };
    let mut targets = descendants(pid);
    targets.push(pid);
    for p in targets {
        for group in [pgid_of(p), Some(p as i32)].into_iter().flatten() {
            if group > 1 && group != ours {
                unsafe { libc::kill(-group, libc::SIGKILL) };
            }
        }
        unsafe { libc::kill(p as i32, libc::SIGKILL) };
    }
}

/// (ppid, pgid) from `/proc/PID/stat` ("pid (comm) S ppid pgrp …").
fn stat(pid: u32) -> Option<(u32, i32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = text.rsplit_once(')')?.1.split_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgid = rest.next()?.parse().ok()?;
    Some((ppid, pgid))
}

fn pgid_of(pid: u32) -> Option<i32> {
    stat(pid).map(|(_, g)| g)
}

/// Every process below `root`, from the parent links in `/proc`.
fn descendants(root: u32) -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let links: Vec<(u32, u32)> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| stat(p).map(|(ppid, _)| (p, ppid)))
        .collect();
    let mut found = Vec::new();
    let mut todo = vec![root];
    while let Some(parent) = todo.pop() {
        for &(p, ppid) in &links {
            if ppid == parent && !found.contains(&p) {
                found.push(p);
                todo.push(p);
            }
        }
    }
    found
}
