//! What a line typed in the session means: a command, the end, or a message to send. Pure
//! functions, so every rule is tested here without a terminal.

/// A line as the session reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line<'a> {
    /// Nothing but blanks: nothing is sent.
    Empty,
    /// A message for the model, as typed.
    Send(&'a str),
    Command(Command<'a>),
    /// `/word` that is no command (`/etc/hosts` and other paths are messages).
    Unknown(&'a str),
}

/// The session's commands.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Command<'a> {
    /// `/clear`: the next line starts a new chat (the old one is kept).
    Clear,
    /// `/model [NAME]`: switch to NAME, or say which model answers.
    Model(Option<&'a str>),
    /// `/kb [NAME[,NAME]|off]`: ground the next turns in these, in none, or say which.
    Kb(Option<&'a str>),
    /// `/retry`: send the last prompt again (a failed or stopped one takes its own place).
    Retry,
    /// `/edit`: the last prompt in `$VISUAL`/`$EDITOR`, sent when the editor ends.
    Edit,
    /// `/file PATH…`: files that go with the next message, as `-F` gives them.
    File(Option<&'a str>),
    /// `/system [TEXT]`: the system prompt from now on, or say which.
    System(Option<&'a str>),
    /// `/copy`: the last reply to the clipboard (OSC 52).
    Copy,
    /// `/rename TITLE`: the chat's title.
    Rename(Option<&'a str>),
    /// `/sources`: the notes the last answer was given.
    Sources,
    /// `/help`.
    Help,
    /// `/exit`, `exit`, `quit`.
    Exit,
}

/// The help the welcome line and `/help` show.
pub(super) const COMMANDS: &str =
    "/clear, /model NAME, /kb NAME|off, /retry, /edit, /file PATH, /help, /exit";

/// Every command word, for completion.
pub(super) const WORDS: &[&str] = &[
    "/clear", "/new", "/model", "/kb", "/retry", "/edit", "/file", "/system", "/copy", "/rename",
    "/sources", "/help", "/exit", "/quit",
];

pub(super) const HELP: &str = "\
Each line is one turn of the chat; it is saved as you go, so `ai chat ID` continues it from any shell.
  /clear        start a new chat (this one is kept)
  /model NAME   answer with another model from now on (`ai list` shows them)
  /model        say which model answers
  /kb NAME      ground the answers in knowledge base NAME (several: a,b)
  /kb off       no knowledge base from now on
  /kb           say which knowledge bases are used
  /retry        send the last prompt again (a failed or stopped one is replaced, not repeated)
  /edit         edit the last prompt in $VISUAL or $EDITOR, then send it
  /file PATH    send a file (or several) with the next message, as -F does
  /system TEXT  the system prompt from now on; /system says which
  /copy         copy the last reply (to the terminal's clipboard, OSC 52)
  /rename TITLE give the chat a title
  /sources      the notes the last answer was given
  /help         this help
  /exit         end the session (also exit, quit, or Ctrl+D)
A line ending in \\ goes on on the next line; a pasted block is one message; lines typed while a
reply streams are sent after it, in order. Tab completes commands, models and knowledge bases.
Ctrl+C stops a reply (what arrived is saved) or clears the line.";

/// Read one complete message (continuation lines already joined).
pub(super) fn classify(text: &str) -> Line<'_> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Line::Empty;
    }
    if matches!(trimmed, "exit" | "quit") {
        return Line::Command(Command::Exit);
    }
    // A command starts the line (a leading blank sends the line as it is) and is one word of
    // letters after the slash; `/etc/hosts: what is it?` is a message.
    let Some(rest) = text.strip_prefix('/') else {
        return Line::Send(text);
    };
    let (word, arg) = match rest.split_once(char::is_whitespace) {
        Some((w, a)) => (w, Some(a.trim()).filter(|a| !a.is_empty())),
        None => (rest.trim_end(), None),
    };
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return Line::Send(text);
    }
    let command = match word {
        // What follows a command that takes nothing is ignored.
        "clear" | "new" => Command::Clear,
        "model" => Command::Model(arg),
        "kb" => Command::Kb(arg),
        "retry" => Command::Retry,
        "edit" => Command::Edit,
        "file" => Command::File(arg),
        "system" => Command::System(arg),
        "copy" => Command::Copy,
        "rename" => Command::Rename(arg),
        "sources" => Command::Sources,
        "help" => Command::Help,
        "exit" | "quit" => Command::Exit,
        _ => return Line::Unknown(word),
    };
    Line::Command(command)
}

/// A line that ends in a single `\` goes on on the next line: the line without it. `\\` at the
/// end is a literal backslash (the line is complete, with one backslash).
pub(super) fn continued(line: &str) -> Continued<'_> {
    match line.strip_suffix('\\') {
        Some(head) if head.ends_with('\\') => Continued::Complete(head),
        Some(head) => Continued::More(head),
        None => Continued::Complete(line),
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Continued<'a> {
    /// The message goes on; this is its text so far from this line.
    More(&'a str),
    /// The last line of the message.
    Complete(&'a str),
}

/// What the user chose when the chat is past 85% of the model's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Overflow {
    Continue,
    Summarize,
    NewChat,
}

/// An answer to `[c]ontinue, [s]ummarize, [n]ew chat`: the letter or the word, any case.
pub(super) fn overflow_answer(answer: &str) -> Option<Overflow> {
    match answer.trim().to_ascii_lowercase().as_str() {
        "c" | "continue" => Some(Overflow::Continue),
        "s" | "summarize" | "summarise" => Some(Overflow::Summarize),
        "n" | "new" | "new chat" => Some(Overflow::NewChat),
        _ => None,
    }
}

/// The names of `/kb a,b` (blanks and repeats dropped); empty for `/kb off` and `/kb none`.
pub(super) fn kb_names(arg: &str) -> Vec<String> {
    if matches!(arg.trim(), "off" | "none") {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    for n in arg
        .split([',', ' '])
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if !names.iter().any(|m| m == n) {
            names.push(n.to_owned());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_messages() {
        assert_eq!(classify(""), Line::Empty);
        assert_eq!(classify("   \t"), Line::Empty);
        assert_eq!(classify("hello"), Line::Send("hello"));
        assert_eq!(classify("exit"), Line::Command(Command::Exit));
        assert_eq!(classify("  quit  "), Line::Command(Command::Exit));
        assert_eq!(classify("exit now"), Line::Send("exit now"));
        assert_eq!(classify("/exit"), Line::Command(Command::Exit));
        assert_eq!(classify("/clear"), Line::Command(Command::Clear));
        assert_eq!(classify("/clear "), Line::Command(Command::Clear));
        assert_eq!(classify("/help"), Line::Command(Command::Help));
        assert_eq!(classify("/model"), Line::Command(Command::Model(None)));
        assert_eq!(
            classify("/model  gpt "),
            Line::Command(Command::Model(Some("gpt")))
        );
        assert_eq!(classify("/kb off"), Line::Command(Command::Kb(Some("off"))));
        assert_eq!(classify("/kb"), Line::Command(Command::Kb(None)));
        assert_eq!(classify("/frobnicate"), Line::Unknown("frobnicate"));
        assert_eq!(classify("/retry"), Line::Command(Command::Retry));
        assert_eq!(
            classify("/file a.md b.md"),
            Line::Command(Command::File(Some("a.md b.md")))
        );
        assert_eq!(
            classify("/system Be terse. "),
            Line::Command(Command::System(Some("Be terse.")))
        );
        assert_eq!(
            classify("/rename Coffee"),
            Line::Command(Command::Rename(Some("Coffee")))
        );
        assert_eq!(classify("/copy"), Line::Command(Command::Copy));
        assert_eq!(classify("/clear all"), Line::Command(Command::Clear));
        // Paths, a leading blank and a lone slash are messages.
        assert_eq!(
            classify("/etc/hosts: what is it?"),
            Line::Send("/etc/hosts: what is it?")
        );
        assert_eq!(classify(" /help"), Line::Send(" /help"));
        assert_eq!(classify("/"), Line::Send("/"));
        assert_eq!(classify("/ 2"), Line::Send("/ 2"));
        assert_eq!(classify("/x1"), Line::Send("/x1"));
    }

    #[test]
    fn a_trailing_backslash_continues() {
        assert_eq!(continued("one \\"), Continued::More("one "));
        assert_eq!(continued("\\"), Continued::More(""));
        assert_eq!(continued("done"), Continued::Complete("done"));
        assert_eq!(continued("C:\\\\"), Continued::Complete("C:\\"));
        assert_eq!(continued(""), Continued::Complete(""));
    }

    #[test]
    fn overflow_answers() {
        assert_eq!(overflow_answer("c"), Some(Overflow::Continue));
        assert_eq!(overflow_answer(" S "), Some(Overflow::Summarize));
        assert_eq!(overflow_answer("new"), Some(Overflow::NewChat));
        assert_eq!(overflow_answer("N"), Some(Overflow::NewChat));
        assert_eq!(overflow_answer(""), None);
        assert_eq!(overflow_answer("yes"), None);
    }

    #[test]
    fn kb_lists() {
        assert_eq!(kb_names("off"), Vec::<String>::new());
        assert_eq!(kb_names(" none "), Vec::<String>::new());
        assert_eq!(kb_names("notes"), vec!["notes"]);
        assert_eq!(kb_names("a, b a,,"), vec!["a", "b"]);
    }

    #[test]
    fn no_input_panics() {
        for s in [
            "/",
            "//",
            "\\",
            "/\u{e9}",
            "/é x",
            "\u{0}",
            "/kb \u{200b}",
            "é\\",
        ] {
            let _ = classify(s);
            let _ = continued(s);
            let _ = overflow_answer(s);
            let _ = kb_names(s);
        }
    }
}
