//! What reaches a terminal: model and file text made safe (no escape sequences, no invisible or
//! bidi characters), while pipes and files get the bytes exactly; and `run` runs only on an
//! explicit yes.

use crate::support::{Env, on_terminal};

/// A reply that tries every trick: OSC 52 (clipboard), OSC 0 (title), a screen clear, an OSC 8
/// link, SGR 8 (conceal), a C1 CSI, a line overwrite, and bidi and invisible characters.
const HOSTILE: &str = "safe \x1b]52;c;ZXZpbA==\x07A \x1b]0;PWNED-TITLE\x07B \x1b[2J\x1b[HC \
\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ D \x1b[8mhidden\x1b[0m E \u{9b}31mF \
fake\r\x1b[Kover G \u{202e}exe.txt\u{202c} H zero\u{200b}width tag\u{e0041} end\n";

/// The sequences that must never reach a terminal raw.
const RAW: &[&str] = &[
    "\x1b]52",
    "\x1b]0;",
    "\x1b[2J",
    "\x1b]8;",
    "\x1b[8m",
    "\u{9b}",
    "\u{202e}",
    "\u{202c}",
    "\u{200b}",
    "\u{e0041}",
];

fn assert_safe(what: &str, text: &str) {
    for raw in RAW {
        assert!(
            !text.contains(raw),
            "{what}: {raw:?} reached the terminal: {text:?}"
        );
    }
    assert!(
        !text.contains("fake\r"),
        "{what}: a carriage return reached the terminal"
    );
}

#[test]
fn a_streamed_reply_is_made_safe_on_a_terminal() {
    let env = Env::new();
    env.reply("codex", HOSTILE);
    let (code, shown) = on_terminal(&env, "-q codex hello", "");
    assert_eq!(code, Some(0), "{shown}");
    assert_safe("stream", &shown);
    // The visible words all arrive, and the invisible characters are shown, not dropped.
    for word in [
        "safe",
        "A",
        "link",
        "hidden",
        "over",
        "exe.txt",
        "end",
        "\\u{202e}",
        "\\u{200b}",
    ] {
        assert!(shown.contains(word), "{word:?} missing: {shown:?}");
    }
}

#[test]
fn an_escape_split_across_chunks_is_still_removed() {
    let env = Env::new();
    // The fake writes an OSC 52 in two pieces with a pause between them, so `ai` reads them as
    // two chunks; then a 3-byte character split the same way.
    // codex streams (claude's reply is held until it exits).
    env.script(
        "codex",
        "printf 'one \\033]5'; \"$SLEEP\" 0.3; printf '2;c;ZXZpbA==\\007two \\342\\200'; \"$SLEEP\" 0.3; printf '\\256three\\n'; exit 0",
    );
    let (code, shown) = on_terminal(&env, "-q codex hello", "");
    assert_eq!(code, Some(0), "{shown}");
    assert_safe("split stream", &shown);
    assert!(shown.contains("one two \\u{202e}three"), "{shown:?}");
}

#[test]
fn a_reply_through_a_pipe_is_byte_exact() {
    let env = Env::new();
    for (alias, program) in [("sonnet", "claude"), ("codex", "codex")] {
        env.reply(program, HOSTILE);
        let out = env.ai().args([alias, "hello"]).run();
        assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
        assert_eq!(out.stdout_bytes, HOSTILE.as_bytes(), "{alias}");
    }
}

#[test]
fn chat_export_is_safe_on_a_terminal_and_exact_through_a_pipe() {
    let env = Env::new();
    env.reply("claude", HOSTILE);
    let out = env.ai().args(["sonnet", "hello"]).run();
    let id = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("[chat: "))
        .map(|l| l.trim_end_matches(']').to_owned())
        .expect("chat id");
    let piped = env
        .ai()
        .args(["chat", "export", &id, "--format", "md"])
        .run();
    assert_eq!(piped.status.code(), Some(0), "{}", piped.stderr);
    assert!(
        piped.stdout.contains(HOSTILE.trim_end()),
        "a pipe gets the reply byte for byte"
    );
    // The export imports back unchanged (the round trip stays exact).
    env.project_file("x.md", &piped.stdout);
    let back = env.ai().args(["chat", "import", "x.md"]).run();
    assert_eq!(back.status.code(), Some(0), "{}", back.stderr);

    let (code, shown) = on_terminal(&env, &format!("chat export {id} --format md"), "");
    assert_eq!(code, Some(0), "{shown}");
    assert_safe("export", &shown);
    assert!(shown.contains("exe.txt"), "{shown:?}");
}

#[test]
fn cmd_refuses_a_command_with_control_or_invisible_characters() {
    let env = Env::new();
    for reply in [
        "```bash\nls -la \x1b]52;c;ZXZpbA==\x07\x1b[8mrm -rf ~\x1b[0m\n```\n",
        "ls \u{202e}txt.exe\n",
        "echo a\u{200b}b\n",
        "echo a\rrm -rf /\n",
    ] {
        env.reply("claude", reply);
        let out = env.ai().args(["cmd", "sonnet", "list files"]).run();
        assert_eq!(out.status.code(), Some(1), "{reply:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{reply:?}: {:?}", out.stdout);
        let err = out.stderr;
        assert!(err.contains("error:"), "{err}");
        assert_safe("cmd error", &err);
        assert!(!err.contains('\r'), "{err:?}");
    }
    // A plain command with tabs and non-ASCII text is fine.
    env.reply("claude", "echo 'héllo\twörld'\n");
    let out = env.ai().args(["cmd", "sonnet", "say it"]).run();
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "echo 'héllo\twörld'\n");
}

/// `ai run sonnet …` on a pseudo-terminal, answering `answer`.
fn run_on_terminal(env: &Env, answer: &str) -> (Option<i32>, String) {
    on_terminal(env, "run sonnet 'make a file'", answer)
}

#[test]
fn run_refuses_a_command_with_invisible_characters() {
    let env = Env::new();
    env.reply("claude", "echo safe \u{202e}; echo made > made.txt\n");
    let (code, text) = run_on_terminal(&env, "y\n");
    assert_eq!(code, Some(1), "{text}");
    assert!(!env.project.join("made.txt").exists(), "{text}");
    assert_safe("run prompt", &text);
    assert!(text.contains("\\u{202e}"), "shown visibly: {text:?}");
    // With -y as well: what runs must be what is shown.
    let out = env.ai().args(["run", "-y", "sonnet", "make a file"]).run();
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert!(!env.project.join("made.txt").exists());
}

#[test]
fn bidi_and_invisible_characters_are_shown_visibly_in_show_list_and_errors() {
    let env = Env::new();
    env.reply("claude", "Hello RED \u{202e}exe.txt\u{202c} click\n");
    let out = env
        .ai()
        .args(["sonnet", "title \u{2067}x\u{2069} \u{200f}y"])
        .run();
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let id = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("[chat: "))
        .map(|l| l.trim_end_matches(']').to_owned())
        .expect("chat id");
    let show = env.ai().args(["chat", "show", &id]).run().stdout;
    assert!(show.contains("\\u{202e}exe.txt\\u{202c}"), "{show:?}");
    let list = env.ai().args(["chat", "list"]).run().stdout;
    for text in [&show, &list] {
        for c in ['\u{202e}', '\u{202c}', '\u{2067}', '\u{2069}', '\u{200f}'] {
            assert!(!text.contains(c), "{c:?} in {text:?}");
        }
    }
    assert!(list.contains("\\u{2067}x\\u{2069}"), "{list:?}");
    // A backend's error text.
    env.stderr("codex", "bad request \u{202e}live\u{202c}\n");
    env.exit_code("codex", 1);
    let out = env.ai().args(["codex", "hi"]).run();
    let err = out.stderr;
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains('\u{202e}'), "{err:?}");
    assert!(err.contains("\\u{202e}"), "{err:?}");
}

#[test]
fn notices_quoting_file_names_are_cleaned() {
    let env = Env::new();
    env.project_file("docs/.\x1b]0;PWNED\x07\u{202e}txt", "hidden");
    env.project_file("docs/a.txt", "text");
    let out = env.ai().args(["echo", "-F", "docs", "hi"]).run();
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let err = out.stderr;
    assert!(err.contains("hidden file"), "{err:?}");
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.contains("\\u{202e}"), "{err:?}");
}
