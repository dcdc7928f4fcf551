//! A hermetic world for one test: a temp dir holding the `ai` home, a project folder to run in,
//! fake backend CLIs, and the one command builder every call goes through.
//!
//! Layout of the temp dir (also the child's `$HOME`):
//!
//! ```text
//! home/      AI_CLI_HOME
//! bin/       fake programs; first on the child's PATH
//! project/   the working directory of `ai`
//! rec/       what each recording fake received (see fake.rs)
//! behave/    how each recording fake behaves (see fake.rs)
//! state/     scratch space for fakes with a shell body (`$FAKE_STATE`)
//! runs/      stdout and stderr of every call, captured in files
//! ```
//!
//! Only the child's environment is touched: it starts empty and gets PATH, HOME, AI_CLI_HOME,
//! FAKE_STATE, `NO_COLOR=1`, an OLLAMA_HOST where nothing listens, and what the test `set`.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::Value;
use tempfile::TempDir;

use super::fake::BACKENDS;
use super::kb_store::KbStore;
use super::run::{Cmd, Out};
use super::{Proc, Server};

/// The binary under test.
pub fn ai_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_ai"))
}

/// Where a local Ollama server would be: a loopback port where nothing listens (port 1 is
/// privileged and never handed out by `bind(0)`, so no test server can take it), so `ai` never
/// asks a real one and a connection is refused at once.
const NO_OLLAMA: &str = "http://127.0.0.1:1";

/// One test's world (layout above); removed with everything in it when dropped.
pub struct Env {
    _tmp: TempDir,
    /// The temp dir; also `$HOME` of the child.
    pub root: PathBuf,
    /// `AI_CLI_HOME`.
    pub home: PathBuf,
    /// Fake programs; first on the child's PATH.
    pub bin: PathBuf,
    /// Working directory of `ai`.
    pub project: PathBuf,
    /// Scratch space for fakes (`$FAKE_STATE`).
    pub state: PathBuf,
    pub(super) rec: PathBuf,
    pub(super) behave: PathBuf,
    runs: PathBuf,
    path: String,
    set_ai_home: bool,
    vars: Vec<(String, String)>,
    /// Where the test's knowledge bases live (see `kb_store.rs`).
    pub kb: Arc<KbStore>,
}

impl Env {
    /// All five recording fakes installed; PATH is `bin:/usr/bin:/bin` (the fakes come first).
    pub fn new() -> Env {
        let env = Env::empty();
        for name in BACKENDS {
            env.install(name);
        }
        env
    }

    /// No fake installed; PATH is `bin:/usr/bin:/bin`.
    pub fn empty() -> Env {
        Env::bare().with_system_path()
    }

    /// No fake installed; PATH is only the (empty) fake `bin/`, so nothing of the real system is
    /// found either.
    pub fn bare() -> Env {
        let tmp = tempfile::Builder::new()
            .prefix("ai-test-")
            .tempdir()
            .expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let dirs =
            ["home", "bin", "project", "state", "rec", "behave", "runs"].map(|d| root.join(d));
        for d in &dirs {
            fs::create_dir_all(d).expect("create test dir");
        }
        let [home, bin, project, state, rec, behave, runs] = dirs;
        let path = bin.display().to_string();
        Env {
            _tmp: tmp,
            root,
            home,
            bin,
            project,
            state,
            rec,
            behave,
            runs,
            path,
            set_ai_home: true,
            vars: Vec::new(),
            kb: Arc::default(),
        }
    }

    /// A world without fakes whose default model is the built-in `echo` backend.
    pub fn echo() -> Env {
        let env = Env::empty();
        env.write_config(r#"{"default_alias":"echo"}"#);
        env
    }

    /// A world without fakes whose `provider` points at `server` with the test [`KEY`].
    ///
    /// [`KEY`]: super::KEY
    pub fn for_provider(provider: &str, server: &Server) -> Env {
        let mut env = Env::empty();
        super::http::point_at(&mut env, provider, server);
        env
    }

    /// PATH `bin:/usr/bin:/bin`.
    pub fn with_system_path(mut self) -> Env {
        self.path = format!("{}:/usr/bin:/bin", self.bin.display());
        self
    }

    /// PATH is only `bin/`: a backend whose fake is missing is missing for sure, even on a
    /// machine that has the real CLI installed. (The fakes call utilities by absolute path.)
    pub fn fakes_only_path(mut self) -> Env {
        self.path = self.bin.display().to_string();
        self
    }

    /// Do not set `AI_CLI_HOME`: `ai` falls back to `$HOME/.ai-cli`.
    pub fn without_ai_home(mut self) -> Env {
        self.set_ai_home = false;
        self
    }

    /// Set a variable for every later call (replacing a default such as OLLAMA_HOST).
    pub fn set(&mut self, k: &str, v: &str) -> &mut Env {
        self.vars.retain(|(n, _)| n != k);
        self.vars.push((k.to_owned(), v.to_owned()));
        self
    }

    /// `ai`, ready to run in this world: stdin from /dev/null unless the test gives one.
    pub fn ai(&self) -> Cmd {
        self.program(ai_bin())
    }

    /// `ai ARGS…`, ready to run.
    pub fn command(&self, args: &[&str]) -> Cmd {
        self.ai().args(args)
    }

    /// Run `ai ARGS…` to completion.
    pub fn run(&self, args: &[&str]) -> Out {
        self.command(args).run()
    }

    /// Start `ai ARGS…`; its stdout and stderr go to files that can be read while it runs.
    pub fn spawn(&self, args: &[&str]) -> Proc {
        self.command(args).spawn().expect("start ai")
    }

    /// Any program run the way `ai` is (same environment, folder and hang guard): the
    /// pseudo-terminal runner starts `script` with it.
    pub fn program(&self, program: impl AsRef<OsStr>) -> Cmd {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.root)
            .env("FAKE_STATE", &self.state)
            // Colour only ever appears on a terminal; pinned off so output is the same there.
            .env("NO_COLOR", "1")
            // `ai init` and `ai list` ask a local Ollama server for its models: never a real one.
            .env("OLLAMA_HOST", NO_OLLAMA)
            // Nor a real LM Studio.
            .env("LMSTUDIO_BASE_URL", NO_OLLAMA);
        if self.set_ai_home {
            cmd.env("AI_CLI_HOME", &self.home);
        }
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        Cmd::new(cmd, &self.runs, &self.home, Arc::clone(&self.kb))
    }

    pub fn config_path(&self) -> PathBuf {
        self.home.join("config.json")
    }

    /// Write `config.json` exactly as given (it may be broken on purpose).
    pub fn write_config(&self, json: &str) {
        fs::write(self.config_path(), json).expect("write config");
    }

    pub fn config(&self) -> Value {
        let text = fs::read_to_string(self.config_path()).expect("config exists");
        serde_json::from_str(&text).expect("config is JSON")
    }

    /// Write a file under the project folder (parents created).
    pub fn project_file(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.project.join(rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).expect("create parent");
        }
        fs::write(&path, contents).expect("write project file");
        path
    }

    /// A path in the temp dir (outside the project).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// A folder of notes in the temp dir (outside the project), made with the subfolders the
    /// names hold: each `(name, text)` written. Returns its path.
    pub fn notes_folder<N: AsRef<Path>, T: AsRef<[u8]>>(
        &self,
        dir: &str,
        notes: impl IntoIterator<Item = (N, T)>,
    ) -> PathBuf {
        let dir = self.path(dir);
        fs::create_dir_all(&dir).expect("create the notes folder");
        for (name, text) in notes {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).expect("create parent");
            }
            fs::write(&path, text).expect("write note");
        }
        dir
    }

    /// No file under `AI_CLI_HOME` holds the key, except `.env`, where a test may put it.
    pub fn assert_no_key_in_files(&self) {
        super::http::assert_no_key_in_files(&self.home);
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // Slow fakes left behind by a failing test end within 50 ms.
        let _ = fs::write(self.state.join("release"), "");
    }
}
