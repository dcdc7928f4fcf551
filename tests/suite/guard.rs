//! The hang guard of the test support itself: a call that never ends is killed with all it
//! started, and the test fails naming it, whether it waits on a backend CLI, on a pipe or on
//! an HTTP server. Most tests expire the guard at once (`Proc::expire`) once the hang is in
//! place; two run the real timer with a short deadline (the default one is a minute).

use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{
    Env, Reply, Server, oa_text, read_pid, signal, wait_for, wait_for_file, wait_gone,
};

const SHORT: Duration = Duration::from_secs(1);

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("the hang guard did not fire");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// A fake `claude` that sleeps ten minutes in a process group of its own (as every backend
/// runs); returns the file its pid is written to.
fn hang_claude(env: &Env) -> std::path::PathBuf {
    let pid = env.path("claude.pid");
    env.script(
        "claude",
        &format!(
            "echo $$ > '{p}.part'\nmv '{p}.part' '{p}'\nexec \"$SLEEP\" 600\n",
            p = pid.display()
        ),
    );
    pid
}

#[test]
fn a_hung_call_is_killed_with_its_backend_and_named() {
    let env = Env::new();
    let pid_file = hang_claude(&env);
    let mut child = env.ai().args(["sonnet", "hi"]).spawn().unwrap();
    assert!(
        wait_for_file(&pid_file, Duration::from_secs(30)),
        "claude never started"
    );
    let backend = read_pid(&pid_file);
    child.expire();
    let msg = panic_message(|| {
        child.wait_status();
    });
    assert!(msg.contains(r#"ai ["sonnet", "hi"]"#), "{msg}");
    assert!(msg.contains("hang guard killed it"), "{msg}");
    assert!(
        wait_gone(backend, Duration::from_secs(10)),
        "the backend {backend} outlived the guard"
    );
}

/// The real timer: a test blocked reading the stdout of a hung call is freed at the deadline.
#[test]
fn a_test_reading_a_pipe_of_a_hung_call_is_freed() {
    let env = Env::new();
    hang_claude(&env);
    let started = Instant::now();
    let mut child = env
        .ai()
        .args(["sonnet", "hi"])
        .stdout(Stdio::piped())
        .deadline(SHORT)
        .spawn()
        .unwrap();
    let mut out = Vec::new();
    // Blocks until the guard kills everything holding the pipe.
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the guard let it run {:?}",
        started.elapsed()
    );
    let msg = panic_message(|| {
        child.wait_status();
    });
    assert!(msg.contains(r#"ai ["sonnet", "hi"]"#), "{msg}");
}

#[test]
fn a_call_hung_on_the_http_server_is_killed_and_named() {
    let s = Server::start(vec![Reply::sse(&[&oa_text("partial")]).pause(600_000)]);
    let env = Env::for_provider("openai", &s);
    let mut child = env.command(&["openai:gpt-test", "hi"]).spawn().unwrap();
    wait_for("the request", || !s.requests().is_empty());
    child.expire();
    let msg = panic_message(|| {
        child.wait();
    });
    assert!(msg.contains(r#"ai ["openai:gpt-test", "hi"]"#), "{msg}");
}

/// A process left behind holding an output pipe the test reads cannot block it either. (`ai`
/// itself never lends its own stdout or stderr to a backend, so a shell stands in for it.)
#[test]
fn a_leftover_holding_an_output_pipe_is_bounded() {
    let env = Env::new();
    let pid = env.path("left.pid");
    let script = format!("\"$0\" 600 >&2 &\necho $! > '{}'\n", pid.display());
    let started = Instant::now();
    let msg = panic_message(|| {
        let _ = env
            .program("/bin/sh")
            .args(["-c", &script, "/bin/sleep"])
            .stderr(Stdio::piped())
            .deadline(SHORT)
            .output();
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "waited {:?}",
        started.elapsed()
    );
    assert!(msg.contains("still held its output open"), "{msg}");
    assert!(wait_for_file(&pid, Duration::from_secs(10)));
    signal(read_pid(&pid) as i32, libc::SIGKILL);
}
