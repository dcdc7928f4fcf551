//! A hermetic world for one test: a temp dir holding the `ai` home, a project folder to run in,
//! and fake backend CLIs that record what they were given and reply as the test tells them.
//!
//! Layout of the temp dir (also the child's `$HOME`):
//!
//! ```text
//! home/      AI_CLI_HOME
//! bin/       fake programs (claude, codex, gemini, qwen, ollama, and any a test adds)
//! project/   the working directory of `ai`
//! rec/       what each fake received: NAME.argv (NUL-separated), NAME.stdin, NAME.stdin-source,
//!            and calls.log (one program name per call)
//! behave/    how each fake behaves: NAME.stdout, NAME.stderr, NAME.exit, NAME.sleep, NAME.sh
//! ```
//!
//! Only the child's environment is touched: it starts empty and gets PATH, HOME, AI_CLI_HOME and
//! an OLLAMA_HOST where nothing listens.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use tempfile::TempDir;

/// The backend CLIs `ai` drives.
pub const BACKENDS: [&str; 5] = ["claude", "codex", "gemini", "qwen", "ollama"];

/// Any single `ai` run taking longer than this has hung: fail instead of blocking the suite.
pub const HANG: Duration = Duration::from_secs(60);

pub fn ai_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_ai"))
}

/// Absolute path of a system utility, so fakes work whatever PATH `ai` gets.
fn util(name: &str) -> String {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("test needs /usr/bin/{name} or /bin/{name}"))
        .display()
        .to_string()
}

pub struct Env {
    _tmp: TempDir,
    /// The temp dir; also `$HOME` of the child.
    pub root: PathBuf,
    /// `AI_CLI_HOME`.
    pub home: PathBuf,
    pub bin: PathBuf,
    /// Working directory of `ai`.
    pub project: PathBuf,
    rec: PathBuf,
    behave: PathBuf,
    path: String,
    set_ai_home: bool,
}

impl Env {
    /// All five fake backends installed; PATH is `bin:/usr/bin:/bin` (the fakes come first).
    pub fn new() -> Env {
        let env = Env::bare().with_system_path();
        for name in BACKENDS {
            env.install(name);
        }
        env
    }

    /// No fake installed; PATH is only the (empty) fake `bin/`, so nothing of the real system is
    /// found either.
    pub fn bare() -> Env {
        let tmp = tempfile::Builder::new()
            .prefix("ai-test-")
            .tempdir()
            .expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let dirs = ["home", "bin", "project", "rec", "behave"].map(|d| root.join(d));
        for d in &dirs {
            fs::create_dir_all(d).expect("create test dir");
        }
        let [home, bin, project, rec, behave] = dirs;
        let path = bin.display().to_string();
        Env {
            _tmp: tmp,
            root,
            home,
            bin,
            project,
            rec,
            behave,
            path,
            set_ai_home: true,
        }
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

    /// Write a fake program called `name` into `bin/`.
    pub fn install(&self, name: &str) {
        let script = FAKE
            .replace("@NAME@", name)
            .replace("@REC@", &self.rec.display().to_string())
            .replace("@BEHAVE@", &self.behave.display().to_string())
            .replace("@CAT@", &util("cat"))
            .replace("@SLEEP@", &util("sleep"))
            .replace("@READLINK@", &util("readlink"));
        let path = self.bin.join(name);
        fs::write(&path, script).expect("write fake");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod fake");
    }

    pub fn uninstall(&self, name: &str) {
        fs::remove_file(self.bin.join(name)).expect("remove fake");
    }

    fn behave_file(&self, name: &str, what: &str, text: &str) {
        fs::write(self.behave.join(format!("{name}.{what}")), text).expect("write behaviour");
    }

    /// What the fake prints on stdout (default: `reply from NAME\n`).
    pub fn reply(&self, name: &str, text: &str) {
        self.behave_file(name, "stdout", text);
    }

    /// What the fake prints on stderr (after its stdout).
    pub fn stderr(&self, name: &str, text: &str) {
        self.behave_file(name, "stderr", text);
    }

    pub fn exit_code(&self, name: &str, code: i32) {
        self.behave_file(name, "exit", &code.to_string());
    }

    /// Shell code the fake runs after recording its input and before the default behaviour;
    /// `exit` in it ends the fake. `$rec` and `$n` (its name) are set; utilities are `$CAT`,
    /// `$SLEEP`.
    pub fn script(&self, name: &str, sh: &str) {
        self.behave_file(name, "sh", sh);
    }

    /// The fake does not read its stdin (for a child that exits without reading the prompt).
    pub fn skip_stdin(&self, name: &str) {
        self.behave_file(name, "nostdin", "");
    }

    /// `ai`, ready to run in this world (assert_cmd, with a hang guard).
    pub fn ai(&self) -> Command {
        let mut cmd = Command::from_std(self.ai_std());
        cmd.timeout(HANG);
        cmd
    }

    /// `ai` as a plain std command (stdin: /dev/null unless the test sets it).
    pub fn ai_std(&self) -> StdCommand {
        let mut cmd = StdCommand::new(ai_bin());
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.root)
            // `ai init` asks a local Ollama server for its models: never a real one here.
            .env("OLLAMA_HOST", closed_port_url())
            .stdin(Stdio::null());
        if self.set_ai_home {
            cmd.env("AI_CLI_HOME", &self.home);
        }
        cmd
    }

    /// The arguments the fake `name` got on its last call.
    pub fn argv(&self, name: &str) -> Vec<String> {
        let bytes = fs::read(self.rec.join(format!("{name}.argv")))
            .unwrap_or_else(|_| panic!("{name} was not called; calls: {:?}", self.calls()));
        let text = String::from_utf8(bytes).expect("argv is UTF-8");
        let mut args: Vec<String> = text.split('\0').map(str::to_owned).collect();
        assert_eq!(args.pop().as_deref(), Some(""), "argv ends in NUL");
        args
    }

    /// The bytes the fake `name` read from its stdin on its last call.
    pub fn stdin(&self, name: &str) -> Vec<u8> {
        fs::read(self.rec.join(format!("{name}.stdin")))
            .unwrap_or_else(|_| panic!("{name} did not record stdin; calls: {:?}", self.calls()))
    }

    pub fn stdin_text(&self, name: &str) -> String {
        String::from_utf8(self.stdin(name)).expect("stdin is UTF-8")
    }

    /// What the fake's fd 0 was (`/dev/null`, `pipe:[…]`, a file path).
    pub fn stdin_source(&self, name: &str) -> String {
        fs::read_to_string(self.rec.join(format!("{name}.stdin-source")))
            .expect("stdin source recorded")
            .trim()
            .to_owned()
    }

    /// Program names of every fake call, in order.
    pub fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.rec.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    pub fn config_path(&self) -> PathBuf {
        self.home.join("config.json")
    }

    pub fn write_config(&self, json: &str) {
        fs::write(self.config_path(), json).expect("write config");
    }

    pub fn config(&self) -> serde_json::Value {
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
}

/// The fake backend. Records argv NUL-separated (so spaces and newlines stay unambiguous), where
/// its stdin came from, and the stdin bytes; then does what `behave/` says.
const FAKE: &str = r#"#!/bin/sh
n='@NAME@'
rec='@REC@'
b='@BEHAVE@'
CAT='@CAT@'
SLEEP='@SLEEP@'
: > "$rec/$n.argv"
for a in "$@"; do printf '%s\0' "$a" >> "$rec/$n.argv"; done
: > "$rec/$n.stdin"
'@READLINK@' /proc/$$/fd/0 > "$rec/$n.stdin-source" 2>/dev/null
if [ ! -f "$b/$n.nostdin" ]; then "$CAT" > "$rec/$n.stdin"; fi
printf '%s\n' "$n" >> "$rec/calls.log"
if [ -f "$b/$n.sh" ]; then . "$b/$n.sh"; fi
if [ -f "$b/$n.sleep" ]; then "$SLEEP" "$("$CAT" "$b/$n.sleep")"; fi
if [ -f "$b/$n.stdout" ]; then "$CAT" "$b/$n.stdout"; else printf 'reply from %s\n' "$n"; fi
if [ -f "$b/$n.stderr" ]; then "$CAT" "$b/$n.stderr" >&2; fi
if [ -f "$b/$n.exit" ]; then exit "$("$CAT" "$b/$n.exit")"; fi
exit 0
"#;

/// A loopback URL where nothing listens (a port bound and released again), so a connection is
/// refused at once.
fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("local address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

/// Strings as owned argv.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// Wait (polling) until `path` exists; false after `limit`.
pub fn wait_for_file(path: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    path.exists()
}

pub fn read_pid(path: &Path) -> u32 {
    fs::read_to_string(path)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid is a number")
}

/// Has the process ended? A zombie counts as ended: it no longer runs, and in a container the
/// reaper of orphans may never collect it.
pub fn process_gone(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            // "pid (comm) S …": the state follows the last ')'.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            matches!(state, Some("Z") | Some("X"))
        }
    }
}

/// Wait until the process has ended; false if it still runs after `limit`. (A kill is
/// asynchronous: the caller's exit can precede the last process dying by a moment.)
pub fn wait_gone(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if process_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    process_gone(pid)
}

/// Wait for a child with a hang guard; kills it and panics on a hang.
pub fn wait_with_guard(
    child: &mut std::process::Child,
    limit: Duration,
) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ai did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Read a pipe to its end on a thread (so a hang cannot block the test).
pub fn drain<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// A deterministic text of exactly `len` bytes with many lines, multi-byte characters and shell
/// metacharacters, and no trailing newline.
pub fn big_text(len: usize) -> String {
    let pattern = "line $(x) `y` 'q' \"d\" ; | & > < \\ é ü 中文 🙂 \t tab\n";
    let mut s = String::with_capacity(len + pattern.len());
    let mut i = 0usize;
    while s.len() < len {
        s.push_str(&format!("{i:07} "));
        s.push_str(pattern);
        i += 1;
    }
    // Cut on a char boundary at or below len, then pad with ASCII to the exact length.
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    while s.len() < len {
        s.push('x');
    }
    if s.ends_with('\n') {
        s.pop();
        s.push('z');
    }
    s
}

/// Run `ai ARGS` (a shell-quoted string) on a pseudo-terminal (util-linux `script`), answering
/// `input` on it; the exit code and everything the terminal showed.
pub fn on_terminal(env: &Env, args: &str, input: &str) -> (Option<i32>, String) {
    use std::io::Write;
    let ai = env.ai_std();
    let mut cmd = StdCommand::new("/usr/bin/script");
    cmd.args([
        "-qec",
        &format!("'{}' {args}", ai_bin().display()),
        "/dev/null",
    ])
    .current_dir(&env.project)
    .env_clear();
    for (k, v) in ai.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("answer");
    let out = child.wait_with_output().expect("script output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
