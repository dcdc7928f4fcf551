//! Fake backend CLIs: one shell template that records what it was given and replies as the
//! test tells it.
//!
//! A fake called NAME in `bin/` records into `rec/`: NAME.argv (NUL-separated), NAME.stdin,
//! NAME.stdin-source (what its fd 0 was), and calls.log (one program name per call). Then it
//! does what `behave/` says: NAME.sh (shell code it sources first; `exit` in it ends the fake),
//! NAME.sleep, NAME.stdout (default `reply from NAME`), NAME.stderr, NAME.exit. With
//! NAME.nostdin it leaves its stdin unread. [`Env::fake`] is the same fake with a whole shell
//! body of its own, for fakes with state in `$FAKE_STATE` (slow, flaky, counting calls).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::Env;

/// The backend CLIs `ai` drives.
pub const BACKENDS: [&str; 5] = ["claude", "codex", "gemini", "qwen", "ollama"];

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

impl Env {
    /// Write a recording fake program called `name` into `bin/`.
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

    /// Install a fake `name` whose whole behaviour is `body` (sh): it reads its own stdin, and
    /// exits with the status of its last command. `$FAKE_STATE` is scratch space.
    pub fn fake(&self, name: &str, body: &str) {
        self.install(name);
        self.skip_stdin(name);
        self.script(name, &format!("{body}\nexit $?\n"));
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
