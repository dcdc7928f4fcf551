//! Prompts travel as data: verbatim, whole, in the documented order, never through a shell.

use std::fs::File;
use std::process::Stdio;

use proptest::test_runner::{Config, TestRunner};

use crate::support::{Env, args, big_text, drain};

const NASTY: &str =
    "$(touch pwned) ; | & > '\" `touch pwned2` $HOME ${PATH} \\ * ? ~ # !! <(x) \n-rf";

fn assert_nothing_ran(env: &Env) {
    for dir in [&env.project, &env.root, &env.bin] {
        for name in ["pwned", "pwned2"] {
            assert!(
                !dir.join(name).exists(),
                "a shell ran the prompt: {}",
                dir.join(name).display()
            );
        }
    }
}

#[test]
fn shell_metacharacters_arrive_verbatim_on_stdin() {
    let env = Env::new();
    for alias in ["sonnet", "codex", "gemini", "qwen", "ollama"] {
        let out = env.ai().args([alias, NASTY]).run();
        assert!(out.status.success(), "{alias}: {}", out.stderr);
        let program = env.calls().last().cloned().unwrap();
        assert_eq!(env.stdin_text(&program), NASTY, "{alias}");
        // The prompt is not among the arguments either.
        assert!(!env.argv(&program).iter().any(|a| a.contains("pwned")));
    }
    assert_nothing_ran(&env);
}

#[test]
fn shell_metacharacters_arrive_verbatim_as_one_argument() {
    let env = Env::new();
    env.install("mycli");
    env.write_config(
        r#"{"backends": {"mycli": {"program": "mycli", "prompt": "after-dashdash"}},
            "aliases": {"my": ["mycli", "m1"]}}"#,
    );
    let out = env.ai().args(["my", NASTY]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.argv("mycli"), args(&["--", NASTY]));
    assert_nothing_ran(&env);
}

#[test]
fn leading_dash_after_dashdash() {
    let env = Env::new();
    let out = env.ai().args(["sonnet", "--", "-rf /"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), "-rf /");
    assert_eq!(
        env.argv("claude"),
        args(&[
            "--print",
            "--model",
            "sonnet",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages"
        ])
    );

    let out = env.ai().args(["gemini", "--", "--version", "-h"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("gemini"), "--version -h");
    assert_eq!(
        env.argv("gemini"),
        args(&[
            "--skip-trust",
            "-m",
            "gemini-3-flash-preview",
            "-o",
            "stream-json"
        ])
    );
}

#[test]
fn subcommand_names_as_prompts() {
    let env = Env::new();
    let out = env.ai().args(["codex", "--", "help"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("codex"), "help");
    assert_eq!(
        env.argv("codex"),
        args(&[
            "exec",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.3-codex",
            "--json",
            "-"
        ])
    );

    let out = env.ai().args(["sonnet", "--", "resume"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), "resume");
    assert_eq!(
        env.argv("claude"),
        args(&[
            "--print",
            "--model",
            "sonnet",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages"
        ])
    );

    // Words that are ai's own commands, models or modes, after --, are prompt text too.
    for words in [
        &["list"][..],
        &["init"],
        &["default", "sonnet"],
        &["yolo", "json"],
        &["opus", "--help"],
    ] {
        let out = env.ai().args(["sonnet", "--"]).args(words).run();
        assert!(out.status.success(), "{words:?}: {}", out.stderr);
        assert_eq!(env.stdin_text("claude"), words.join(" "));
        assert_eq!(
            env.argv("claude"),
            args(&[
                "--print",
                "--model",
                "sonnet",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-partial-messages"
            ])
        );
    }
    assert!(!env.config_path().exists(), "no command ran");
}

#[test]
fn one_mebibyte_prompt_on_stdin_arrives_whole() {
    let env = Env::new();
    let text = big_text(1024 * 1024);
    for alias in ["sonnet", "codex"] {
        let out = env.ai().arg(alias).write_stdin(text.clone()).run();
        assert!(out.status.success(), "{}", out.stderr);
        let program = env.calls().last().cloned().unwrap();
        let got = env.stdin(&program);
        assert_eq!(got.len(), text.len(), "{alias}: length");
        assert!(
            got == text.as_bytes(),
            "{alias}: the prompt arrived changed"
        );
    }
}

#[test]
fn child_that_ignores_a_large_prompt_is_fine() {
    let env = Env::new();
    env.skip_stdin("gemini");
    env.reply("gemini", "answered without reading\n");
    let out = env
        .ai()
        .arg("gemini")
        .write_stdin(big_text(1024 * 1024))
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(out.stdout, "answered without reading\n");
}

#[test]
fn stdin_then_prompt_words() {
    let env = Env::new();
    let out = env
        .ai()
        .args(["sonnet", "QUESTION"])
        .write_stdin("CONTEXT\n")
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), "CONTEXT\n\nQUESTION");

    // Several words are joined by single spaces.
    let out = env
        .ai()
        .args(["codex", "what", "is", "this?"])
        .write_stdin("a\nb\n\n")
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("codex"), "a\nb\n\nwhat is this?");
}

#[test]
fn files_then_stdin_then_prompt() {
    let env = Env::new();
    env.project_file("notes.txt", "NOTES\n");
    let out = env
        .ai()
        .args(["-F", "notes.txt", "qwen", "Q"])
        .write_stdin("STDIN")
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(
        env.stdin_text("qwen"),
        "<file path=\"notes.txt\">\nNOTES\n</file>\n\nSTDIN\n\nQ"
    );
}

#[test]
fn stdin_alone_is_the_prompt() {
    let env = Env::new();
    let out = env.ai().arg("ollama").write_stdin("only stdin\n").run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("ollama"), "only stdin");
}

/// The child's stdin is always given explicitly: the prompt on a pipe, never ai's own stdin.
#[test]
fn child_never_inherits_stdin() {
    let env = Env::new();
    let outer = env.path("outer-stdin.txt");
    std::fs::write(&outer, "OUTER STDIN\n").unwrap();
    let mut child = env
        .ai()
        .args(["--no-stdin", "sonnet", "the prompt"])
        .stdin(File::open(&outer).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let status = child.wait_status();
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "{}", String::from_utf8_lossy(&err));
    assert_eq!(out, b"reply from claude\n");
    assert_eq!(
        env.stdin_text("claude"),
        "the prompt",
        "--no-stdin leaves stdin out"
    );
    let source = env.stdin_source("claude");
    assert!(source.starts_with("pipe:"), "claude's stdin was {source}");
}

#[test]
fn prompt_as_argument_gives_the_child_dev_null() {
    let env = Env::new();
    env.install("mycli");
    env.write_config(
        r#"{"backends": {"mycli": {"program": "mycli", "prompt": "arg"}},
            "aliases": {"my": ["mycli", "m1"]}}"#,
    );
    let outer = env.path("outer-stdin.txt");
    std::fs::write(&outer, "OUTER STDIN\n").unwrap();
    let mut child = env
        .ai()
        .args(["--no-stdin", "my", "p"])
        .stdin(File::open(&outer).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let status = child.wait_status();
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "{}", String::from_utf8_lossy(&err));
    assert_eq!(out, b"reply from mycli\n");
    assert_eq!(env.argv("mycli"), args(&["p"]));
    assert_eq!(env.stdin_source("mycli"), "/dev/null");
    assert_eq!(env.stdin("mycli"), b"");
}

/// Any prompt text after `--` reaches the backend byte for byte.
#[test]
fn any_prompt_arrives_verbatim() {
    let env = Env::new();
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = proptest::string::string_regex("[^\\x00]{1,80}").unwrap();
    runner
        .run(&strategy, |prompt| {
            if prompt.trim().is_empty() {
                return Ok(());
            }
            let out = env.ai().args(["sonnet", "--", &prompt]).run();
            proptest::prop_assert!(out.status.success(), "{}", out.stderr);
            proptest::prop_assert_eq!(env.stdin_text("claude"), prompt);
            Ok(())
        })
        .unwrap();
}

#[test]
fn invalid_utf8_on_stdin_is_replaced_with_a_warning() {
    let env = Env::new();
    let out = env
        .ai()
        .args(["sonnet", "q"])
        .write_stdin(&b"caf\xe9\n"[..])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), "caf\u{FFFD}\n\nq");
    assert!(out.stderr.contains("not valid UTF-8"), "{}", out.stderr);
}

#[test]
fn invalid_utf8_in_an_argument_is_replaced() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let out = env
        .ai()
        .args(["sonnet", "--"])
        .arg(std::ffi::OsStr::from_bytes(b"caf\xe9"))
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.stdin_text("claude"), "caf\u{FFFD}");
}

/// An idle stdin (a pipe nobody writes to or closes) gets a notice instead of a silent hang,
/// and Ctrl+C there ends ai at once with 130, before any backend ran.
#[test]
fn idle_stdin_is_announced_and_interruptible() {
    use std::io::{BufRead, BufReader};
    let env = Env::new();
    let mut child = env
        .ai()
        .args(["sonnet", "q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _keep_open = child.stdin.take().unwrap();
    let out = drain(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let notice = rx.recv_timeout(std::time::Duration::from_secs(30));
    let notice = match notice {
        Ok(line) => line,
        Err(_) => {
            child.kill();
            panic!("no notice while waiting for stdin");
        }
    };
    assert!(notice.contains("waiting for standard input"), "{notice}");
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait_status();
    assert_eq!(status.code(), Some(130));
    assert!(out.join().unwrap().is_empty());
    let rest: Vec<String> = rx.try_iter().collect();
    assert!(!rest.iter().any(|l| l.contains("panicked")), "{rest:?}");
    assert!(env.calls().is_empty());
}
