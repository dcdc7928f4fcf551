//! Limits on what `ai` holds (issue 10): standard input and a backend CLI's stdout.

use crate::support::Env;

#[test]
fn stdin_past_6_mib_is_refused_before_any_chat() {
    let env = Env::new();
    let out = env
        .ai()
        .args(["sonnet", "summarize"])
        .write_stdin(vec![b'a'; 6 * 1024 * 1024 + 1])
        .run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error: standard input is longer than 6 MiB"),
        "{err}"
    );
    assert!(err.contains("hint: "), "{err}");
    assert!(env.calls().is_empty(), "the backend ran");
    let chats = std::fs::read_dir(env.home.join("chats")).map_or(0, |d| d.count());
    assert_eq!(chats, 0);
}

#[test]
fn stdin_of_exactly_6_mib_is_sent() {
    let env = Env::new();
    let out = env
        .ai()
        .args(["--no-chat", "sonnet"])
        .write_stdin(vec![b'a'; 6 * 1024 * 1024])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin("claude").len(), 6 * 1024 * 1024);
}

#[test]
fn a_cli_reply_past_8_mib_stops_the_backend() {
    let env = Env::new();
    // 9 MiB, then a marker the test looks for: the backend must be stopped before it.
    env.script(
        "codex",
        &format!(
            "i=0\nwhile [ $i -lt 9 ]; do \"$CAT\" '{big}'; i=$((i+1)); done\n: > '{done}'\nexit 0\n",
            big = env.path("mib").display(),
            done = env.path("finished").display()
        ),
    );
    std::fs::write(env.path("mib"), vec![b'q'; 1024 * 1024]).unwrap();
    let out = env.ai().args(["codex", "hi"]).run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("longer than 8 MiB"), "{err}");
    assert!(
        out.stdout.len() <= 8 * 1024 * 1024 + 1,
        "{}",
        out.stdout.len()
    );
    assert!(
        !env.path("finished").exists(),
        "the backend was not stopped"
    );
}

#[test]
fn files_and_stdin_share_the_6_mib_of_a_prompt() {
    let env = Env::new();
    for name in ["a.txt", "b.txt", "c.txt"] {
        env.project_file(name, vec![b'f'; 1000 * 1024]);
    }
    // Three files of 1000 KiB leave a little over 3 MiB for standard input.
    let out = env
        .ai()
        .args(["sonnet", "-F", "a.txt,b.txt,c.txt", "compare"])
        .write_stdin(vec![b's'; 3 * 1024 * 1024 + 200 * 1024])
        .run();
    let err = out.stderr.clone();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("standard input and the -F files together are longer than 6 MiB"),
        "{err}"
    );
    assert!(env.calls().is_empty(), "the backend ran");
    // What fits is sent whole.
    let out = env
        .ai()
        .args(["--no-chat", "sonnet", "-F", "a.txt,b.txt,c.txt", "compare"])
        .write_stdin(vec![b's'; 3 * 1024 * 1024])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
}
