//! Tables read from the clap definitions, so that nothing which must agree with clap is written
//! out by hand: the reserved words (every command word, the mode words, `help`) and the options
//! that take a value.

use std::sync::OnceLock;

use clap::CommandFactory;

use crate::args::Cli;

/// The mode words of the positional grammar. Each is also a flag (`--json`, …) of a call; a
/// unit test checks that.
pub(crate) const MODE_WORDS: [&str; 4] = ["json", "cmd", "run", "yolo"];

/// Tables built once per process from [`Cli::command`]. (Read-only after the first use; building
/// the clap command costs more than a lookup, and the grammar asks for every word.)
struct Tables {
    /// Every subcommand name at any depth, `help`, and the mode words; sorted.
    reserved: Vec<String>,
    /// Names of the top-level commands (`chat`, `list`, …).
    top: Vec<String>,
    /// Names of the `chat` actions (`list`, `show`, …).
    chat: Vec<String>,
    /// `--long` and `-s` forms of every option, at any depth, that takes a value.
    valued: Vec<String>,
}

static TABLES: OnceLock<Tables> = OnceLock::new();

fn tables() -> &'static Tables {
    TABLES.get_or_init(|| Tables::of(&Cli::command()))
}

/// Builds the tables from `cmd` (the one `main` parses with) unless they are built already:
/// building the clap command costs as much as the rest of `ai echo` together.
pub(crate) fn seed(cmd: &clap::Command) {
    TABLES.get_or_init(|| Tables::of(cmd));
}

impl Tables {
    fn of(cmd: &clap::Command) -> Tables {
        let mut reserved = vec!["help".to_owned()];
        reserved.extend(MODE_WORDS.iter().map(|w| (*w).to_owned()));
        let mut valued = Vec::new();
        walk(cmd, &mut reserved, &mut valued);
        reserved.sort();
        reserved.dedup();
        valued.sort();
        valued.dedup();
        // clap adds a `help` command to every command that has subcommands when it builds them.
        let names = |c: &clap::Command| {
            c.get_subcommands()
                .map(|s| s.get_name().to_owned())
                .chain(["help".to_owned()])
                .collect::<Vec<_>>()
        };
        let chat = cmd.find_subcommand("chat").map(names).unwrap_or_default();
        let top = names(cmd);
        Tables {
            reserved,
            top,
            chat,
            valued,
        }
    }
}

fn walk(cmd: &clap::Command, reserved: &mut Vec<String>, valued: &mut Vec<String>) {
    for arg in cmd.get_arguments() {
        if arg.is_positional() || !arg.get_action().takes_values() {
            continue;
        }
        valued.extend(arg.get_long().map(|l| format!("--{l}")));
        valued.extend(arg.get_short().map(|s| format!("-{s}")));
        // Hidden aliases take their value the same way (`-a` for `-F`).
        valued.extend(
            arg.get_all_aliases()
                .into_iter()
                .flatten()
                .map(|l| format!("--{l}")),
        );
        valued.extend(
            arg.get_all_short_aliases()
                .into_iter()
                .flatten()
                .map(|s| format!("-{s}")),
        );
    }
    for sub in cmd.get_subcommands() {
        reserved.push(sub.get_name().to_owned());
        walk(sub, reserved, valued);
    }
}

/// Every word that is never an alias nor a chat name: the command words at any depth (`chat`,
/// `list`, `export`, …), the mode words and `help`. Sorted.
pub(crate) fn reserved_words() -> &'static [String] {
    &tables().reserved
}

/// Is `word` one of [`reserved_words`], in any case? (Chat names are stored lower case, so
/// `--chat LIST` would otherwise become the chat `list`.)
pub(crate) fn is_reserved(word: &str) -> bool {
    let word = word.to_ascii_lowercase();
    reserved_words()
        .binary_search_by(|w| w.as_str().cmp(&word))
        .is_ok()
}

/// Is `word` a top-level command (`list`, `chat`, …)?
pub(crate) fn is_command(word: &str) -> bool {
    tables().top.iter().any(|w| w == word)
}

/// The top-level command words (`list`, `chat`, …, `help`).
pub(crate) fn top_commands() -> &'static [String] {
    &tables().top
}

/// The actions of `chat` (`list`, `show`, …, `help`).
pub(crate) fn chat_actions() -> &'static [String] {
    &tables().chat
}

/// Is `word` an action of `chat` (`list`, `show`, `delete`, …)?
pub(crate) fn is_chat_action(word: &str) -> bool {
    tables().chat.iter().any(|w| w == word)
}

/// How many arguments an option argument spans: 2 when its value is the next argument
/// (`--chat ID`, `-F a.txt`, `-qF a.txt`), else 1 (`--json`, `--chat=ID`, `-Fa.txt`).
pub(crate) fn option_span(arg: &str) -> usize {
    let valued = &tables().valued;
    if let Some(long) = arg.strip_prefix("--") {
        if long.contains('=') {
            return 1;
        }
        return if valued.iter().any(|v| v == arg) {
            2
        } else {
            1
        };
    }
    let Some(cluster) = arg.strip_prefix('-') else {
        return 1;
    };
    // A cluster of short flags: the first one that takes a value takes the rest of the
    // argument, or the next argument when nothing follows it.
    let mut chars = cluster.chars();
    while let Some(c) = chars.next() {
        if valued
            .iter()
            .any(|v| v.strip_prefix('-') == Some(c.encode_utf8(&mut [0; 4])))
        {
            return if chars.as_str().is_empty() { 2 } else { 1 };
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_command(cmd: &clap::Command, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands() {
            out.push(sub.get_name().to_owned());
            every_command(sub, out);
        }
    }

    #[test]
    fn every_clap_command_word_is_reserved() {
        let mut names = Vec::new();
        every_command(&Cli::command(), &mut names);
        assert!(names.len() > 15, "{names:?}");
        for name in &names {
            assert!(is_reserved(name), "{name}");
        }
        for w in [
            "export", "import", "compact", "help", "json", "run", "chat", "reply",
        ] {
            assert!(is_reserved(w), "{w}");
        }
        assert!(!is_reserved("sonnet") && !is_reserved("glm5"));
        // In any case: chat names are stored lower case, so `LIST` would become `list`.
        assert!(is_reserved("List") && is_reserved("EXPORT"));
        // The hand-written lists these words replace: the chat store's names and the aliases'.
        for w in [
            "list", "show", "delete", "rename", "retry", "gc", "new", "help",
        ] {
            assert!(is_reserved(w), "{w}");
        }
        for w in [
            "init",
            "list",
            "default",
            "completions",
            "serve",
            "chat",
            "reply",
            "json",
            "cmd",
            "run",
            "yolo",
            "help",
        ] {
            assert!(is_reserved(w), "{w}");
        }
    }

    #[test]
    fn mode_words_are_flags_of_a_call() {
        let cmd = Cli::command();
        for w in MODE_WORDS {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_long() == Some(w))
                .unwrap_or_else(|| panic!("--{w}"));
            assert!(!arg.get_action().takes_values(), "--{w} is a flag");
        }
    }

    #[test]
    fn valued_options_come_from_clap() {
        for o in [
            "-F",
            "--file",
            "--timeout",
            "--chat",
            "--system",
            "--limit",
            "--older-than",
            "--name",
            "--keep",
            "--format",
            "--host",
            "--token",
        ] {
            assert_eq!(option_span(o), 2, "{o}");
        }
        for o in [
            "-q",
            "--json",
            "--no-wait",
            "--dry-run",
            "-y",
            "--chat=x",
            "-Fa.txt",
        ] {
            assert_eq!(option_span(o), 1, "{o}");
        }
        assert_eq!(option_span("-qF"), 2);
        assert_eq!(option_span("-qy"), 1);
    }

    /// The value table is one list for every level, which is exact only while no option name
    /// is a flag at one level and takes a value at another.
    #[test]
    fn no_option_is_a_flag_somewhere_and_valued_elsewhere() {
        fn collect(cmd: &clap::Command, seen: &mut Vec<(String, bool)>) {
            for a in cmd.get_arguments().filter(|a| !a.is_positional()) {
                let valued = a.get_action().takes_values();
                for name in a
                    .get_long()
                    .map(|l| format!("--{l}"))
                    .into_iter()
                    .chain(a.get_short().map(|s| format!("-{s}")))
                {
                    seen.push((name, valued));
                }
            }
            for s in cmd.get_subcommands() {
                collect(s, seen);
            }
        }
        let mut seen = Vec::new();
        collect(&Cli::command(), &mut seen);
        for (name, valued) in &seen {
            assert!(
                seen.iter().all(|(n, v)| n != name || v == valued),
                "{name} is both a flag and valued"
            );
        }
    }
}
