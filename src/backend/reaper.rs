//! The last line of defence for a backend's process group. A backend runs in a group of its
//! own (so a terminal's Ctrl+C reaches `ai` first, which then stops the backend cleanly). When
//! `ai` dies without doing that (SIGKILL, a crash), the kernel's parent-death signal stops the
//! backend itself, but not what the backend started: an agent CLI's running tools would go on.
//!
//! So each backend gets a reaper: a forked copy of `ai` that does nothing but wait on a pipe
//! only `ai` can write to. When the backend's run ends normally, `ai` writes one byte and the
//! reaper exits. When `ai` dies, the kernel closes the pipe, and the reaper kills the whole
//! group. It is in a group of its own and ignores the signals a terminal sends, so whatever
//! ends `ai` does not end it too.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub(crate) struct Reaper {
    pid: libc::pid_t,
    /// Written to (one byte) to stand the reaper down; closed by the kernel if `ai` dies.
    pipe: Option<OwnedFd>,
}

impl Reaper {
    /// Watch the process group `group`. `None` when a reaper cannot be started (the backend
    /// then runs as before, stopped by its parent-death signal only).
    pub(crate) fn watch(group: u32) -> Option<Reaper> {
        let group = libc::pid_t::try_from(group).ok()?;
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills `fds` with two new descriptors, or fails.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        // SAFETY: both descriptors were just created and are owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the child runs only async-signal-safe calls (setpgid, signal, dup2, close,
        // read, kill, _exit) before it exits, as required after fork in a threaded program.
        match unsafe { libc::fork() } {
            -1 => None,
            0 => unsafe { reap(read.as_raw_fd(), group) },
            pid => {
                drop(read);
                Some(Reaper {
                    pid,
                    pipe: Some(write),
                })
            }
        }
    }
}

impl Drop for Reaper {
    /// The backend's run is over (`ai` is alive): the reaper leaves the group alone and exits.
    fn drop(&mut self) {
        if let Some(pipe) = self.pipe.take() {
            // SAFETY: a one-byte write to a descriptor we own.
            unsafe { libc::write(pipe.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child, which exits as soon as it reads the byte.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

/// The reaper's whole life (in the forked child).
unsafe fn reap(pipe: libc::c_int, group: libc::pid_t) -> ! {
    unsafe {
        libc::setpgid(0, 0);
        for sig in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        // Hold nothing of `ai`'s (its stdout, the backend's pipes): only the watched pipe.
        libc::dup2(pipe, 0);
        if libc::syscall(libc::SYS_close_range, 1u32, u32::MAX, 0u32) != 0 {
            for fd in 1..4096 {
                libc::close(fd);
            }
        }
        let mut byte = 0u8;
        loop {
            match libc::read(0, (&raw mut byte).cast(), 1) {
                1 => libc::_exit(0),
                0 => {
                    // `ai` is gone without standing us down: stop everything it started.
                    libc::kill(-group, libc::SIGKILL);
                    libc::_exit(0);
                }
                _ if *libc::__errno_location() == libc::EINTR => {}
                _ => libc::_exit(1),
            }
        }
    }
}
