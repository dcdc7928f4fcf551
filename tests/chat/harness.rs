//! A hermetic test environment: a temporary `AI_CLI_HOME` and `HOME`, a cleared environment,
//! and a `bin/` folder of fake backend CLIs that is the only thing on the child's PATH besides
//! /usr/bin and /bin. Helpers read chat files back as JSON records.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tempfile::TempDir;

/// The binary under test.
pub const AI: &str = env!("CARGO_BIN_EXE_ai");

/// How long any wait on a condition may take before the test fails. Generous: only a broken
/// build gets near it, so it never makes a test flaky.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A fake `gemini` that answers slowly: it reads the prompt, prints a first chunk, writes its
/// pid to `$FAKE_STATE/gemini.pid`, then waits until `$FAKE_STATE/release` exists (at most
/// about a minute) before printing the rest.
pub const SLOW_GEMINI: &str = r#"/bin/cat > "$FAKE_STATE/gemini.stdin"
printf 'partial answer'
echo $$ > "$FAKE_STATE/gemini.pid"
i=0
while [ ! -e "$FAKE_STATE/release" ] && [ $i -lt 1200 ]; do /bin/sleep 0.05; i=$((i+1)); done
printf ' and the rest\n'
"#;

/// A fake `gemini` that fails once (exit 1, a message on stderr), then answers.
pub const FLAKY_GEMINI: &str = r#"/bin/cat > "$FAKE_STATE/gemini.stdin"
if [ ! -e "$FAKE_STATE/failed-once" ]; then
  : > "$FAKE_STATE/failed-once"
  echo 'quota exceeded, try again later' >&2
  exit 1
fi
printf 'recovered answer\n'
"#;

/// A fake `claude` that records its arguments (one line per call in `claude.calls`) and its
/// stdin (`claude.stdin.N` for call N), then answers.
pub const RECORDING_CLAUDE: &str = r#"echo "$*" >> "$FAKE_STATE/claude.calls"
n=$(/usr/bin/wc -l < "$FAKE_STATE/claude.calls")
/bin/cat > "$FAKE_STATE/claude.stdin.$((n))"
printf 'claude reply\n'
"#;

/// A fake `codex` that records its arguments and stdin, then answers.
pub const RECORDING_CODEX: &str = r#"echo "$*" >> "$FAKE_STATE/codex.calls"
/bin/cat > "$FAKE_STATE/codex.stdin"
printf 'codex reply\n'
"#;

pub struct Env {
    _tmp: TempDir,
    /// `AI_CLI_HOME`.
    pub home: PathBuf,
    /// `HOME` (and the working directory of every call).
    pub user_home: PathBuf,
    /// Fake backends; first on the child's PATH.
    pub bin: PathBuf,
    /// Scratch space for fakes (`$FAKE_STATE`).
    pub state: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::Builder::new()
            .prefix("ai-chat-test")
            .tempdir()
            .expect("temp dir");
        let root = tmp.path().to_path_buf();
        let env = Env {
            home: root.join("ai-home"),
            user_home: root.join("user"),
            bin: root.join("bin"),
            state: root.join("state"),
            _tmp: tmp,
        };
        for d in [&env.home, &env.user_home, &env.bin, &env.state] {
            fs::create_dir_all(d).expect("create test dir");
        }
        env
    }

    /// An environment whose default model is the built-in `echo` backend.
    pub fn echo() -> Env {
        let env = Env::new();
        env.config(r#"{"default_alias":"echo"}"#);
        env
    }

    pub fn config(&self, json: &str) {
        fs::write(self.home.join("config.json"), json).expect("write config");
    }

    /// Install a fake backend CLI `name` running `body` under /bin/sh.
    pub fn fake(&self, name: &str, body: &str) {
        let path = self.bin.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write fake");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod fake");
    }

    /// A command running `ai args…` hermetically, with stdin from /dev/null.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(AI);
        cmd.args(args)
            .env_clear()
            .env("AI_CLI_HOME", &self.home)
            .env("HOME", &self.user_home)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("FAKE_STATE", &self.state)
            .current_dir(&self.user_home)
            .stdin(Stdio::null());
        cmd
    }

    /// Run `ai args…` to completion.
    pub fn run(&self, args: &[&str]) -> Out {
        self.spawn(args).wait()
    }

    /// Start `ai args…`; its stdout and stderr go to files that can be read while it runs.
    pub fn spawn(&self, args: &[&str]) -> Proc {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let out_path = self.state.join(format!("ai-{n}.out"));
        let err_path = self.state.join(format!("ai-{n}.err"));
        let out = File::create(&out_path).expect("stdout file");
        let err = File::create(&err_path).expect("stderr file");
        let child = self
            .command(args)
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start ai");
        Proc {
            child: Some(child),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            out_path,
            err_path,
        }
    }

    /// `ai chat new MODEL`: the new chat's ID.
    pub fn new_chat(&self, model: &str) -> String {
        let out = self.run(&["chat", "new", model]).success();
        let id = out.stdout.trim().to_owned();
        assert_eq!(out.stdout, format!("{id}\n"), "chat new prints only the ID");
        id
    }

    /// A plain prompt to the default model: the ID of the chat it started.
    pub fn start(&self, prompt: &str) -> String {
        self.run(&[prompt]).success().chat_id()
    }

    /// Let slow fakes finish.
    pub fn release(&self) {
        fs::write(self.state.join("release"), "").expect("release fakes");
    }

    /// Wait until the slow fake `name` has started and written its pid; remove the pid file
    /// (so the next start can be awaited) and return the pid.
    pub fn wait_started(&self, name: &str) -> i32 {
        let path = self.state.join(format!("{name}.pid"));
        let mut pid = 0;
        wait_for(
            &format!("fake {name} to start"),
            || match fs::read_to_string(&path) {
                Ok(s) if s.ends_with('\n') => match s.trim().parse::<i32>() {
                    Ok(p) => {
                        pid = p;
                        true
                    }
                    Err(_) => false,
                },
                _ => false,
            },
        );
        fs::remove_file(&path).expect("remove pid file");
        pid
    }

    pub fn chats_dir(&self) -> PathBuf {
        self.home.join("chats")
    }

    pub fn chat_path(&self, id: &str) -> PathBuf {
        self.chats_dir().join(format!("{id}.jsonl"))
    }

    /// Every file name in the chats folder, sorted (empty when the folder does not exist).
    pub fn chat_files(&self) -> Vec<String> {
        let Ok(dir) = fs::read_dir(self.chats_dir()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = dir
            .map(|e| {
                e.expect("dir entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    /// The IDs of the `.jsonl` chats, sorted.
    pub fn chat_ids(&self) -> Vec<String> {
        self.chat_files()
            .iter()
            .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
            .collect()
    }

    pub fn bytes(&self, id: &str) -> Vec<u8> {
        fs::read(self.chat_path(id)).expect("read chat file")
    }

    /// Every record of a chat file. The file must end with a newline and every line must be a
    /// JSON object with a `type`.
    pub fn records(&self, id: &str) -> Vec<Value> {
        parse_records(&self.chat_path(id))
    }

    pub fn header(&self, id: &str) -> Value {
        let recs = self.records(id);
        assert_eq!(recs[0]["type"], "chat", "line 1 is the header: {recs:?}");
        recs[0].clone()
    }

    /// The message records of a chat, in file order.
    pub fn messages(&self, id: &str) -> Vec<Value> {
        self.records(id)
            .into_iter()
            .filter(|r| r["type"] == "message")
            .collect()
    }

    /// Write a chat file directly.
    pub fn write_chat(&self, id: &str, records: &[Value]) {
        fs::create_dir_all(self.chats_dir()).expect("chats dir");
        let mut text = String::new();
        for r in records {
            text.push_str(&serde_json::to_string(r).expect("encode record"));
            text.push('\n');
        }
        fs::write(self.chat_path(id), text).expect("write chat file");
    }

    pub fn append_raw(&self, id: &str, bytes: &[u8]) {
        let mut f = OpenOptions::new()
            .append(true)
            .open(self.chat_path(id))
            .expect("open chat file");
        f.write_all(bytes).expect("append");
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // Slow fakes left behind by a failing test end within 50 ms.
        let _ = fs::write(self.state.join("release"), "");
    }
}

/// Parse a chat file line by line (see [`Env::records`]).
pub fn parse_records(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).expect("read chat file");
    assert!(
        text.ends_with('\n'),
        "{} does not end with a newline:\n{text}",
        path.display()
    );
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{} line {}: {e}: {line}", path.display(), i + 1));
            assert!(v["type"].is_string(), "line {} has no type: {line}", i + 1);
            v
        })
        .collect()
}

/// A header record as `ai` writes it.
pub fn header(id: &str, extra: Value) -> Value {
    let mut h = json!({"type": "chat", "v": 1, "id": id, "created": "2026-01-01T10:00:00.000Z"});
    if let (Some(h), Some(extra)) = (h.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            h.insert(k.clone(), v.clone());
        }
    }
    h
}

/// A message record from the echo model.
pub fn message(role: &str, content: &str, turn: u64) -> Value {
    json!({
        "type": "message", "role": role, "content": content, "ts": "2026-01-01T10:00:00.000Z",
        "alias": "echo", "provider": "echo", "model": "echo", "turn": turn
    })
}

/// What the echo backend replies to `prompt` with `earlier` messages of history before it.
pub fn echo_reply(prompt: &str, earlier: usize) -> String {
    let chars = prompt.chars().count();
    let lines = prompt.lines().count();
    let mut head = format!(
        "echo: model echo, {chars} characters, {lines} line{}",
        if lines == 1 { "" } else { "s" }
    );
    if earlier > 0 {
        head.push_str(&format!(
            ", {earlier} earlier message{} ({} from you)",
            if earlier == 1 { "" } else { "s" },
            earlier / 2
        ));
    }
    format!("{head}\n{prompt}\n")
}

/// Does `s` have the shape of a generated chat ID (3+ of A–Z0–9, at least one digit)?
pub fn generated_id(s: &str) -> bool {
    s.len() >= 3
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// Poll `cond` every 10 ms until it holds; fail the test after [`DEADLINE`].
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Set a file's modification time to `ago` before now.
pub fn age(path: &Path, ago: Duration) {
    let f = File::options().write(true).open(path).expect("open to age");
    f.set_modified(SystemTime::now() - ago).expect("set mtime");
}

/// Send a signal to a process (group, with a negative pid) this test started.
pub fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) takes no pointers; the pid is one of our own children.
    let rc = unsafe { libc::kill(pid, sig) };
    assert!(
        rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH),
        "kill({pid}, {sig}) failed: {}",
        std::io::Error::last_os_error()
    );
}

/// The messages of a CLI transcript (`[[role TAG]]` marker lines), as (role, content).
pub fn transcript(text: &str) -> Vec<(String, String)> {
    let marker = |line: &str| -> Option<(String, String)> {
        let inner = line.strip_prefix("[[")?.strip_suffix("]]")?;
        let (role, tag) = inner.split_once(' ')?;
        let ok = matches!(role, "system" | "user" | "assistant")
            && tag.len() == 8
            && tag.bytes().all(|b| b.is_ascii_hexdigit());
        ok.then(|| (role.to_owned(), tag.to_owned()))
    };
    let tag = text
        .lines()
        .find_map(marker)
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("no transcript markers in:\n{text}"));
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match marker(line) {
            Some((role, t)) if t == tag => out.push((role, String::new())),
            _ => {
                if let Some((_, content)) = out.last_mut() {
                    content.push_str(line);
                    content.push('\n');
                }
            }
        }
    }
    for (_, content) in &mut out {
        content.truncate(content.trim_end().len());
    }
    out
}

/// A running `ai`.
pub struct Proc {
    child: Option<Child>,
    args: Vec<String>,
    out_path: PathBuf,
    err_path: PathBuf,
}

impl Proc {
    pub fn pid(&self) -> i32 {
        self.child.as_ref().map_or(0, |c| c.id() as i32)
    }

    /// What it has written to stderr so far.
    pub fn stderr_now(&self) -> String {
        fs::read_to_string(&self.err_path).unwrap_or_default()
    }

    pub fn running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => c.try_wait().expect("try_wait").is_none(),
            None => false,
        }
    }

    /// SIGKILL, as `kill -KILL`.
    pub fn kill(&mut self) {
        if let Some(c) = self.child.as_mut() {
            c.kill().expect("kill ai");
        }
    }

    /// Wait for it to exit (failing the test after [`DEADLINE`]).
    pub fn wait(mut self) -> Out {
        let mut child = self.child.take().expect("not yet waited");
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("try_wait") {
                break s;
            }
            if start.elapsed() > DEADLINE {
                let _ = child.kill();
                let _ = child.wait();
                panic!("ai {:?} did not finish in time", self.args);
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Out {
            args: self.args.clone(),
            code: status.code(),
            stdout: fs::read_to_string(&self.out_path).expect("read stdout"),
            stderr: fs::read_to_string(&self.err_path).expect("read stderr"),
            stdout_bytes: fs::read(&self.out_path).expect("read stdout"),
            stderr_bytes: fs::read(&self.err_path).expect("read stderr"),
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A finished `ai`.
#[derive(Debug)]
pub struct Out {
    pub args: Vec<String>,
    /// `None` when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_bytes: Vec<u8>,
    pub stderr_bytes: Vec<u8>,
}

impl Out {
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

    pub fn success(self) -> Out {
        self.code(0)
    }

    /// The ID in the last `[chat: ID]` footer on stderr.
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
