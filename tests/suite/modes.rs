//! `cmd` and `run`: the reply as one shell command; `run` asks on the terminal, then runs it.

use crate::support::Env;

/// A reply the way models often write commands: prose, a fence, a prompt sign.
const FENCED: &str =
    "Sure, this does it:\n```bash\n$ echo made > made.txt && exit 3\n```\nIt writes a file.\n";

#[test]
fn cmd_prints_the_bare_command_and_tells_the_model_what_to_write() {
    let env = Env::new();
    env.reply("claude", FENCED);
    for args in [
        &["sonnet", "cmd", "make a file"][..],
        &["--cmd", "sonnet", "make a file"][..],
    ] {
        let out = env.ai().args(args).run();
        assert!(out.status.success(), "{}", out.stderr);
        assert_eq!(out.stdout, "echo made > made.txt && exit 3\n");
        let sent = env.stdin_text("claude");
        assert!(
            sent.contains("Answer with exactly one shell command for"),
            "{sent}"
        );
        assert!(sent.contains("make a file"), "{sent}");
    }
    assert!(!env.project.join("made.txt").exists(), "cmd runs nothing");
}

#[test]
fn run_without_a_terminal_refuses_and_runs_nothing() {
    let env = Env::new();
    env.reply("claude", FENCED);
    let out = env.ai().args(["sonnet", "run", "make a file"]).run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("no terminal to ask on"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("-y"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
    assert!(!env.project.join("made.txt").exists());
}

#[test]
fn run_with_yes_runs_it_with_the_shell_and_exits_with_its_code() {
    let env = Env::new();
    env.reply("codex", FENCED);
    let out = env.ai().args(["--run", "-y", "codex", "make a file"]).run();
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("running: echo made > made.txt && exit 3"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("error:"),
        "the command's own code is no error of ai's"
    );
    assert_eq!(
        std::fs::read_to_string(env.project.join("made.txt")).unwrap(),
        "made\n"
    );
}

/// `ai … run` on a pseudo-terminal, answering `answer`.
fn run_on_terminal(env: &Env, answer: &str) -> (Option<i32>, String) {
    crate::support::on_terminal(env, "sonnet run 'make a file'", answer)
}

#[test]
fn run_asks_on_the_terminal_enter_or_y_runs_anything_else_cancels() {
    let env = Env::new();
    env.reply("claude", FENCED);
    let (code, text) = run_on_terminal(&env, "n\n");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("echo made > made.txt && exit 3"),
        "shown first: {text}"
    );
    assert!(text.contains("cancelled"), "{text}");
    assert!(!env.project.join("made.txt").exists());

    let (code, text) = run_on_terminal(&env, "y\n");
    assert_eq!(code, Some(3), "{text}");
    assert!(env.project.join("made.txt").exists());
    std::fs::remove_file(env.project.join("made.txt")).unwrap();

    let (code, text) = run_on_terminal(&env, "\n");
    assert_eq!(code, Some(3), "Enter runs it: {text}");
    assert!(env.project.join("made.txt").exists());
}

#[test]
fn run_without_a_terminal_refuses_before_asking_any_model() {
    let env = Env::new();
    env.reply("claude", FENCED);
    let out = env.ai().args(["sonnet", "run", "make a file"]).run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        env.calls().is_empty(),
        "the model was asked: {:?}",
        env.calls()
    );
    assert!(env.chat_ids().is_empty(), "a chat was written");
}
