//! The session's everyday commands (`ai -i`), driven through a pseudo-terminal: lines typed
//! while a reply streams, `/retry`, `/edit`, `/file`, `/system`, `/copy`, `/rename`,
//! `/sources`, and tab completion.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::support::{ENTERED, Env, FLAKY_GEMINI, SLOW_GEMINI, Terminal, base64, echo_reply, say};

const PROMPT: &str = "echo> ";

/// End the session with Ctrl+D; it exits 0.
fn end(mut term: Terminal) {
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
}

fn asked(env: &Env) -> Vec<String> {
    env.only_messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn lines_typed_while_a_reply_streams_are_sent_after_it_in_order() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let mut term = Terminal::start(&env, "-i gemini");
    term.expect("gemini> ");
    term.send("first\r");
    term.expect("partial answer");
    env.wait_started("gemini");
    // Typed while the reply streams: the terminal echoes them (so they have reached it).
    term.send("second\rthird\r");
    term.expect("third");
    env.release();
    // Each read by the line editor at its prompt, one by one.
    term.expect(&format!("second{ENTERED}"));
    term.expect(&format!("third{ENTERED}"));
    term.expect("gemini> ");
    end(term);
    assert_eq!(asked(&env), ["first", "second", "third"]);
    let replies: Vec<Value> = env
        .only_messages()
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(replies.len(), 3, "{replies:#?}");
    // The history keeps them too.
    let kept = std::fs::read_to_string(env.home.join("history")).unwrap();
    assert!(kept.contains("second") && kept.contains("third"), "{kept}");
}

#[test]
fn retry_resends_a_failed_prompt_in_its_place_and_asks_an_answered_one_again() {
    let env = Env::echo();
    env.fake("gemini", FLAKY_GEMINI);
    let mut term = Terminal::start(&env, "-i gemini");
    term.expect("gemini> ");
    let failed = say(&mut term, "a flaky question", "gemini> ");
    assert!(failed.contains("quota exceeded"), "{failed}");
    let retried = say(&mut term, "/retry", "gemini> ");
    assert!(retried.contains("recovered answer"), "{retried}");
    // One prompt, answered once: no second copy of it.
    assert_eq!(asked(&env), ["a flaky question"]);
    // An answered prompt is asked again, as a new turn.
    let again = say(&mut term, "/retry", "gemini> ");
    assert!(again.contains("recovered answer"), "{again}");
    end(term);
    assert_eq!(asked(&env), ["a flaky question", "a flaky question"]);
    assert_eq!(env.only_messages().len(), 4);
}

#[test]
fn retry_with_nothing_sent_says_so() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let nothing = say(&mut term, "/retry", PROMPT);
    assert!(nothing.contains("nothing to retry yet"), "{nothing}");
    end(term);
    assert!(env.chat_ids().is_empty());
}

#[test]
fn edit_opens_the_last_prompt_in_the_editor_and_sends_what_it_holds() {
    let mut env = Env::echo();
    let editor = env.path("edit.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nt=$(cat \"$1\")\nprintf 'edited: %s\\n' \"$t\" > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.set("VISUAL", editor.to_str().unwrap());
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    say(&mut term, "the first try", PROMPT);
    let edited = say(&mut term, "/edit", PROMPT);
    assert!(
        edited.contains(&echo_reply("edited: the first try", 2).replace('\n', "\r\n")),
        "{edited}"
    );
    end(term);
    assert_eq!(asked(&env), ["the first try", "edited: the first try"]);
    // The file it was edited in is gone.
    let left: Vec<_> = std::fs::read_dir(&env.home)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("edit-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_editor_that_fails_sends_nothing() {
    let mut env = Env::echo();
    env.set("VISUAL", "false");
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let failed = say(&mut term, "/edit", PROMPT);
    assert!(failed.contains("error: the editor false ended"), "{failed}");
    assert!(failed.contains("nothing was sent"), "{failed}");
    end(term);
    assert!(env.chat_ids().is_empty());
}

#[test]
fn file_sends_a_file_with_the_next_message_and_a_missing_one_is_an_error() {
    let env = Env::echo();
    env.project_file("plan.txt", "step one: grind the beans\n");
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let missing = say(&mut term, "/file nothere.txt", PROMPT);
    assert!(
        missing.contains("error: cannot read -F nothere.txt"),
        "{missing}"
    );
    let added = say(&mut term, "/file plan.txt", PROMPT);
    assert!(added.contains("plan.txt"), "{added}");
    assert!(added.contains("goes with the next message"), "{added}");
    say(&mut term, "summarize it", PROMPT);
    say(&mut term, "and now without it", PROMPT);
    end(term);
    let prompts = asked(&env);
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(
        prompts[0].contains("step one: grind the beans") && prompts[0].contains("summarize it"),
        "{}",
        prompts[0]
    );
    assert!(prompts[0].contains("plan.txt"), "{}", prompts[0]);
    assert_eq!(prompts[1], "and now without it", "sent once");
}

#[test]
fn system_sets_the_system_prompt_and_says_it() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let none = say(&mut term, "/system", PROMPT);
    assert!(none.contains("no system prompt is set"), "{none}");
    let set = say(&mut term, "/system Answer in one word.", PROMPT);
    assert!(set.contains("the system prompt is set"), "{set}");
    say(&mut term, "hello", PROMPT);
    let which = say(&mut term, "/system", PROMPT);
    assert!(
        which.contains("the system prompt: Answer in one word."),
        "{which}"
    );
    end(term);
    let id = env.chat_ids().pop().unwrap();
    assert_eq!(env.header(&id)["system"], "Answer in one word.");
}

#[test]
fn copy_puts_the_last_reply_on_the_terminal_clipboard_and_rename_titles_the_chat() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let early = say(&mut term, "/copy", PROMPT);
    assert!(early.contains("no reply to copy yet"), "{early}");
    let early = say(&mut term, "/rename Beans", PROMPT);
    assert!(early.contains("no chat yet"), "{early}");
    say(&mut term, "copy me", PROMPT);
    let copied = say(&mut term, "/copy", PROMPT);
    let osc = format!(
        "\x1b]52;c;{}\x07",
        base64(echo_reply("copy me", 0).as_bytes())
    );
    assert!(copied.contains(&osc), "{copied:?}");
    assert!(copied.contains("is on the clipboard"), "{copied}");
    let renamed = say(&mut term, "/rename Coffee at home", PROMPT);
    assert!(
        renamed.contains("is now titled: Coffee at home"),
        "{renamed}"
    );
    end(term);
    let id = env.chat_ids().pop().unwrap();
    assert_eq!(env.header(&id)["title"], "Coffee at home");
}

#[test]
fn sources_lists_the_notes_of_the_last_answer() {
    let env = Env::echo();
    let dir = env.notes_folder(
        "notes",
        [(
            "coffee.md",
            "# Coffee\n\nWe brew coffee with a French press.\n",
        )],
    );
    env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
        .success();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let none = say(&mut term, "/sources", PROMPT);
    assert!(none.contains("was given no notes"), "{none}");
    // Tab completes the command and the knowledge base's name.
    let grounded = say(&mut term, "/k\t no\t", PROMPT);
    assert!(
        grounded.contains("answers are grounded in notes (1 note) from now on"),
        "{grounded}"
    );
    say(&mut term, "how do we brew coffee?", PROMPT);
    let sources = say(&mut term, "/sources", PROMPT);
    assert!(
        sources.contains("[1] Coffee (notes: coffee.md"),
        "{sources}"
    );
    end(term);
}

#[test]
fn tab_completes_models_and_an_unusable_model_is_refused_at_once() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let switched = say(&mut term, "/mod\t ech\t", PROMPT);
    assert!(
        switched.contains("echo (echo, model echo) answers from now on"),
        "{switched}"
    );
    // No claude CLI here: said when switching, not at the next line.
    let refused = say(&mut term, "/model sonnet", PROMPT);
    assert!(refused.contains("error:"), "{refused}");
    assert!(refused.contains("claude"), "{refused}");
    end(term);
    assert!(env.chat_ids().is_empty());
}

#[test]
fn replies_show_their_markdown_styled_on_a_terminal_unless_config_turns_it_off() {
    let env = Env::echo();
    // Line by line, each at its own prompt.
    let typed = |term: &mut Terminal| {
        term.send("# Plan\\\r");
        term.expect("... ");
        term.send("**bold** move\\\r");
        term.expect("... ");
        term.send("- first\r");
    };
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    typed(&mut term);
    term.expect("3 lines");
    let shown = term.expect(PROMPT);
    assert!(
        shown.starts_with("\r\n\x1b[1m\x1b[4mPlan\x1b[0m\r\n\x1b[1mbold\x1b[0m move\r\n• first"),
        "{shown:?}"
    );
    end(term);
    // The chat keeps the reply as it came.
    let reply = env.only_messages()[1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(reply.contains("# Plan\n**bold** move\n- first"), "{reply}");

    env.write_config(r#"{"default_alias":"echo","chat":{"markdown":false}}"#);
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    typed(&mut term);
    term.expect("3 lines");
    let shown = term.expect(PROMPT);
    assert!(
        shown.starts_with("\r\n# Plan\r\n**bold** move\r\n- first"),
        "{shown:?}"
    );
    end(term);
}

#[test]
fn lines_pasted_in_one_burst_at_the_prompt_are_each_sent_in_order() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    // Many lines in one write, while the line editor reads (no bracketed paste: a terminal
    // that does not mark pastes, or a program typing); more than the editor reads at once.
    let lines: Vec<String> = (1..=100).map(|i| format!("burst line {i}")).collect();
    term.send(&lines.iter().map(|l| format!("{l}\r")).collect::<String>());
    // One answer each (a line lost would leave this waiting, and the test failing).
    for _ in &lines {
        term.expect("echo: model echo");
    }
    term.expect(PROMPT);
    end(term);
    assert_eq!(asked(&env), lines);
}
