//! Ctrl+C and SIGTERM: stop the running backend's whole process group, then exit 130.
//!
//! The handler runs on its own thread (ctrlc). While a backend runs it only stops the child; the
//! main thread sees the child end, finishes what it was doing, and returns `Error::Interrupted`.
//! When nothing is running the process exits at once with 130.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Set while a chat turn must be allowed to save what it has.
static DEFER: AtomicBool = AtomicBool::new(false);
/// Process group of the running backend, or 0.
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);

/// Install the handler once, at start.
pub(crate) fn install() {
    // A failure here (no signal support) only loses the nicer Ctrl+C handling.
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        let group = CHILD_GROUP.load(Ordering::SeqCst);
        if group > 0 {
            terminate_group(group);
        } else if !DEFER.load(Ordering::SeqCst) {
            std::process::exit(crate::error::code::INTERRUPTED);
        }
    });
}

pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Marks a backend process group as the one to stop on Ctrl+C, for as long as it lives.
pub(crate) struct ChildGroup(i32);

impl ChildGroup {
    pub(crate) fn register(pid: u32) -> ChildGroup {
        let group = i32::try_from(pid).unwrap_or(0);
        CHILD_GROUP.store(group, Ordering::SeqCst);
        if interrupted() && group > 0 {
            // Ctrl+C arrived between spawn and registration.
            terminate_group(group);
        }
        ChildGroup(group)
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        let _ = CHILD_GROUP.compare_exchange(self.0, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// SIGTERM to the group, then SIGKILL if it is still there after a grace period.
pub(crate) fn terminate_group(group: i32) {
    if group <= 0 {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe {
        libc::kill(-group, libc::SIGTERM);
    }
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: as above; signal 0 only checks that the group still exists.
        unsafe {
            if libc::kill(-group, 0) == 0 {
                libc::kill(-group, libc::SIGKILL);
            }
        }
    });
}

/// While alive, Ctrl+C does not end the process at once: the caller saves its work, then checks
/// [`interrupted`].
pub(crate) struct Defer;

impl Defer {
    pub(crate) fn start() -> Defer {
        DEFER.store(true, Ordering::SeqCst);
        Defer
    }
}

impl Drop for Defer {
    fn drop(&mut self) {
        DEFER.store(false, Ordering::SeqCst);
    }
}
