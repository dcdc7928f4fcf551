//! Limits on what `ai` holds (issue 10): standard input and a backend CLI's stdout.

use crate::support::Env;

#[test]
fn stdin_past_8_mib_is_refused_before_any_chat() {
    let env = Env::new();
    let out = env
        .ai()
        .args(["sonnet", "summarize"])
        .write_stdin(vec![b'a'; 8 * 1024 * 1024 + 1])
        .run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: standard input is longer than 8 MiB"),
        "{err}"
    );
    assert!(err.contains("hint: "), "{err}");
    assert!(env.calls().is_empty(), "the backend ran");
    let chats = std::fs::read_dir(env.home.join("chats")).map_or(0, |d| d.count());
    assert_eq!(chats, 0);
}

#[test]
fn stdin_of_exactly_8_mib_is_sent() {
    let env = Env::new();
    let out = env
        .ai()
        .args(["--no-chat", "sonnet"])
        .write_stdin(vec![b'a'; 8 * 1024 * 1024])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin("claude").len(), 8 * 1024 * 1024);
}

#[test]
fn a_cli_reply_past_16_mib_stops_the_backend() {
    let env = Env::new();
    // 17 MiB, then a marker the test looks for: the backend must be stopped before it.
    env.script(
        "codex",
        &format!(
            "i=0\nwhile [ $i -lt 17 ]; do \"$CAT\" '{big}'; i=$((i+1)); done\n: > '{done}'\nexit 0\n",
            big = env.path("mib").display(),
            done = env.path("finished").display()
        ),
    );
    std::fs::write(env.path("mib"), vec![b'q'; 1024 * 1024]).unwrap();
    let out = env.ai().args(["codex", "hi"]).run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("longer than 16 MiB"), "{err}");
    assert!(
        out.stdout.len() <= 16 * 1024 * 1024 + 1,
        "{}",
        out.stdout.len()
    );
    assert!(
        !env.path("finished").exists(),
        "the backend was not stopped"
    );
}
