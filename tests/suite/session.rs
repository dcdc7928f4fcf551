//! The terminal session (`ai -i`), driven through a pseudo-terminal as a person would: every
//! line is an ordinary turn of one chat file, commands switch chat, model and knowledge base,
//! and Ctrl+C stops a reply without ending the session.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::support::{
    ENTERED, Env, SLOW_GEMINI, Terminal, echo_reply, header, message, on_terminal, say,
};

/// The echo model's prompt.
const PROMPT: &str = "echo> ";

fn contents(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn two_lines_are_two_turns_of_one_chat_and_ctrl_d_ends_with_0() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    let welcome = term.expect(PROMPT);
    assert!(welcome.contains("ai: echo (echo, model echo)"), "{welcome}");
    assert!(
        welcome
            .contains("/clear, /model NAME, /kb NAME|off, /retry, /edit, /file PATH, /help, /exit"),
        "{welcome}"
    );
    let first = say(&mut term, "first line", PROMPT);
    assert!(first.contains("echo: model echo, 10 characters"), "{first}");
    assert!(first.contains("[chat: "), "{first}");
    let second = say(&mut term, "second line", PROMPT);
    assert!(
        second.contains("2 earlier messages (1 from you)"),
        "{second}"
    );
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let ids = env.chat_ids();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(
        contents(&env.messages(&ids[0])),
        [
            "first line".to_owned(),
            echo_reply("first line", 0),
            "second line".to_owned(),
            echo_reply("second line", 2),
        ]
    );
    // What was typed is kept for the next session, readable by its owner only.
    let history = env.home.join("history");
    let mode = std::fs::metadata(&history).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "history mode {mode:o}");
    let kept = std::fs::read_to_string(&history).unwrap();
    assert!(
        kept.contains("first line") && kept.contains("second line"),
        "{kept}"
    );
}

#[test]
fn a_turn_from_another_shell_between_two_lines_is_seen_by_the_next() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    say(&mut term, "from the session", PROMPT);
    let id = env.chat_ids().pop().expect("a chat");
    env.run(&["chat", &id, "from another shell"]).success();
    let third = say(&mut term, "back in the session", PROMPT);
    assert!(third.contains("4 earlier messages (2 from you)"), "{third}");
    term.send("exit\r");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let asked: Vec<String> = env
        .messages(&id)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        asked,
        [
            "from the session",
            "from another shell",
            "back in the session"
        ]
    );
}

#[test]
fn clear_starts_a_new_chat_and_keeps_the_old_one() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    say(&mut term, "one", PROMPT);
    let old = env.chat_ids().pop().expect("a chat");
    let cleared = say(&mut term, "/clear", PROMPT);
    assert!(
        cleared.contains(&format!("chat {old} is kept")),
        "{cleared}"
    );
    let two = say(&mut term, "two", PROMPT);
    assert!(
        !two.contains("earlier message"),
        "a new chat has no history: {two}"
    );
    term.send("/exit\r");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let chats = env.chat_ids();
    assert_eq!(chats.len(), 2, "{chats:?}");
    for id in &chats {
        assert_eq!(env.messages(id).len(), 2, "{id}");
    }
}

#[test]
fn model_switches_the_model_for_the_next_turns() {
    let env = Env::new();
    env.write_config(r#"{"default_alias":"echo"}"#);
    env.reply("claude", "claude says hi\n");
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    say(&mut term, "to echo", PROMPT);
    let switched = say(&mut term, "/model sonnet", "sonnet> ");
    assert!(switched.contains("sonnet (claude"), "{switched}");
    let reply = say(&mut term, "to claude", "sonnet> ");
    assert!(reply.contains("claude says hi"), "{reply}");
    // An unknown model is an error, and the session goes on with the one it had.
    let unknown = say(&mut term, "/model nosuchmodel", "sonnet> ");
    assert!(unknown.contains("error:"), "{unknown}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let messages = env.only_messages();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1]["alias"], "echo");
    assert_eq!(messages[3]["alias"], "sonnet");
    assert!(env.stdin_text("claude").contains("to claude"));
}

#[test]
fn ctrl_c_stops_a_slow_reply_saves_it_interrupted_and_the_prompt_comes_back() {
    let env = Env::echo();
    env.fake("gemini", SLOW_GEMINI);
    let mut term = Terminal::start(&env, "-i gemini");
    term.expect("gemini> ");
    term.send("take your time\r");
    term.expect("partial answer");
    env.wait_started("gemini");
    term.send("\x03");
    let stopped = term.expect("gemini> ");
    assert!(
        stopped.contains("interrupted; the prompt and the partial reply are saved"),
        "{stopped}"
    );
    // The session goes on: the next line is a turn of the same chat.
    env.release();
    let next = say(&mut term, "now all of it", "gemini> ");
    assert!(next.contains("partial answer and the rest"), "{next}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let messages = env.only_messages();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(messages[1]["content"], "partial answer");
    assert_eq!(messages[1]["interrupted"], true);
    assert_eq!(messages[3]["content"], "partial answer and the rest\n");
    assert!(messages[3]["interrupted"].is_null() || messages[3]["interrupted"] == false);
}

/// A fake `gemini` that outlives SIGTERM, so that a stopped reply takes its time to end. It
/// writes its pid again each time SIGTERM reaches it: the test knows the first Ctrl+C has
/// been acted on before it sends the second (sent before, the two could merge into one).
const STUBBORN_GEMINI: &str = r#"trap 'echo $$ > "$FAKE_STATE/gemini.pid"' TERM
/bin/cat > /dev/null
printf 'partial answer'
echo $$ > "$FAKE_STATE/gemini.pid"
i=0
while [ $i -lt 1200 ]; do /bin/sleep 0.05; i=$((i+1)); done
"#;

#[test]
fn a_second_ctrl_c_during_a_reply_ends_the_session() {
    let env = Env::echo();
    env.fake("gemini", STUBBORN_GEMINI);
    let mut term = Terminal::start(&env, "-i gemini");
    term.expect("gemini> ");
    term.send("hello\r");
    term.expect("partial answer");
    env.wait_started("gemini");
    term.send("\x03");
    env.wait_started("gemini");
    term.send("\x03");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(130), "{screen}");
}

#[test]
fn a_fast_double_ctrl_c_saves_the_prompt_and_partial_reply_before_ending() {
    // I2: the second press used to end ai at once, leaving a chat with only its header.
    let env = Env::echo();
    env.fake("gemini", STUBBORN_GEMINI);
    let mut term = Terminal::start(&env, "-i gemini");
    term.expect("gemini> ");
    term.send("hello\r");
    term.expect("partial answer");
    env.wait_started("gemini");
    // The second press while the backend still runs after the first (it outlives SIGTERM).
    term.send("\x03");
    env.wait_started("gemini");
    term.send("\x03");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(130), "{screen}");
    let messages = env.only_messages();
    assert_eq!(contents(&messages), ["hello", "partial answer"], "{screen}");
    assert_eq!(messages[1]["interrupted"], true);
}

/// The session's chat, deleted from another shell: said once, and the next line starts anew.
#[test]
fn a_chat_deleted_from_another_shell_is_said_and_the_next_line_starts_a_new_one() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    say(&mut term, "first line", PROMPT);
    let old = env.chat_ids().pop().expect("a chat");
    env.run(&["chat", "delete", &old]).success();
    let second = say(&mut term, "second line", PROMPT);
    assert!(
        second.contains(&format!("chat {old} was deleted")),
        "{second}"
    );
    assert!(second.contains("the line was not sent"), "{second}");
    assert!(!second.contains("error: no chat"), "{second}");
    let third = say(&mut term, "third line", PROMPT);
    assert!(!third.contains("error"), "{third}");
    assert!(!third.contains("was deleted"), "{third}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let ids = env.chat_ids();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(contents(&env.messages(&ids[0]))[0], "third line");
}

#[test]
fn ctrl_c_at_the_prompt_clears_the_line() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    term.send("never sent");
    term.expect("never sent");
    term.send("\x03");
    term.expect(ENTERED);
    term.expect(PROMPT);
    say(&mut term, "sent", PROMPT);
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let messages = env.only_messages();
    assert_eq!(contents(&messages)[0], "sent");
}

#[test]
fn a_trailing_backslash_continues_the_message() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    term.send("first part \\\r");
    term.expect("... ");
    let reply = say(&mut term, "second part", PROMPT);
    assert!(reply.contains("2 lines"), "{reply}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(
        contents(&env.only_messages())[0],
        "first part \nsecond part"
    );
}

#[test]
fn a_bracketed_paste_of_several_lines_is_one_message() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let reply = say(
        &mut term,
        "\x1b[200~line one\nline two\nline three\x1b[201~",
        PROMPT,
    );
    assert!(reply.contains("3 lines"), "{reply}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let messages = env.only_messages();
    assert_eq!(messages.len(), 2, "one turn: {messages:#?}");
    assert_eq!(messages[0]["content"], "line one\nline two\nline three");
}

#[test]
fn help_and_unknown_commands() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "-i");
    term.expect(PROMPT);
    let help = say(&mut term, "/help", PROMPT);
    assert!(
        help.contains("/model NAME") && help.contains("Ctrl+C"),
        "{help}"
    );
    let unknown = say(&mut term, "/frobnicate", PROMPT);
    assert!(
        unknown.contains("there is no command /frobnicate"),
        "{unknown}"
    );
    // A path is a message, not a command.
    let path = say(&mut term, "/etc/hosts holds what?", PROMPT);
    assert!(path.contains("echo: model echo"), "{path}");
    term.send("quit\r");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(contents(&env.only_messages())[0], "/etc/hosts holds what?");
}

#[test]
fn chat_id_i_continues_that_chat() {
    let env = Env::echo();
    let id = env.run(&["chat", "earlier question"]).success().chat_id();
    let mut term = Terminal::start(&env, &format!("chat {id} -i"));
    let welcome = term.expect(PROMPT);
    assert!(
        welcome.contains(&format!("chat {id} (1 exchange)")),
        "{welcome}"
    );
    let reply = say(&mut term, "and now?", PROMPT);
    assert!(reply.contains("2 earlier messages"), "{reply}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(env.chat_ids(), vec![id.clone()]);
    assert_eq!(env.messages(&id).len(), 4);
}

/// A chat of six exchanges of about 80 estimated tokens each message: about 960 in all.
fn long_chat(env: &Env, id: &str) {
    let text = "word ".repeat(60);
    let mut records = vec![header(id, serde_json::json!({"model": "echo"}))];
    for turn in 1..=6 {
        records.push(message("user", &text, turn));
        records.push(message("assistant", &text, turn));
    }
    env.write_chat(id, &records);
}

#[test]
fn past_85_percent_it_asks_and_summarizes() {
    let env = Env::echo();
    env.write_config(r#"{"default_alias":"echo","context_tokens":{"echo":1000}}"#);
    long_chat(&env, "LONG1");
    let mut term = Terminal::start(&env, "chat LONG1 -i");
    term.expect(PROMPT);
    term.send("one more\r");
    let asked = term.expect("[c]ontinue, [s]ummarize, [n]ew chat? ");
    assert!(asked.contains("% of the 1000 that echo accepts"), "{asked}");
    term.send("maybe\r");
    term.expect("answer c, s or n");
    term.expect("[c]ontinue, [s]ummarize, [n]ew chat? ");
    let done = answer(&mut term, "s");
    assert!(done.contains("are now one summary"), "{done}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(env.chat_ids(), ["LONG1"]);
    let summary = &env.header("LONG1")["summary"];
    assert_eq!(summary["through_turn"], 2, "{summary}");
    let messages = env.messages("LONG1");
    assert_eq!(messages.len(), 14);
    assert_eq!(messages[12]["content"], "one more");
}

#[test]
fn past_85_percent_new_chat_sends_the_line_to_a_new_chat() {
    let env = Env::echo();
    env.write_config(r#"{"default_alias":"echo","context_tokens":{"echo":1000}}"#);
    long_chat(&env, "LONG1");
    let mut term = Terminal::start(&env, "chat LONG1 -i");
    term.expect(PROMPT);
    term.send("one more\r");
    term.expect("[c]ontinue, [s]ummarize, [n]ew chat? ");
    let done = answer(&mut term, "n");
    assert!(done.contains("chat LONG1 is kept"), "{done}");
    // The new chat is small: the next line is not asked about.
    let next = say(&mut term, "and another", PROMPT);
    assert!(!next.contains("[c]ontinue"), "{next}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(env.messages("LONG1").len(), 12, "the old chat is untouched");
    let new: Vec<String> = env
        .chat_ids()
        .into_iter()
        .filter(|i| i != "LONG1")
        .collect();
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!(
        contents(&env.messages(&new[0]))
            .iter()
            .step_by(2)
            .cloned()
            .collect::<Vec<_>>(),
        ["one more", "and another"]
    );
}

#[test]
fn summarize_with_nothing_to_summarize_asks_again() {
    // I3: the line used to be sent anyway, after the one-shot warning naming shell commands.
    let env = Env::echo();
    env.write_config(r#"{"default_alias":"echo","context_tokens":{"echo":150}}"#);
    let text = "word ".repeat(60);
    env.write_chat(
        "SHORT1",
        &[
            header("SHORT1", serde_json::json!({"model": "echo"})),
            message("user", &text, 1),
            message("assistant", &text, 1),
        ],
    );
    let mut term = Terminal::start(&env, "chat SHORT1 -i");
    term.expect(PROMPT);
    term.send("one more\r");
    term.expect("[c]ontinue, [s]ummarize, [n]ew chat? ");
    term.send("s\r");
    let asked = term.expect("[c]ontinue, [n]ew chat? ");
    assert!(asked.contains("nothing to summarize"), "{asked}");
    let sent = answer(&mut term, "c");
    assert!(!sent.contains("ai chat compact"), "{sent}");
    assert!(!sent.contains("Your choices"), "{sent}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(env.messages("SHORT1").len(), 4);
}

#[test]
fn a_fifo_at_the_history_path_is_warned_about_not_waited_on() {
    // I4: opening a FIFO for reading waits for a writer: the session never started.
    let env = Env::echo();
    let path = std::ffi::CString::new(env.home.join("history").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo(3) touches nothing else.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let mut term = Terminal::start(&env, "-i");
    let welcome = term.expect(PROMPT);
    assert!(welcome.contains("is not a regular file"), "{welcome}");
    say(&mut term, "one", PROMPT);
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(env.only_messages().len(), 2);
}

/// Answer the question before a long chat is sent and wait for the next prompt. The answer is
/// read from the terminal itself, not by the line editor (lines pasted before the question are
/// no answer), so the editor's ENTERED mark does not follow it.
fn answer(term: &mut Terminal, line: &str) -> String {
    term.send(&format!("{line}\r"));
    term.expect(PROMPT)
}

#[test]
fn past_85_percent_continue_sends_as_is() {
    let env = Env::echo();
    env.write_config(r#"{"default_alias":"echo","context_tokens":{"echo":1000}}"#);
    long_chat(&env, "LONG1");
    let mut term = Terminal::start(&env, "chat LONG1 -i");
    term.expect(PROMPT);
    term.send("one more\r");
    term.expect("[c]ontinue, [s]ummarize, [n]ew chat? ");
    answer(&mut term, "c");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(env.chat_ids(), ["LONG1"]);
    assert!(env.header("LONG1")["summary"].is_null());
    assert_eq!(env.messages("LONG1").len(), 14);
}

#[test]
fn without_a_terminal_on_stdin_it_is_a_usage_error() {
    let env = Env::echo();
    let out = env.run(&["-i"]);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("-i needs a terminal"), "{}", out.stderr);
    assert!(out.stderr.contains("hint:"), "{}", out.stderr);
    let out = env.command(&["-i"]).write_stdin("hello\n").run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(env.chat_ids().is_empty());
}

#[test]
fn what_a_session_cannot_take_is_refused() {
    let env = Env::echo();
    for args in [
        &["-i", "--json"][..],
        &["-i", "--no-chat"],
        &["-i", "--dry-run"],
    ] {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("-i cannot be used with"),
            "{}",
            out.stderr
        );
    }
    // Tools are offered (tested with an HTTP provider, tests/http/tools_commands.rs); what is
    // wrong with them is said before the session starts.
    for (args, says) in [
        ("-i --tools", "--tools gives the model your knowledge bases"),
        ("-i --data nothere.json", "nothere.json"),
        ("-i --tool grep", "there is no command tool of that name"),
    ] {
        let (code, screen) = on_terminal(&env, args, "");
        assert_eq!(code, Some(2), "{args}: {screen}");
        assert!(screen.contains(says), "{args}: {screen}");
    }
    for (args, says) in [
        ("-i echo what is this", "not a prompt"),
        ("-i echo sonnet", "one model"),
        ("-i nosuchmodel", "not a prompt"),
    ] {
        let (code, screen) = on_terminal(&env, args, "");
        assert_eq!(code, Some(2), "{args}: {screen}");
        assert!(screen.contains(says), "{args}: {screen}");
    }
    assert!(env.chat_ids().is_empty());
}

/// A knowledge base `notes` of two notes.
fn notes(env: &Env) {
    let dir = env.notes_folder(
        "notes",
        [
            (
                "coffee.md",
                "# Coffee\n\nWe brew coffee with a French press.\n",
            ),
            ("tea.md", "# Tea\n\nGreen tea steeps for two minutes.\n"),
        ],
    );
    env.run(&["kb", "add", "notes", dir.to_str().unwrap()])
        .success();
}

#[test]
fn kb_grounds_the_turns_and_the_chat_remembers_it() {
    let env = Env::echo();
    notes(&env);
    let mut term = Terminal::start(&env, "-i --kb notes");
    let welcome = term.expect(PROMPT);
    assert!(
        welcome.contains("knowledge bases: notes (2 notes)"),
        "{welcome}"
    );
    let grounded = say(&mut term, "how do we brew coffee?", PROMPT);
    assert!(grounded.contains("Sources:"), "{grounded}");
    let missing = say(&mut term, "/kb nosuchbase", PROMPT);
    assert!(missing.contains("error:"), "{missing}");
    let off = say(&mut term, "/kb off", PROMPT);
    assert!(off.contains("no knowledge base from now on"), "{off}");
    let plain = say(&mut term, "and tea?", PROMPT);
    assert!(!plain.contains("Sources:"), "{plain}");
    let which = say(&mut term, "/kb", PROMPT);
    assert!(which.contains("no knowledge base is used"), "{which}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    let id = env.chat_ids().pop().unwrap();
    let messages = env.messages(&id);
    assert!(!messages[1]["sources"].as_array().unwrap().is_empty());
    assert!(messages[3]["sources"].is_null() || messages[3]["sources"] == serde_json::json!([]));
    assert_eq!(
        env.header(&id)["kb"],
        serde_json::json!(null),
        "/kb off is remembered"
    );
}

#[test]
fn a_failed_turn_is_reported_and_the_session_goes_on() {
    let env = Env::new();
    env.write_config(r#"{"default_alias":"sonnet"}"#);
    env.exit_code("claude", 1);
    env.stderr("claude", "quota exceeded\n");
    let mut term = Terminal::start(&env, "-i");
    term.expect("sonnet> ");
    let failed = say(&mut term, "first try", "sonnet> ");
    assert!(failed.contains("error:"), "{failed}");
    assert!(failed.contains("ai chat retry"), "{failed}");
    env.exit_code("claude", 0);
    env.reply("claude", "it works now\n");
    let ok = say(&mut term, "second try", "sonnet> ");
    assert!(ok.contains("it works now"), "{ok}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    // One chat: the failed prompt kept as pending, then the turn that worked.
    let records = env.only_chat();
    assert!(
        records.iter().any(|r| r["type"] == "pending"),
        "{records:#?}"
    );
}

#[test]
fn a_history_that_cannot_be_written_is_said_once_and_the_session_goes_on() {
    let env = Env::echo();
    std::fs::create_dir_all(env.home.join("history")).unwrap();
    let mut term = Terminal::start(&env, "-i");
    let welcome = term.expect(PROMPT);
    assert!(welcome.contains("is not a regular file"), "{welcome}");
    let first = say(&mut term, "one", PROMPT);
    assert!(!first.contains("history file"), "{first}");
    let second = say(&mut term, "two", PROMPT);
    assert!(!second.contains("history file"), "{second}");
    term.send("\x04");
    let (code, screen) = term.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(env.only_messages().len(), 4);
}

#[test]
fn reply_i_and_a_named_chat() {
    let env = Env::echo();
    let mut term = Terminal::start(&env, "--chat plans -i");
    term.expect(PROMPT);
    say(&mut term, "first", PROMPT);
    term.send("\x04");
    assert_eq!(term.finish().0, Some(0));
    assert_eq!(env.chat_ids(), vec!["plans".to_owned()]);
    // `ai reply -i` continues the most recent chat: that one.
    let mut term = Terminal::start(&env, "reply -i");
    let welcome = term.expect(PROMPT);
    assert!(welcome.contains("chat plans (1 exchange)"), "{welcome}");
    say(&mut term, "second", PROMPT);
    term.send("\x04");
    assert_eq!(term.finish().0, Some(0));
    assert_eq!(env.messages("plans").len(), 4);
}

#[test]
fn a_model_that_cannot_answer_is_said_before_the_session_starts() {
    // An HTTP provider without its key: nothing could be sent.
    let env = Env::echo();
    env.write_config(r#"{"default_alias":"openai:gpt-4o"}"#);
    let (code, screen) = on_terminal(&env, "-i", "");
    assert_ne!(code, Some(0), "{screen}");
    assert!(screen.contains("error:"), "{screen}");
    assert!(!screen.contains("> "), "{screen}");
}
