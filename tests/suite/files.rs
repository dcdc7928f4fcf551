//! `-F`: files and folders as context, inside the working directory only.

use std::os::unix::fs::symlink;

use crate::support::{Env, big_text};

fn block(path: &str, body: &str) -> String {
    format!("<file path=\"{path}\">\n{body}\n</file>")
}

#[test]
fn one_file() {
    let env = Env::new();
    env.project_file("a.txt", "alpha\n");
    let out = env.ai().args(["-F", "a.txt", "sonnet", "explain"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.stdin_text("claude"),
        format!("{}\n\nexplain", block("a.txt", "alpha"))
    );
}

#[test]
fn file_alone_is_a_prompt() {
    let env = Env::new();
    env.project_file("a.txt", "alpha");
    let out = env.ai().args(["--file", "a.txt", "codex"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("codex"), block("a.txt", "alpha"));
}

#[test]
fn large_file_arrives_whole() {
    let env = Env::new();
    let text = big_text(300 * 1024);
    env.project_file("big.txt", &text);
    let out = env.ai().args(["-F", "big.txt", "gemini"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let got = env.stdin_text("gemini");
    let want = block("big.txt", &text);
    assert_eq!(got.len(), want.len());
    assert!(got == want, "the file arrived changed");
}

#[test]
fn folder_top_level_files_sorted() {
    let env = Env::new();
    env.project_file("docs/b.md", "B");
    env.project_file("docs/a.md", "A");
    env.project_file("docs/c.txt", "C\n");
    env.project_file("docs/sub/deep.md", "DEEP");
    let out = env.ai().args(["-F", "docs", "qwen", "sum up"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let want = [
        block("docs/a.md", "A"),
        block("docs/b.md", "B"),
        block("docs/c.txt", "C"),
        "sum up".to_owned(),
    ]
    .join("\n\n");
    assert_eq!(env.stdin_text("qwen"), want);
}

#[test]
fn comma_separated_and_repeated() {
    let env = Env::new();
    env.project_file("a.txt", "A");
    env.project_file("b.txt", "B");
    env.project_file("c.txt", "C");
    let want = [
        block("a.txt", "A"),
        block("b.txt", "B"),
        block("c.txt", "C"),
        "q".into(),
    ]
    .join("\n\n");

    let out = env
        .ai()
        .args(["-F", "a.txt,b.txt", "-F", "c.txt", "sonnet", "q"])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), want);

    let out = env
        .ai()
        .args(["--file=a.txt", "--file", "b.txt,c.txt", "sonnet", "q"])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), want);
}

#[test]
fn hidden_binary_and_large_files_are_skipped_with_a_notice() {
    let env = Env::new();
    env.project_file("dir/.env", "SECRET=1");
    env.project_file("dir/image.bin", b"PNG\0\x01\x02");
    env.project_file("dir/huge.txt", "x".repeat(1024 * 1024 + 1));
    env.project_file("dir/latin1.txt", b"caf\xe9");
    env.project_file("dir/ok.txt", "fine");
    let out = env.ai().args(["-F", "dir", "sonnet", "q"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.stdin_text("claude"),
        format!("{}\n\nq", block("dir/ok.txt", "fine"))
    );
    let err = out.stderr;
    assert!(err.contains("skipped dir/.env: hidden file"), "{err}");
    assert!(err.contains("skipped dir/image.bin: binary file"), "{err}");
    assert!(
        err.contains("skipped dir/huge.txt: larger than 1 MiB"),
        "{err}"
    );
    assert!(err.contains("skipped dir/latin1.txt"), "{err}");
    assert!(!env.stdin_text("claude").contains("SECRET"));

    // Named directly, a binary or large file is skipped too.
    let out = env
        .ai()
        .args(["-F", "dir/image.bin,dir/huge.txt", "sonnet", "q"])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), "q");
    assert!(out.stderr.contains("binary file"), "{}", out.stderr);
    assert!(out.stderr.contains("larger than 1 MiB"), "{}", out.stderr);
}

#[test]
fn exactly_one_mebibyte_is_accepted() {
    let env = Env::new();
    env.project_file("edge.txt", "y".repeat(1024 * 1024));
    let out = env.ai().args(["-F", "edge.txt", "codex"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.stdin("codex").len(),
        1024 * 1024 + block("edge.txt", "").len()
    );
}

#[test]
fn more_than_five_mebibytes_in_total_is_an_error() {
    let env = Env::new();
    for i in 0..6 {
        env.project_file(&format!("many/f{i}.txt"), "z".repeat(1_000_000));
    }
    let out = env.ai().args(["-F", "many", "sonnet", "q"]).run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("error: -F files add up to more than 5 MiB"),
        "{}",
        out.stderr
    );
    assert!(env.calls().is_empty(), "nothing was sent");
}

#[test]
fn paths_outside_the_working_directory_are_refused() {
    let env = Env::new();
    std::fs::write(env.path("outside.txt"), "OUTSIDE").unwrap();
    env.project_file("inside.txt", "in");
    symlink(env.path("outside.txt"), env.project.join("link.txt")).unwrap();
    let outside_abs = env.path("outside.txt").display().to_string();
    let mut refused = vec![
        "../outside.txt",
        outside_abs.as_str(),
        "/etc/passwd",
        "link.txt",
        "inside.txt,../outside.txt",
        "..",
    ];
    if std::path::Path::new("/etc/hostname").exists() {
        refused.push("/etc/hostname");
    }
    for given in refused {
        let out = env.ai().args(["-F", given, "sonnet", "q"]).run();
        assert_eq!(out.status.code(), Some(2), "-F {given}: {}", out.stderr);
        let err = out.stderr;
        assert!(
            err.contains("outside the working directory"),
            "-F {given}: {err}"
        );
        assert!(err.contains("hint: "), "-F {given}: {err}");
        assert!(env.calls().is_empty(), "-F {given}: nothing was sent");
    }
}

#[test]
fn a_link_in_a_folder_pointing_outside_is_skipped() {
    let env = Env::new();
    std::fs::write(env.path("outside.txt"), "OUTSIDE").unwrap();
    env.project_file("dir/real.txt", "REAL");
    symlink(env.path("outside.txt"), env.project.join("dir/sneaky.txt")).unwrap();
    // A link to a file inside the working directory is fine.
    env.project_file("other.txt", "OTHER");
    symlink(
        env.project.join("other.txt"),
        env.project.join("dir/inner.txt"),
    )
    .unwrap();
    let out = env.ai().args(["-F", "dir", "sonnet", "q"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let sent = env.stdin_text("claude");
    assert!(!sent.contains("OUTSIDE"), "{sent}");
    assert_eq!(
        sent,
        [
            block("dir/inner.txt", "OTHER"),
            block("dir/real.txt", "REAL"),
            "q".into()
        ]
        .join("\n\n")
    );
    assert!(
        out.stderr
            .contains("skipped dir/sneaky.txt: links outside the working directory"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_file_is_a_usage_error() {
    let env = Env::new();
    let out = env.ai().args(["-F", "nope.txt", "sonnet", "q"]).run();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr
            .contains("error: cannot read -F nope.txt: no such file or folder"),
        "{}",
        out.stderr
    );
    assert!(env.calls().is_empty());
}

#[test]
fn paths_are_shown_relative() {
    let env = Env::new();
    env.project_file("src/main.rs", "fn main() {}");
    let abs = env.project.join("src/main.rs").display().to_string();
    for given in [abs.as_str(), "./src/../src/main.rs", "src//main.rs"] {
        let out = env.ai().args(["-F", given, "sonnet", "q"]).run();
        assert!(out.status.success(), "-F {given}: {}", out.stderr);
        assert_eq!(
            env.stdin_text("claude"),
            format!("{}\n\nq", block("src/main.rs", "fn main() {}")),
            "-F {given}"
        );
    }
    // The working directory itself: its top-level files, named without a `./`.
    env.project_file("top.txt", "T");
    let out = env.ai().args(["-F", ".", "sonnet", "q"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.stdin_text("claude"),
        format!("{}\n\nq", block("top.txt", "T"))
    );
}

#[test]
fn fifos_are_skipped_not_read() {
    let env = Env::new();
    env.project_file("dir/ok.txt", "OK");
    for fifo in ["dir/pipe", "pipe2"] {
        let status = std::process::Command::new("mkfifo")
            .arg(env.project.join(fifo))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let out = env.ai().args(["-F", "dir", "sonnet", "q"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.stdin_text("claude"),
        format!("{}\n\nq", block("dir/ok.txt", "OK"))
    );
    let out = env.ai().args(["-F", "pipe2", "sonnet", "q"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), "q");
    assert!(
        out.stderr.contains("skipped pipe2: not a regular file"),
        "{}",
        out.stderr
    );
}

#[test]
fn quiet_hides_skip_notices() {
    let env = Env::new();
    env.project_file("dir/.hidden", "H");
    env.project_file("dir/ok.txt", "OK");
    let out = env.ai().args(["-q", "-F", "dir", "sonnet", "q"]).run();
    assert!(out.status.success());
    assert_eq!(out.stderr, "");
    assert!(!env.stdin_text("claude").contains('H'));
}
