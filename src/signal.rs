//! Ctrl+C and SIGTERM: stop the running backend's whole process group, then exit 130.
//!
//! The handler runs on its own thread (ctrlc). While a backend runs it only stops the child; the
//! main thread sees the child end, finishes what it was doing, and returns `Error::Interrupted`.
//! When nothing is running the process exits at once with 130.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::time::Duration;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// How many chat turns are in a stretch where they must be allowed to save what they have.
static DEFER: AtomicUsize = AtomicUsize::new(0);
/// Process groups of the running backends (several when models run at once); 0 is free.
static CHILD_GROUPS: [AtomicI32; 32] = [const { AtomicI32::new(0) }; 32];

/// Install the handler once, at start.
pub(crate) fn install() {
    // A failure here (no signal support) only loses the nicer Ctrl+C handling.
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        let mut stopped = false;
        for slot in &CHILD_GROUPS {
            let group = slot.load(Ordering::SeqCst);
            if group > 0 {
                terminate_group(group);
                stopped = true;
            }
        }
        if !stopped && DEFER.load(Ordering::SeqCst) == 0 {
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
        // A free slot; with all taken (32 backends at once) Ctrl+C still ends ai itself.
        let _ = CHILD_GROUPS.iter().find(|slot| {
            slot.compare_exchange(0, group, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        if interrupted() && group > 0 {
            // Ctrl+C arrived between spawn and registration.
            terminate_group(group);
        }
        ChildGroup(group)
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        for slot in &CHILD_GROUPS {
            if slot
                .compare_exchange(self.0, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                break;
            }
        }
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
        DEFER.fetch_add(1, Ordering::SeqCst);
        Defer
    }
}

impl Drop for Defer {
    fn drop(&mut self) {
        DEFER.fetch_sub(1, Ordering::SeqCst);
    }
}
