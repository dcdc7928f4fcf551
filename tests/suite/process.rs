//! The backend as a process: streaming, timeout, Ctrl+C, and nothing left behind.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{Env, chunks, drain, read_pid, wait_for_file, wait_gone};

/// The first chunk of a slow reply is on our stdout while the backend still runs: the fake
/// prints it, then waits for a marker the test creates only after reading that chunk.
#[test]
fn first_chunk_arrives_before_the_backend_exits() {
    for alias in ["codex", "gemini"] {
        let env = Env::new();
        let marker = env.path("got-first-chunk");
        let exited = env.path("backend-exited");
        env.script(
            alias,
            &format!(
                r#"printf 'FIRST\n'
i=0
while [ ! -e '{marker}' ] && [ $i -lt 1200 ]; do "$SLEEP" 0.05; i=$((i+1)); done
if [ -e '{marker}' ]; then printf 'REST\n'; else printf 'GAVE UP WAITING\n'; fi
: > '{exited}'
exit 0
"#,
                marker = marker.display(),
                exited = exited.display()
            ),
        );
        let mut child = env
            .ai()
            .args([alias, "tell me slowly"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = drain(child.stderr.take().unwrap());
        let (rx, reader) = chunks(child.stdout.take().unwrap());
        let mut seen = Vec::new();
        while !seen.starts_with(b"FIRST\n") {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(chunk) => seen.extend(chunk),
                Err(_) => {
                    child.kill();
                    panic!("{alias}: the first chunk did not reach stdout while the backend ran");
                }
            }
        }
        assert!(
            !exited.exists(),
            "{alias}: the first chunk came only after the backend had exited"
        );
        std::fs::write(&marker, "").unwrap();
        let status = child.wait_status();
        reader.join().unwrap();
        seen.extend(rx.try_iter().flatten());
        let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
        assert!(status.success(), "{alias}: {err}");
        assert_eq!(String::from_utf8_lossy(&seen), "FIRST\nREST\n", "{alias}");
    }
}

#[test]
fn timeout_stops_the_backend() {
    let env = Env::new();
    let pid_file = env.path("fake.pid");
    env.script(
        "gemini",
        &format!("echo $$ > '{}'\n\"$SLEEP\" 30\n", pid_file.display()),
    );
    let started = Instant::now();
    let out = env.ai().args(["--timeout", "1", "gemini", "hi"]).run();
    let elapsed = started.elapsed();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains("error: gemini did not finish within 1s; it was stopped"),
        "{err}"
    );
    assert!(err.contains("hint: ") && err.contains("--timeout"), "{err}");
    assert!(
        elapsed < Duration::from_secs(20),
        "returned after {elapsed:?}, not at the timeout"
    );
    let pid = read_pid(&pid_file);
    assert!(
        wait_gone(pid, Duration::from_secs(10)),
        "the backend (pid {pid}) still runs"
    );
}

#[test]
fn timeout_from_config() {
    let env = Env::new();
    env.write_config(r#"{"timeout": 0.5}"#);
    env.script("qwen", "\"$SLEEP\" 30\n");
    let started = Instant::now();
    let out = env.ai().args(["qwen", "hi"]).run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("qwen did not finish within 0.5s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn fractional_timeout_that_is_long_enough_succeeds() {
    let env = Env::new();
    let out = env.ai().args(["--timeout", "30.5", "codex", "hi"]).run();
    assert!(out.status.success());
    assert_eq!(out.stdout, "reply from codex\n");
}

/// Ctrl+C: ai stops the backend's whole process group (child and grandchild) and exits 130.
#[test]
fn interrupt_stops_everything_and_exits_130() {
    let env = Env::new();
    let pid_file = env.path("fake.pid");
    let grandchild_file = env.path("grandchild.pid");
    env.script(
        "gemini",
        &format!(
            "\"$SLEEP\" 30 &\necho $! > '{gc}'\necho $$ > '{pid}.part'\nmv '{pid}.part' '{pid}'\n\"$SLEEP\" 30\n",
            gc = grandchild_file.display(),
            pid = pid_file.display()
        ),
    );
    // `mv` by name: the fake's PATH has /usr/bin:/bin.
    let mut child = env
        .ai()
        .args(["gemini", "x"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    if !wait_for_file(&pid_file, Duration::from_secs(30)) {
        child.kill();
        panic!("the fake backend never started");
    }
    let fake = read_pid(&pid_file);
    let grandchild = read_pid(&grandchild_file);
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let interrupted = Instant::now();
    let status = child.wait_status();
    let took = interrupted.elapsed();
    let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    let out = out.join().unwrap();
    assert_eq!(status.code(), Some(130), "stderr: {err}");
    assert!(
        took < Duration::from_secs(20),
        "ai took {took:?} to stop: it waited for the backend instead of stopping it"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("RUST_BACKTRACE"), "{err}");
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    assert!(
        wait_gone(fake, Duration::from_secs(10)),
        "the backend (pid {fake}) still runs"
    );
    assert!(
        wait_gone(grandchild, Duration::from_secs(10)),
        "the backend's background child (pid {grandchild}) still runs"
    );
}

/// SIGTERM is handled the same way, and exits 143.
#[test]
fn terminate_stops_the_backend() {
    let env = Env::new();
    let pid_file = env.path("fake.pid");
    env.script(
        "codex",
        &format!(
            "echo $$ > '{pid}.part'\nmv '{pid}.part' '{pid}'\n\"$SLEEP\" 30\n",
            pid = pid_file.display()
        ),
    );
    let mut child = env
        .ai()
        .args(["codex", "x"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = drain(child.stderr.take().unwrap());
    if !wait_for_file(&pid_file, Duration::from_secs(30)) {
        child.kill();
        panic!("the fake backend never started");
    }
    let fake = read_pid(&pid_file);
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait_status();
    let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    // 128 + SIGTERM.
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        wait_gone(fake, Duration::from_secs(10)),
        "the backend still runs"
    );
}

/// A backend that exits while something it started in the background still holds its stdout:
/// ai answers with what the backend printed and stops the leftover, instead of waiting for it.
#[test]
fn background_leftover_holding_stdout_is_not_waited_for() {
    let env = Env::new();
    let pid_file = env.path("leftover.pid");
    env.script(
        "gemini",
        &format!(
            "echo 'the answer'\n\"$SLEEP\" 30 &\necho $! > '{}'\n",
            pid_file.display()
        ),
    );
    let started = Instant::now();
    let out = env.ai().args(["--no-chat", "gemini", "hi"]).run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(out.stdout.starts_with("the answer\n"), "{:?}", out.stdout);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "waited {:?} for the background leftover",
        started.elapsed()
    );
    let pid = read_pid(&pid_file);
    assert!(
        wait_gone(pid, Duration::from_secs(10)),
        "the leftover (pid {pid}) still runs"
    );
}
