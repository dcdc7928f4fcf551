//! Running `ai` on a pseudo-terminal, for what only happens there (help for a bare `ai`, the
//! spinner, the `run` confirmation).

use super::{Env, ai_bin};

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
