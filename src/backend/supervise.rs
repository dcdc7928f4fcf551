//! One supervisor for the programs `ai` starts: backend CLIs, command tools and MCP servers.
//!
//! Each runs in a process group of its own (so a terminal's Ctrl+C reaches `ai` first, which
//! then stops the whole group), gets the kernel's parent-death signal and, on Linux, a reaper
//! (see `reaper.rs`) that kills its group should `ai` die without doing it. Stopping is always
//! the same: SIGTERM to the group, one grace period ([`GRACE`]), SIGKILL to what is left.
//!
//! Its output is read until its end *or* until the supervisor says stop ([`Stop`]): a program
//! may leave behind a process outside its group (`setsid … &`) that holds its stdout open
//! forever. Once the program itself has exited and a moment ([`LINGER`]) has passed, or its
//! time is up, or Ctrl+C came, the readers return what they have instead of waiting for an end
//! that never comes (hostile test H2-2: a tool's escaped grandchild held a turn for 120 s,
//! past its timeout and the first Ctrl+C).

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::signal::{self, ChildGroup};

/// How long a program gets to end after SIGTERM before its group is killed.
pub(crate) const GRACE: Duration = signal::GRACE;

/// How long output pipes may stay open after the program itself has exited.
pub(crate) const LINGER: Duration = Duration::from_millis(500);

/// A started program: its group registered for Ctrl+C (unless asked otherwise) and watched by
/// a reaper, both stood down when this is dropped (after the program has been waited for).
pub(crate) struct Supervised {
    pub(crate) child: Child,
    pid: i32,
    stop: Stop,
    /// Registered: Ctrl+C stops the group.
    _group: Option<ChildGroup>,
    #[cfg(target_os = "linux")]
    reaper: Option<super::reaper::Reaper>,
}

impl Supervised {
    /// Start `cmd` in a group of its own. `ctrl_c`: Ctrl+C stops it (backends and command
    /// tools; an MCP server is stopped by its owner when the call ends).
    pub(crate) fn spawn(cmd: &mut Command, ctrl_c: bool) -> std::io::Result<Supervised> {
        cmd.process_group(0);
        stop_with_parent(cmd);
        // The stop pipe first: if it cannot be made (out of descriptors), nothing has started.
        let stop = Stop::new()?;
        let (child, group) = if ctrl_c {
            let (child, group) = ChildGroup::spawn(cmd)?;
            (child, Some(group))
        } else {
            (cmd.spawn()?, None)
        };
        let pid = i32::try_from(child.id()).unwrap_or(0);
        #[cfg(target_os = "linux")]
        let reaper = super::reaper::Reaper::watch(child.id());
        Ok(Supervised {
            child,
            pid,
            stop,
            _group: group,
            #[cfg(target_os = "linux")]
            reaper,
        })
    }

    /// The program's pid, which is also its group's ID.
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// What tells its readers to stop.
    pub(crate) fn stop(&self) -> Stop {
        self.stop.clone()
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        // The reaper stands down first: once the program is reaped its group ID may be reused.
        #[cfg(target_os = "linux")]
        drop(self.reaper.take());
    }
}

/// SIGTERM to the group `pid`, then SIGKILL after [`GRACE`] if any of it is left (on a
/// thread of its own: the caller does not wait).
pub(crate) fn terminate(pid: i32) {
    signal::terminate_group(pid);
}

/// A signal to the whole group `pid` (nothing for a pid that is not positive).
pub(crate) use crate::signal::kill_group;

/// Wait until the child `pid` has exited (without reaping it), at most `limit`.
pub(crate) fn exits_within(pid: i32, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        // SAFETY: waitid fills the zeroed siginfo we own; WNOWAIT leaves the child waitable.
        let exited = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            r == 0 && info.si_pid() != 0
        };
        if exited {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stop a program that is asked to end by its input closing (an MCP server): a grace period
/// to end by itself, SIGTERM, the grace period again, then SIGKILL to whatever is left of its
/// group; then reap it.
pub(crate) fn end(child: &mut Child) {
    let pid = i32::try_from(child.id()).unwrap_or(0);
    if pid > 0 {
        if !exits_within(pid, GRACE) {
            kill_group(pid, libc::SIGTERM);
            exits_within(pid, GRACE);
        }
        // Whatever is left of its group (the leader is not yet reaped, so the group ID cannot
        // have been reused).
        kill_group(pid, libc::SIGKILL);
    }
    let _ = child.wait();
}

/// Tells the readers of a program's output to return now. Level-triggered: once fired, every
/// reader, present and future, sees it.
#[derive(Clone)]
pub(crate) struct Stop(Arc<(OwnedFd, OwnedFd)>);

impl Stop {
    fn new() -> std::io::Result<Stop> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills `fds` with two new descriptors, or fails.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned here alone.
        let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Stop(Arc::new(pair)))
    }

    /// Stop the readers (never read back: it stays readable).
    pub(crate) fn fire(&self) {
        // SAFETY: a one-byte write from a local to a descriptor we own; a full pipe (fired
        // many times) drops the byte, which changes nothing.
        unsafe {
            libc::write(self.0.1.as_raw_fd(), b"x".as_ptr().cast(), 1);
        }
    }
}

/// Read `pipe` to its end or until `stop` fires, giving each piece to `each` (which returns
/// `false` to stop reading). `Ok(true)`: the end was reached; `Ok(false)`: stopped.
pub(crate) fn read_until(
    mut pipe: impl Read + AsRawFd,
    stop: &Stop,
    each: &mut dyn FnMut(&[u8]) -> bool,
) -> std::io::Result<bool> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: pipe.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: stop.0.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll(2) on two pollfd structs we own, for as long as it takes.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if fds[1].revents != 0 {
            // Told to stop: what is in the pipe already is taken, nothing is waited for.
            return drain_ready(&mut pipe, &mut buf, each);
        }
        if fds[0].revents == 0 {
            continue;
        }
        match pipe.read(&mut buf) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                if !each(&buf[..n]) {
                    return Ok(false);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// What the pipe holds right now (at most a pipe's worth, 1 MiB), without waiting for more.
fn drain_ready(
    pipe: &mut (impl Read + AsRawFd),
    buf: &mut [u8],
    each: &mut dyn FnMut(&[u8]) -> bool,
) -> std::io::Result<bool> {
    let mut taken = 0usize;
    while taken < 1024 * 1024 {
        let mut fd = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one pollfd we own, without waiting.
        if unsafe { libc::poll(&mut fd, 1, 0) } <= 0 || fd.revents == 0 {
            break;
        }
        match pipe.read(buf) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                taken += n;
                if !each(&buf[..n]) {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    Ok(false)
}

/// Read a pipe to its end (or until `stop`), keeping its last `keep` bytes.
pub(crate) fn read_tail(pipe: impl Read + AsRawFd, keep: usize, stop: &Stop) -> Vec<u8> {
    let mut kept = Vec::new();
    let _ = read_until(pipe, stop, &mut |piece| {
        kept.extend_from_slice(piece);
        if kept.len() > 2 * keep {
            kept.drain(..kept.len() - keep);
        }
        true
    });
    if kept.len() > keep {
        kept.drain(..kept.len() - keep);
    }
    kept
}

/// The program has its own process group, so signals that end `ai` without its handler
/// (SIGKILL, or a crash) never reach it. On Linux the kernel tells it instead: SIGTERM when the
/// thread that started it ends.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn stop_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec and only makes the
    // async-signal-safe calls prctl(2), getppid(2) and _exit(2).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // ai died before the line above: nobody would send the signal.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn stop_with_parent(_cmd: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    #[test]
    fn a_tail_keeps_the_end() {
        use std::io::Write;
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.write_all(b"abcdef").unwrap();
        drop(a);
        assert_eq!(read_tail(b, 3, &Stop::new().unwrap()), b"def");
    }

    /// A program that leaves behind a process outside its group holding its stdout: the
    /// reader returns when told to stop, with what came before.
    #[test]
    fn a_reader_stops_when_told_though_the_pipe_stays_open() {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", "echo started; setsid sleep 5 & exit 0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut run = Supervised::spawn(&mut cmd, false).unwrap();
        let out = run.child.stdout.take().unwrap();
        let stop = run.stop();
        let got = std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                let mut got = Vec::new();
                let ended = read_until(out, &stop, &mut |p| {
                    got.extend_from_slice(p);
                    true
                });
                (got, ended.unwrap())
            });
            run.child.wait().unwrap();
            stop.fire();
            reader.join().unwrap()
        });
        assert_eq!(got, (b"started\n".to_vec(), false));
    }
}
