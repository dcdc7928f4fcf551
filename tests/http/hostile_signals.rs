//! Signals during an HTTP stream (hostile-test N1): a stream whose chunks arrive faster than
//! ai's 50 ms poll used to hide Ctrl+C and SIGTERM until the whole reply had streamed.

use std::io::Read;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::{Env, Framing, Proc, Reply, Server, oa_end, oa_text, signal};

/// A reply of `n` chunks 15 ms apart (far longer than any test waits for it).
fn fast_stream(n: usize) -> Reply {
    let mut r = Reply::new(200)
        .header("Content-Type", "text/event-stream")
        .framing(Framing::Chunked);
    for i in 0..n {
        r = r.body(&oa_text(&format!("chunk{i} "))).pause(15);
    }
    r.body(&oa_end(1, 1))
}

/// Start `ai` on a fast stream; return once the first text is on its stdout.
fn started(env: &Env, args: &[&str]) -> (Proc, mpsc::Receiver<Vec<u8>>) {
    let mut child = env
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ai");
    let mut out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

fn interrupted_mid_stream(sig: i32, code: i32) {
    let server = Server::start(vec![fast_stream(600)]);
    let env = Env::for_provider("openai", &server);
    let (mut child, rx) = started(&env, &["openai:gpt-4o-mini", "hi"]);
    let mut seen = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the first chunk never arrived");
    signal(child.pid(), sig);
    let sent = Instant::now();
    let status = child.wait_status_within(Duration::from_secs(30));
    let took = sent.elapsed();
    while let Ok(more) = rx.recv_timeout(Duration::from_millis(200)) {
        seen.extend(more);
    }
    assert_eq!(status.code(), Some(code));
    // The whole stream takes 9 s or more; stopping is a matter of milliseconds.
    assert!(took < Duration::from_secs(3), "ai took {took:?} to stop");
    let seen = String::from_utf8_lossy(&seen);
    assert!(
        !seen.contains("chunk599"),
        "the whole reply streamed: {seen}"
    );
    let messages = env.only_messages();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[1]["interrupted"], true, "{messages:#?}");
    let kept = messages[1]["content"].as_str().unwrap_or_default();
    assert!(kept.starts_with("chunk0 "), "{kept}");
}

#[test]
fn ctrl_c_stops_a_fast_stream_at_once() {
    interrupted_mid_stream(libc::SIGINT, 130);
}

#[test]
fn sigterm_stops_a_fast_stream_and_exits_143() {
    interrupted_mid_stream(libc::SIGTERM, 143);
}

/// A turn that cannot finish saving (here: stdout is a pipe nobody reads, so writing the reply
/// blocks) defers the first Ctrl+C; the second one ends ai at once.
#[test]
fn a_second_ctrl_c_always_ends_ai() {
    let big = "x".repeat(1000);
    let mut reply = Reply::new(200)
        .header("Content-Type", "text/event-stream")
        .framing(Framing::Chunked);
    for _ in 0..400 {
        reply = reply.body(&oa_text(&big));
    }
    let server = Server::start(vec![reply.pause(60_000).body(&oa_end(1, 1))]);
    let env = Env::for_provider("openai", &server);
    let mut child = env
        .command(&["openai:gpt-4o-mini", "hi"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ai");
    // The reply (400 KB) fills the pipe (64 KB): ai blocks writing it.
    std::thread::sleep(Duration::from_millis(1500));
    signal(child.pid(), libc::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.running(),
        "the first Ctrl+C was expected to wait for the turn to save"
    );
    signal(child.pid(), libc::SIGINT);
    let status = child.wait_status_within(Duration::from_secs(20));
    assert_eq!(status.code(), Some(130));
    drop(child.stdout.take());
}
