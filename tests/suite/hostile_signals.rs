//! Signals and backend CLIs (hostile-test N6, N17): no signal of `ai`, not even SIGKILL, leaves
//! a backend running, and Ctrl+C stops every backend however many models run at once.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Env, Proc, read_pid, wait_gone};

/// A fake `name` that records its pid in `dir/<pid>` and sleeps 30 s, with a grandchild.
fn sleeper(env: &Env, name: &str, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    env.script(
        name,
        &format!(
            "\"$SLEEP\" 30 &\necho $! > '{d}'/grandchild.$$\necho $$ > '{d}'/.$$\nmv '{d}'/.$$ '{d}'/pid.$$\n\"$SLEEP\" 30\n",
            d = dir.display()
        ),
    );
}

/// The pids in `dir` named `prefix.*`, once there are `n` of them.
fn pids(dir: &Path, prefix: &str, n: usize, child: &mut Proc) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let found: Vec<u32> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .map(|e| read_pid(&e.path()))
            .collect();
        if found.len() >= n {
            return found;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill();
            let names: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name())
                .collect();
            panic!("only {} of {n} backends started: {names:?}", found.len());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill(child: &Child, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// SIGKILL cannot be handled: the backend learns of it from the kernel (PR_SET_PDEATHSIG).
#[test]
#[cfg(target_os = "linux")]
fn sigkill_of_ai_does_not_orphan_the_backend() {
    let env = Env::new();
    let dir = env.path("pids");
    sleeper(&env, "claude", &dir);
    let mut child = env
        .ai()
        .args(["sonnet", "x"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let fake = pids(&dir, "pid.", 1, &mut child)[0];
    kill(&child, "-KILL");
    child.wait_status();
    assert!(
        wait_gone(fake, Duration::from_secs(10)),
        "the backend (pid {fake}) outlived a SIGKILL of ai"
    );
}

/// Ctrl+\ (SIGQUIT) and SIGHUP are handled like SIGTERM: the whole group stops, 128 + signal.
#[test]
fn sigquit_and_sighup_stop_the_backend() {
    for (sig, code) in [("-QUIT", 131), ("-HUP", 129)] {
        let env = Env::new();
        let dir = env.path("pids");
        sleeper(&env, "claude", &dir);
        let mut child = env
            .ai()
            .args(["sonnet", "x"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let fake = pids(&dir, "pid.", 1, &mut child)[0];
        let grandchild = pids(&dir, "grandchild.", 1, &mut child)[0];
        kill(&child, sig);
        let status = child.wait_status();
        assert_eq!(status.code(), Some(code), "{sig}");
        for pid in [fake, grandchild] {
            assert!(
                wait_gone(pid, Duration::from_secs(10)),
                "{sig}: pid {pid} still runs"
            );
        }
    }
}

/// SIGTERM ends a call with 143 (128 + 15), Ctrl+C with 130.
#[test]
fn sigterm_exits_143() {
    let env = Env::new();
    let dir = env.path("pids");
    sleeper(&env, "claude", &dir);
    let mut child = env
        .ai()
        .args(["sonnet", "x"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let fake = pids(&dir, "pid.", 1, &mut child)[0];
    kill(&child, "-TERM");
    assert_eq!(child.wait_status().code(), Some(143));
    assert!(wait_gone(fake, Duration::from_secs(10)));
}

/// More models than the old 32-slot registry: Ctrl+C stops all of them.
#[test]
fn ctrl_c_stops_forty_backends() {
    let env = Env::new();
    let dir = env.path("pids");
    sleeper(&env, "claude", &dir);
    let mut args = vec!["sonnet"; 40];
    args.push("x");
    let mut child = env
        .ai()
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let all = pids(&dir, "pid.", 40, &mut child);
    kill(&child, "-INT");
    let sent = Instant::now();
    let status = child.wait_status();
    let took = sent.elapsed();
    assert_eq!(status.code(), Some(130));
    // Generous: the backends would sleep 30 s; the stop itself takes at most 1.5 s.
    assert!(
        took < Duration::from_secs(15),
        "ai took {took:?}: it waited for backends it could not stop"
    );
    for pid in all {
        assert!(
            wait_gone(pid, Duration::from_secs(10)),
            "backend {pid} still runs"
        );
    }
}
