//! Running `ai` on a pseudo-terminal, for what only happens there (help for a bare `ai`, the
//! spinner, the `run` confirmation).

use super::{Env, Proc, ai_bin};

/// What the line editor of `ai -i` writes when it hands a line over (bracketed paste off):
/// before it, the prompt may be drawn again as the line is edited; after it, what the line did.
pub const ENTERED: &str = "\x1b[?2004l";

/// Type a line into `ai -i` and wait for the next prompt; what the terminal showed in between.
pub fn say(term: &mut Terminal, line: &str, prompt: &str) -> String {
    term.send(&format!("{line}\r"));
    term.expect(ENTERED);
    term.expect(prompt)
}

/// Run `ai ARGS` (a shell-quoted string) on a pseudo-terminal (util-linux `script`), answering
/// `input` on it; the exit code and everything the terminal showed. `script` runs in the
/// world's environment under the same hang guard as `ai`.
pub fn on_terminal(env: &Env, args: &str, input: &str) -> (Option<i32>, String) {
    let out = env
        .program("/usr/bin/script")
        .args([
            "-qec",
            &format!("'{}' {args}", ai_bin().display()),
            "/dev/null",
        ])
        .write_stdin(input)
        .output()
        .expect("script");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `ai` on a pseudo-terminal (util-linux `script`) driven step by step, as a person types:
/// send keys, wait for what the screen shows. For the interactive session (`ai -i`).
pub struct Terminal {
    proc: Proc,
    keys: Option<std::process::ChildStdin>,
    screen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
    /// How much of the screen earlier `expect`s consumed.
    seen: usize,
}

impl Terminal {
    /// Start `ai ARGS` (a shell-quoted string) on a terminal.
    pub fn start(env: &Env, args: &str) -> Terminal {
        use std::io::Read;
        use std::process::Stdio;
        let mut proc = env
            .program("/usr/bin/script")
            // `exec`: the shell `script` starts must not stay in the terminal's foreground
            // group, where a Ctrl+C would reach it too (dash then exits with 130 after `ai`).
            .args([
                "-qec",
                &format!("exec '{}' {args}", ai_bin().display()),
                "/dev/null",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start script");
        let keys = proc.stdin.take();
        let mut out = proc.stdout.take().expect("stdout is a pipe");
        let screen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let shown = screen.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown.lock().expect("screen").extend_from_slice(&buf[..n]);
            }
        });
        Terminal {
            proc,
            keys,
            screen,
            reader,
            seen: 0,
        }
    }

    /// Type `keys` (`\r` is Enter, `\x03` Ctrl+C, `\x04` Ctrl+D).
    pub fn send(&mut self, keys: &str) {
        use std::io::Write;
        let pipe = self.keys.as_mut().expect("the terminal is open");
        pipe.write_all(keys.as_bytes()).expect("type");
        pipe.flush().expect("type");
    }

    /// Everything the terminal showed so far.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().expect("screen")).into_owned()
    }

    /// Wait until the screen shows `text` after what earlier calls consumed; returns what
    /// came before it, and consumes both. Fails the test (showing the screen) after
    /// [`DEADLINE`](super::DEADLINE).
    pub fn expect(&mut self, text: &str) -> String {
        let start = std::time::Instant::now();
        loop {
            let found = {
                let screen = self.screen.lock().expect("screen");
                let rest = &screen[self.seen.min(screen.len())..];
                rest.windows(text.len().max(1))
                    .position(|w| w == text.as_bytes())
                    .map(|at| {
                        let before = String::from_utf8_lossy(&rest[..at]).into_owned();
                        (before, at)
                    })
            };
            if let Some((before, at)) = found {
                self.seen += at + text.len();
                return before;
            }
            assert!(
                start.elapsed() < super::DEADLINE,
                "the terminal never showed {text:?}; it shows:\n{}",
                self.screen()
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Close the keyboard and wait for `ai` to end: its exit code and the whole screen.
    pub fn finish(mut self) -> (Option<i32>, String) {
        drop(self.keys.take());
        let status = self.proc.wait_status();
        // The reader sees the end of the output once `script` is gone (bounded: a leftover
        // holding the pipe is the hang guard's to kill).
        let start = std::time::Instant::now();
        while !self.reader.is_finished() && start.elapsed() < std::time::Duration::from_secs(2) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        (status.code(), self.screen())
    }
}
