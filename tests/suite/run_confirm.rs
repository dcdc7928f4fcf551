//! `run` asks before it runs a command: only an explicit yes (Enter, y, yes) runs it; end of
//! input at the prompt (Ctrl+D, a terminal whose input ends) cancels.

use crate::support::{Env, on_terminal};

/// `ai run sonnet …` on a pseudo-terminal, answering `answer`.
fn run_on_terminal(env: &Env, answer: &str) -> (Option<i32>, String) {
    on_terminal(env, "run sonnet 'make a file'", answer)
}

#[test]
fn end_of_input_at_the_run_prompt_cancels() {
    let env = Env::new();
    env.reply("claude", "echo made > made.txt\n");
    // Ctrl+D at the prompt.
    let (code, text) = run_on_terminal(&env, "\x04");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("cancelled"), "{text}");
    assert!(
        !env.project.join("made.txt").exists(),
        "Ctrl+D ran it: {text}"
    );
    // No answer at all: the terminal's input ends.
    let (code, text) = run_on_terminal(&env, "");
    assert_ne!(code, Some(0), "{text}");
    assert!(
        !env.project.join("made.txt").exists(),
        "no answer ran it: {text}"
    );
    // Text then Ctrl+D (no newline) is not a yes either.
    let (code, text) = run_on_terminal(&env, "y\x04\x04");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        !env.project.join("made.txt").exists(),
        "'y^D' ran it: {text}"
    );
    // Enter still runs it.
    let (code, text) = run_on_terminal(&env, "\n");
    assert_eq!(code, Some(0), "{text}");
    assert!(env.project.join("made.txt").exists(), "{text}");
}
