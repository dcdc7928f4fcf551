//! One way to run `ai`: [`Cmd`] builds the call (a drop-in for the parts of
//! `std::process::Command` the tests use), and every way of finishing it — [`Cmd::run`],
//! [`Cmd::output`], [`Cmd::spawn`] — goes through the hang guard of [`Proc`]. [`Out`] is what a
//! finished call printed.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::kb_store::KbStore;
use super::proc::{Call, DEADLINE, Proc};

/// A call being built. Unless the test says otherwise, stdin is /dev/null and stdout and
/// stderr are captured in files (read back when it ends; a file never blocks the way a pipe
/// held open by a leftover grandchild would).
pub struct Cmd {
    inner: Command,
    words: Vec<String>,
    stdin_bytes: Option<Vec<u8>>,
    stdin_set: bool,
    stdout_set: bool,
    stderr_set: bool,
    deadline: Duration,
    runs: PathBuf,
    home: PathBuf,
    kb: Arc<KbStore>,
}

impl Cmd {
    pub(super) fn new(inner: Command, runs: &Path, home: &Path, kb: Arc<KbStore>) -> Cmd {
        Cmd {
            inner,
            words: Vec::new(),
            stdin_bytes: None,
            stdin_set: false,
            stdout_set: false,
            stderr_set: false,
            deadline: DEADLINE,
            runs: runs.to_path_buf(),
            home: home.to_path_buf(),
            kb,
        }
    }

    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Cmd {
        self.words.push(a.as_ref().to_string_lossy().into_owned());
        self.inner.arg(a);
        self
    }

    pub fn args<I, S>(mut self, list: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for a in list {
            self = self.arg(a);
        }
        self
    }

    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Cmd {
        self.inner.env(k, v);
        self
    }

    /// These bytes on a stdin pipe (written by a thread, so a child that never reads them
    /// cannot block the test).
    pub fn write_stdin(mut self, bytes: impl Into<Vec<u8>>) -> Cmd {
        self.stdin_bytes = Some(bytes.into());
        self
    }

    pub fn stdin(mut self, cfg: impl Into<Stdio>) -> Cmd {
        self.inner.stdin(cfg);
        self.stdin_set = true;
        self
    }

    pub fn stdout(mut self, cfg: impl Into<Stdio>) -> Cmd {
        self.inner.stdout(cfg);
        self.stdout_set = true;
        self
    }

    pub fn stderr(mut self, cfg: impl Into<Stdio>) -> Cmd {
        self.inner.stderr(cfg);
        self.stderr_set = true;
        self
    }

    /// A hang guard shorter than [`DEADLINE`] (only for testing the guard itself).
    pub fn deadline(mut self, limit: Duration) -> Cmd {
        self.deadline = limit;
        self
    }

    /// The program and its arguments, as failure messages show them.
    pub fn label(&self) -> String {
        let program = Path::new(self.inner.get_program())
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        format!("{program} {:?}", self.words)
    }

    /// Start it under the hang guard (see [`Proc`]).
    pub fn spawn(mut self) -> io::Result<Proc> {
        self.kb.apply(&mut self.inner, &mut self.words);
        let label = self.label();
        let capture = |set: bool, what: &str| -> io::Result<Option<(PathBuf, fs::File)>> {
            if set {
                return Ok(None);
            }
            let path = self.runs.join(format!("{}.{what}", next_run()));
            let file = fs::File::create(&path)?;
            Ok(Some((path, file)))
        };
        let out = capture(self.stdout_set, "out")?;
        let err = capture(self.stderr_set, "err")?;
        let out_path = out.map(|(p, f)| {
            self.inner.stdout(f);
            p
        });
        let err_path = err.map(|(p, f)| {
            self.inner.stderr(f);
            p
        });
        if self.stdin_bytes.is_some() {
            self.inner.stdin(Stdio::piped());
        } else if !self.stdin_set {
            self.inner.stdin(Stdio::null());
        }
        // A session of its own: no controlling terminal, so `cargo test` run from a terminal
        // behaves as in CI (nothing can ask on /dev/tty, where no one would answer). Tests that
        // want a terminal give it one (`on_terminal`, `Terminal`).
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                self.inner.pre_exec(|| {
                    libc::setsid();
                    Ok(())
                });
            }
        }
        let call = Call {
            label,
            args: self.words,
            deadline: self.deadline,
            out_path,
            err_path,
            home: self.home,
        };
        Proc::start(&mut self.inner, self.stdin_bytes, call)
    }

    /// Run to completion: status and everything printed.
    pub fn output(self) -> io::Result<Output> {
        Ok(self.spawn()?.finish())
    }

    /// Run to completion as an [`Out`].
    pub fn run(mut self) -> Out {
        let kb = Arc::clone(&self.kb);
        kb.apply(&mut self.inner, &mut self.words);
        let label = self.label();
        let out = self.spawn().expect("start ai").wait();
        // Shown only when the test fails: every call it made, with its output.
        eprintln!("$ {label}\n{out:#?}");
        out
    }
}

/// A number for each call, unique in the test binary (names its output files).
fn next_run() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    SEQ.fetch_add(1, Ordering::SeqCst)
}

/// A finished `ai`.
pub struct Out {
    pub args: Vec<String>,
    pub status: ExitStatus,
    /// `None` when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_bytes: Vec<u8>,
    pub stderr_bytes: Vec<u8>,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The byte copies would only repeat the text.
        f.debug_struct("Out")
            .field("args", &self.args)
            .field("code", &self.code)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .finish()
    }
}

impl Out {
    pub(super) fn new(args: Vec<String>, output: Output) -> Out {
        let text = |bytes: &[u8], what: &str| {
            String::from_utf8(bytes.to_vec())
                .unwrap_or_else(|e| panic!("ai {args:?}: {what} is not UTF-8 ({e})"))
        };
        Out {
            status: output.status,
            code: output.status.code(),
            stdout: text(&output.stdout, "stdout"),
            stderr: text(&output.stderr, "stderr"),
            stdout_bytes: output.stdout,
            stderr_bytes: output.stderr,
            args,
        }
    }

    /// Fail the test unless it exited with `code`.
    #[track_caller]
    pub fn code(self, code: i32) -> Out {
        assert_eq!(
            self.code,
            Some(code),
            "ai {:?}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.args,
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn success(self) -> Out {
        self.code(0)
    }

    /// Fail the test unless it exited with 0 (by reference, for a value kept around).
    #[track_caller]
    pub fn ok(&self) -> &Out {
        assert_eq!(self.code, Some(0), "call failed: {self:#?}");
        self
    }

    /// Lines of stderr that start with `error:`.
    pub fn error_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect()
    }

    /// The one `error:` line; fails when there are none or several.
    #[track_caller]
    pub fn error(&self) -> &str {
        let e = self.error_lines();
        assert_eq!(e.len(), 1, "expected one error line: {self:#?}");
        e[0]
    }

    /// Stdout as one JSON value.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {self:#?}"))
    }

    /// The ID in the first `[chat: ID]` footer on stderr (for a test that checks that this
    /// footer is also the last thing printed).
    #[track_caller]
    pub fn first_chat_id(&self) -> String {
        let at = self.stderr.find("[chat: ").unwrap_or_else(|| {
            panic!(
                "ai {:?}: no [chat: ID] footer on stderr:\n{}",
                self.args, self.stderr
            )
        });
        let rest = &self.stderr[at + "[chat: ".len()..];
        let end = rest.find(']').expect("footer ends with ]");
        rest[..end].to_owned()
    }

    /// The ID in the last `[chat: ID]` footer on stderr.
    #[track_caller]
    pub fn chat_id(&self) -> String {
        let at = self.stderr.rfind("[chat: ").unwrap_or_else(|| {
            panic!(
                "ai {:?}: no [chat: ID] footer on stderr:\n{}",
                self.args, self.stderr
            )
        });
        let rest = &self.stderr[at + "[chat: ".len()..];
        let end = rest.find(']').expect("footer ends with ]");
        rest[..end].to_owned()
    }
}
