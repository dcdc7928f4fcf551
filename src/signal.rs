//! Ctrl+C (SIGINT), SIGTERM, SIGHUP and SIGQUIT: stop the running backends' process groups,
//! then end with 128 + the signal's number (130 for Ctrl+C, 143 for SIGTERM).
//!
//! The handler itself only writes the signal's number into a pipe; a thread reads it and does
//! the work, outside signal context. While a backend runs it only stops the child; the main
//! thread sees the call end, saves what it has, and returns `Error::Interrupted`. When nothing is
//! running the process exits at once. A second signal ends the process at once (its backends
//! killed), except that a second Ctrl+C gives a turn that is saving a moment to finish (a double
//! tap must not leave a chat holding only its header): the user asked twice. The second signal
//! is never forgotten: the saving turn, and `ai -i` around it, end with the same code rather
//! than go back to the prompt (they used to, and a session could end 0 before the signal
//! thread ended it 130).
//!
//! Not re-raised (review D14): a death by signal has no exit code, and the README promises
//! 130 and 143 to every caller, scripts and `ai serve` included, not only to shells.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::time::Duration;

/// What the signals received so far mean, for the whole process.
static STATE: State = State::new();
/// Process groups of the running backends, as many as run at once (one per model).
static CHILD_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
/// The write end of the pipe the handler writes signal numbers into.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Signals written to the pipe by the handler, and signals the listening thread has handled:
/// while they differ, a signal is on its way to [`interrupted`] (see [`interrupted_now`]).
static SENT: AtomicUsize = AtomicUsize::new(0);
static HANDLED_COUNT: AtomicUsize = AtomicUsize::new(0);

/// The signal state: which signal came first, whether a second one has ended the process,
/// and how many turns are saving. Kept in one value so that its rules can be tested on a
/// value of their own, away from the process's.
struct State {
    interrupted: AtomicBool,
    /// The first signal received (0: none yet, or a Ctrl+C the session has dealt with).
    signal: AtomicI32,
    /// A second signal: the process is ending with 128 + it. Never forgotten, so that the
    /// turn saving in the meantime and the session around it end too rather than go on (the
    /// race where a session got back to its prompt and ended 0, not 130).
    ending: AtomicI32,
    /// How many chat turns are in a stretch where they must be allowed to save what they have.
    defer: AtomicUsize,
    /// How many children are being started (between the check before the fork and their
    /// group's registration): a signal then does not end the process at once, or the child
    /// would outlive it, never stopped, and its caller never answer (the race behind the
    /// flaky `ai mcp` SIGTERM test: a signal between spawn and registration saw nothing
    /// running and exited).
    starting: AtomicUsize,
}

/// What the listening thread does about one signal.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    /// The first: stop the running backends; end at once when nothing runs or saves.
    Stop { exit_now: bool },
    /// A second: kill the backends, then end (after a saving turn had its moment, for Ctrl+C).
    End { wait_for_save: bool },
}

impl State {
    const fn new() -> State {
        State {
            interrupted: AtomicBool::new(false),
            signal: AtomicI32::new(0),
            ending: AtomicI32::new(0),
            defer: AtomicUsize::new(0),
            starting: AtomicUsize::new(0),
        }
    }

    /// Record `sig`; `running` is whether backends are registered.
    fn receive(&self, sig: i32, running: bool) -> Action {
        // Ending is decided before anything else can see the flag cleared: set first.
        let first = self.ending.load(Ordering::SeqCst) == 0
            && self
                .signal
                .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
        if !first {
            let _ = self
                .ending
                .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        }
        self.interrupted.store(true, Ordering::SeqCst);
        if first {
            let exit_now = !running
                && self.defer.load(Ordering::SeqCst) == 0
                && self.starting.load(Ordering::SeqCst) == 0;
            Action::Stop { exit_now }
        } else {
            Action::End {
                wait_for_save: sig == libc::SIGINT,
            }
        }
    }

    fn forget(&self) -> bool {
        if self.ending.load(Ordering::SeqCst) != 0 {
            return false;
        }
        match self
            .signal
            .compare_exchange(libc::SIGINT, 0, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) | Err(0) => {
                // A second signal read between the check above and here: it stays.
                if self.ending.load(Ordering::SeqCst) != 0 {
                    return false;
                }
                self.interrupted.store(false, Ordering::SeqCst);
                true
            }
            Err(_) => false,
        }
    }

    fn exit_code(&self) -> i32 {
        match (
            self.ending.load(Ordering::SeqCst),
            self.signal.load(Ordering::SeqCst),
        ) {
            (0, 0) => 130,
            (0, sig) | (sig, _) => 128 + sig,
        }
    }
}

/// How long a stopped process group gets between SIGTERM and SIGKILL: the one grace period
/// of every program `ai` starts (see `backend/supervise.rs`).
pub(crate) const GRACE: Duration = Duration::from_millis(1500);

/// How long a second Ctrl+C waits for a turn that is saving (a double tap).
const SAVE_GRACE: Duration = Duration::from_millis(1500);
const HANDLED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Install the handlers once, at start.
pub(crate) fn install() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe(2) writes two descriptors into the array we own.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        // No pipe (out of descriptors): the default actions stay, which still end ai.
        return;
    }
    let [read_fd, write_fd] = fds;
    // SAFETY: fcntl on descriptors we just opened. Close-on-exec keeps them out of backends;
    // a non-blocking write end means the handler can never block (a full pipe drops a byte,
    // and one byte is enough).
    unsafe {
        libc::fcntl(read_fd, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(write_fd, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(write_fd, libc::F_SETFL, libc::O_NONBLOCK);
    }
    PIPE_WRITE.store(write_fd, Ordering::SeqCst);
    let started = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || listen(read_fd));
    if started.is_err() {
        return;
    }
    for sig in HANDLED {
        // SAFETY: a zeroed sigaction is valid; the handler only calls write(2), which is
        // async-signal-safe, and keeps errno as it found it.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let byte = sig as u8;
    // SAFETY: only async-signal-safe calls; errno is restored for the code we interrupted.
    unsafe {
        let errno = errno_location();
        let saved = *errno;
        // Counted before the byte can be read (a lock-free atomic is async-signal-safe);
        // taken back when the byte could not be written.
        SENT.fetch_add(1, Ordering::SeqCst);
        if libc::write(
            PIPE_WRITE.load(Ordering::Relaxed),
            (&byte as *const u8).cast(),
            1,
        ) != 1
        {
            SENT.fetch_sub(1, Ordering::SeqCst);
        }
        *errno = saved;
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread.
    unsafe { libc::__errno_location() }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread.
    unsafe { libc::__error() }
}

fn listen(read_fd: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into a local.
        let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
        match n {
            1 => {
                handle(i32::from(byte));
                HANDLED_COUNT.fetch_add(1, Ordering::SeqCst);
            }
            0 => return,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return,
        }
    }
}

/// What a signal does, on the listening thread.
fn handle(sig: i32) {
    // The flag is set before the list is read: a backend registering meanwhile either is in
    // the list or sees the flag (see [`ChildGroup::register`]).
    STATE.interrupted.store(true, Ordering::SeqCst);
    let groups = groups().clone();
    let action = STATE.receive(sig, !groups.is_empty());
    match action {
        Action::End { wait_for_save } => {
            // Asked twice: end now. Backends get no grace period either.
            for group in groups {
                kill_group(group, libc::SIGKILL);
            }
            // A double-tapped Ctrl+C: the first one's turn is saving its prompt and partial
            // reply (its backend has just been stopped); a moment lets it finish, rather than
            // leave a chat holding only its header. That turn, or the session around it, may
            // end the process first: it sees the second signal and exits with the same code.
            if wait_for_save {
                let until = std::time::Instant::now() + SAVE_GRACE;
                while STATE.defer.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            std::process::exit(STATE.exit_code());
        }
        Action::Stop { exit_now } => {
            for &group in &groups {
                terminate_group(group);
            }
            if exit_now {
                std::process::exit(128 + sig);
            }
        }
    }
}

pub(crate) fn interrupted() -> bool {
    STATE.interrupted.load(Ordering::SeqCst)
}

/// [`interrupted`], once every signal already delivered to this process has been handled by
/// the listening thread (at most 1 s). For a point of no return, such as the commit of a
/// `kb copy`: a Ctrl+C whose handler ran while this thread waited on a server must stop it,
/// even when the listening thread has not been scheduled yet on a busy machine.
pub(crate) fn interrupted_now() -> bool {
    let until = std::time::Instant::now() + Duration::from_secs(1);
    while HANDLED_COUNT.load(Ordering::SeqCst) < SENT.load(Ordering::SeqCst)
        && std::time::Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    interrupted()
}

/// A second signal was received: the process is ending with [`exit_code`].
pub(crate) fn ending() -> bool {
    STATE.ending.load(Ordering::SeqCst) != 0
}

/// Forget a Ctrl+C that has been dealt with, so that the next one is a first one again: the
/// interactive session (`ai -i`) stops one reply per Ctrl+C and goes on. `false` when another
/// signal (SIGTERM, SIGHUP, SIGQUIT) was received, or a second one of any kind: that one is
/// kept, and the caller ends.
pub(crate) fn forget_interrupt() -> bool {
    STATE.forget()
}

/// The exit code of a call ended by a signal: 128 + its number (130 when none was seen, as when
/// a backend reported the interruption itself).
pub(crate) fn exit_code() -> i32 {
    STATE.exit_code()
}

fn groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    // A panic elsewhere while holding the lock leaves a list that is still right.
    CHILD_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Marks a backend process group as one to stop on Ctrl+C, for as long as it lives.
pub(crate) struct ChildGroup(i32);

impl ChildGroup {
    /// Start `cmd` (put in a process group of its own by the caller) and register its group,
    /// with no moment between the two in which a signal ends `ai` and leaves the child behind.
    /// A signal received before the fork: the child is not started (`Interrupted`), since it
    /// would only be stopped at once.
    pub(crate) fn spawn(
        cmd: &mut std::process::Command,
    ) -> std::io::Result<(std::process::Child, ChildGroup)> {
        // Counted before the flag is checked; the handler sets the flag before it reads the
        // count: either it sees this start coming (and does not exit), or the check sees the
        // flag (and nothing starts).
        STATE.starting.fetch_add(1, Ordering::SeqCst);
        let _starting = Starting;
        if interrupted() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "stopped by a signal before it started",
            ));
        }
        let child = cmd.spawn()?;
        let group = ChildGroup::register(child.id());
        Ok((child, group))
    }

    fn register(pid: u32) -> ChildGroup {
        let group = i32::try_from(pid).unwrap_or(0);
        if group > 0 {
            groups().push(group);
        }
        // The handler sets the flag before it reads the list: either it saw this group, or
        // this check sees the flag.
        if interrupted() && group > 0 {
            terminate_group(group);
        }
        ChildGroup(group)
    }
}

/// A start under way, counted while alive (see [`ChildGroup::spawn`]).
struct Starting;

impl Drop for Starting {
    fn drop(&mut self) {
        STATE.starting.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        let mut list = groups();
        if let Some(i) = list.iter().position(|g| *g == self.0) {
            list.swap_remove(i);
        }
    }
}

pub(crate) fn kill_group(group: i32, sig: libc::c_int) {
    if group > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-group, sig);
        }
    }
}

/// SIGTERM to the group, then SIGKILL if it is still there after a grace period.
/// Stop every call under way as Ctrl+C would (backends stopped, replies kept as interrupted),
/// without a signal: the reader of stdout is gone (`ai a b c "…" | head -1`), so nothing that
/// is still running will be read.
pub(crate) fn stop_everything() {
    STATE.interrupted.store(true, Ordering::SeqCst);
    let running = groups().clone();
    for group in running {
        terminate_group(group);
    }
}

pub(crate) fn terminate_group(group: i32) {
    if group <= 0 {
        return;
    }
    kill_group(group, libc::SIGTERM);
    std::thread::spawn(move || {
        std::thread::sleep(GRACE);
        // SAFETY: signal 0 only checks that the group still exists.
        if unsafe { libc::kill(-group, 0) } == 0 {
            kill_group(group, libc::SIGKILL);
        }
    });
}

/// While alive, Ctrl+C does not end the process at once: the caller saves its work, then checks
/// [`interrupted`].
pub(crate) struct Defer;

impl Defer {
    pub(crate) fn start() -> Defer {
        STATE.defer.fetch_add(1, Ordering::SeqCst);
        Defer
    }
}

impl Drop for Defer {
    fn drop(&mut self) {
        STATE.defer.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_ctrl_c_while_a_turn_saves_is_never_forgotten() {
        let state = State::new();
        state.defer.fetch_add(1, Ordering::SeqCst);
        assert_eq!(
            state.receive(libc::SIGINT, true),
            Action::Stop { exit_now: false }
        );
        assert_eq!(
            state.receive(libc::SIGINT, true),
            Action::End {
                wait_for_save: true
            }
        );
        // The turn has saved; the session asks whether it may go on: it may not.
        assert!(!state.forget());
        assert!(state.interrupted.load(Ordering::SeqCst));
        assert_eq!(state.exit_code(), 130);
    }

    #[test]
    fn one_ctrl_c_at_a_time_is_forgotten_and_the_next_is_a_first_again() {
        let state = State::new();
        state.defer.fetch_add(1, Ordering::SeqCst);
        assert_eq!(
            state.receive(libc::SIGINT, true),
            Action::Stop { exit_now: false }
        );
        assert!(state.forget());
        assert!(!state.interrupted.load(Ordering::SeqCst));
        assert_eq!(
            state.receive(libc::SIGINT, true),
            Action::Stop { exit_now: false }
        );
    }

    #[test]
    fn sigterm_after_ctrl_c_ends_with_143() {
        let state = State::new();
        state.receive(libc::SIGINT, true);
        assert_eq!(
            state.receive(libc::SIGTERM, true),
            Action::End {
                wait_for_save: false
            }
        );
        assert!(!state.forget());
        assert_eq!(state.exit_code(), 143);
    }

    #[test]
    fn a_signal_while_a_child_is_being_started_does_not_end_at_once() {
        let state = State::new();
        state.starting.fetch_add(1, Ordering::SeqCst);
        assert_eq!(
            state.receive(libc::SIGTERM, false),
            Action::Stop { exit_now: false }
        );
        assert_eq!(state.exit_code(), 143);
    }

    #[test]
    fn a_signal_with_nothing_running_or_saving_ends_at_once() {
        let state = State::new();
        assert_eq!(
            state.receive(libc::SIGTERM, false),
            Action::Stop { exit_now: true }
        );
        assert!(!state.forget());
        assert_eq!(state.exit_code(), 143);
    }
}
