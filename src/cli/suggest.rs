//! A mistyped command word is not a paid prompt. A word where a command goes (`ai models`,
//! `ai chat ls`, `ai chat rm 9D6`) that is close to a command, or is another tool's name for
//! one, is answered with "did you mean …" (exit 2) instead of being sent to the default model
//! and saved as a chat. A one-word prompt that looks like a command goes after `--`
//! (`ai -- models`), or in quotes with other words (`ai "models of the atom"`).

use crate::error::Error;
use crate::output::sanitize;
use crate::reserved::{chat_actions, top_commands};

/// Where the word stands: first of a top-level call, or first after `chat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Top,
    Chat,
}

/// Other tools' names for commands of `ai` (llm, aichat, the shell), at the top level.
const TOP_ALIASES: &[(&str, &[&str])] = &[
    ("ls", &["ai list", "ai chat list"]),
    ("models", &["ai list"]),
    ("aliases", &["ai list"]),
    ("providers", &["ai list --providers"]),
    ("rm", &["ai chat delete"]),
    ("del", &["ai chat delete"]),
    ("remove", &["ai chat delete"]),
    ("cat", &["ai chat show"]),
    ("view", &["ai chat show"]),
    ("last", &["ai reply"]),
    ("continue", &["ai reply"]),
    ("resume", &["ai reply"]),
    ("logs", &["ai chat list"]),
    ("log", &["ai chat list"]),
    ("history", &["ai chat list"]),
    ("chats", &["ai chat list"]),
    ("config", &["ai init"]),
    ("configure", &["ai init"]),
    ("setup", &["ai init"]),
    ("keys", &["ai init"]),
    ("find", &["ai chat search"]),
    ("grep", &["ai chat search"]),
    ("cost", &["ai usage"]),
    ("costs", &["ai usage"]),
    ("spend", &["ai usage"]),
    ("stats", &["ai usage"]),
    ("version", &["ai --version"]),
];

/// The same after `ai chat`.
const CHAT_ALIASES: &[(&str, &[&str])] = &[
    ("ls", &["ai chat list"]),
    ("logs", &["ai chat list"]),
    ("history", &["ai chat list"]),
    ("rm", &["ai chat delete"]),
    ("del", &["ai chat delete"]),
    ("remove", &["ai chat delete"]),
    ("cat", &["ai chat show"]),
    ("view", &["ai chat show"]),
    ("mv", &["ai chat rename"]),
    ("title", &["ai chat rename"]),
    ("find", &["ai chat search"]),
    ("grep", &["ai chat search"]),
    ("last", &["ai reply"]),
    ("create", &["ai chat new"]),
    ("prune", &["ai chat gc"]),
    ("clean", &["ai chat gc"]),
];

/// Commands whose arguments the words after the mistyped one would be (`rm 9D6` → `delete 9D6`).
const TAKE_ARGUMENTS: &[&str] = &[
    "delete",
    "show",
    "export",
    "import",
    "rename",
    "retry",
    "compact",
    "search",
    "new",
    "default",
    "completions",
];

/// The "did you mean" error for `word` (at `level`, followed by `rest`), or `None` when the call
/// is a prompt. Only a call shaped like a command counts: the word alone, or followed by one
/// more word, or by a chat ID (`is_chat` says whether a word names a chat or has an ID's shape).
/// `ai show me the logs` stays a prompt.
pub(crate) fn mistyped_command(
    level: Level,
    word: &str,
    rest: &[String],
    is_chat: &dyn Fn(&str) -> bool,
) -> Option<Error> {
    if word.len() < 2
        || !word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return None;
    }
    let shaped = rest.len() <= 1 && rest.iter().all(|w| !w.chars().any(char::is_whitespace))
        || rest.first().is_some_and(|w| is_chat(w));
    if !shaped {
        return None;
    }
    let close = candidates(level, &word.to_ascii_lowercase());
    if close.is_empty() {
        return None;
    }
    let with_rest: Vec<String> = close
        .iter()
        .map(|c| {
            let takes = c
                .rsplit(' ')
                .next()
                .is_some_and(|last| TAKE_ARGUMENTS.contains(&last));
            if takes && !rest.is_empty() {
                format!("`{c} {}`", sanitize(&rest.join(" ")))
            } else {
                format!("`{c}`")
            }
        })
        .collect();
    let (what, prefix) = match level {
        Level::Top => ("a command".to_owned(), "ai --"),
        Level::Chat => ("a command of `ai chat`".to_owned(), "ai chat --"),
    };
    let mut words = vec![sanitize(word)];
    words.extend(rest.iter().map(|w| sanitize(w)));
    let as_prompt = words.join(" ");
    Some(
        Error::usage(format!("'{}' is not {what}", sanitize(word))).hint(format!(
            "did you mean {}? To send '{as_prompt}' as a prompt, put it after --: {prefix} {as_prompt}",
            join_or(&with_rest)
        )),
    )
}

/// The commands `word` (lower case) most likely meant, best first.
fn candidates(level: Level, word: &str) -> Vec<String> {
    let aliases = match level {
        Level::Top => TOP_ALIASES,
        Level::Chat => CHAT_ALIASES,
    };
    if let Some((_, to)) = aliases.iter().find(|(a, _)| *a == word) {
        return to.iter().map(|s| (*s).to_owned()).collect();
    }
    if word.len() < 3 {
        return Vec::new();
    }
    let limit = if word.chars().count() <= 5 { 1 } else { 2 };
    let mut scored: Vec<(usize, String)> = Vec::new();
    let mut consider = |name: &str, full: String| {
        let d = distance(word, name);
        if d <= limit && name.len() >= 2 {
            scored.push((d, full));
        }
    };
    match level {
        Level::Top => {
            for c in top_commands() {
                consider(c, format!("ai {c}"));
            }
            // `ai delete K7Q`, `ai serach`: the chat actions are commands of `ai chat`.
            for c in chat_actions().iter().filter(|c| *c != "help") {
                consider(c, format!("ai chat {c}"));
            }
            // Misspelt long names too (`modles`, `histroy`); short ones are too close to words.
            for (a, to) in TOP_ALIASES {
                if a.len() >= 6 {
                    for t in *to {
                        consider(a, (*t).to_owned());
                    }
                }
            }
        }
        Level::Chat => {
            for c in chat_actions() {
                consider(c, format!("ai chat {c}"));
            }
        }
    }
    scored.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, c) in scored {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out.truncate(3);
    out
}

/// "`a`", "`a` or `b`", "`a`, `b` or `c`".
fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Edit distance counting a swap of two neighbours as one edit (`lsit` → `list`).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn no_chat(_: &str) -> bool {
        false
    }

    fn hint(level: Level, word: &str, rest: &[&str]) -> Option<String> {
        mistyped_command(level, word, &w(rest), &|x: &str| {
            crate::chat::store::id_shaped(x)
        })
        .map(|e| e.hint_text().unwrap_or_default().to_owned())
    }

    #[test]
    fn the_words_of_the_issue() {
        let h = hint(Level::Chat, "ls", &[]).unwrap();
        assert!(h.contains("`ai chat list`"), "{h}");
        assert!(h.contains("ai chat -- ls"), "{h}");
        let h = hint(Level::Chat, "rm", &["9D6"]).unwrap();
        assert!(h.contains("`ai chat delete 9D6`"), "{h}");
        let h = hint(Level::Top, "models", &[]).unwrap();
        assert!(h.contains("`ai list`"), "{h}");
        assert!(h.contains("ai -- models"), "{h}");
        assert!(
            hint(Level::Top, "config", &[])
                .unwrap()
                .contains("`ai init`")
        );
        assert!(
            hint(Level::Top, "logs", &[])
                .unwrap()
                .contains("`ai chat list`")
        );
        for a in ["ls", "rm", "show", "cat", "new", "last"] {
            assert!(hint(Level::Top, a, &[]).is_some(), "{a}");
        }
    }

    #[test]
    fn near_misses() {
        assert!(hint(Level::Top, "lsit", &[]).unwrap().contains("`ai list`"));
        assert!(
            hint(Level::Top, "innit", &[])
                .unwrap()
                .contains("`ai init`")
        );
        assert!(
            hint(Level::Chat, "delte", &["K7Q"])
                .unwrap()
                .contains("`ai chat delete K7Q`")
        );
        assert!(
            hint(Level::Top, "delete", &["K7Q"])
                .unwrap()
                .contains("`ai chat delete K7Q`")
        );
        assert!(hint(Level::Chat, "serach", &["x"]).is_some());
        assert_eq!(distance("lsit", "list"), 1);
        assert_eq!(distance("", "ab"), 2);
    }

    #[test]
    fn prompts_stay_prompts() {
        // Not close to any command.
        for word in [
            "hello",
            "explain",
            "why",
            "hi",
            "summarize",
            "review",
            "opus",
        ] {
            assert!(hint(Level::Top, word, &[]).is_none(), "{word}");
        }
        // Close, but shaped like a sentence.
        assert!(
            mistyped_command(Level::Top, "show", &w(&["me", "the", "logs"]), &no_chat).is_none()
        );
        assert!(mistyped_command(Level::Top, "new", &w(&["ideas for dinner"]), &no_chat).is_none());
        assert!(mistyped_command(Level::Chat, "cat", &w(&["is", "a", "pet"]), &no_chat).is_none());
        // Not a word.
        assert!(mistyped_command(Level::Top, "ls -l", &[], &no_chat).is_none());
        assert!(mistyped_command(Level::Top, "l", &[], &no_chat).is_none());
    }

    #[test]
    fn a_chat_id_after_the_word_makes_it_a_command() {
        let e = mistyped_command(Level::Chat, "rm", &w(&["9D6", "K7Q"]), &|x: &str| {
            crate::chat::store::id_shaped(x)
        })
        .unwrap();
        assert_eq!(e.exit_code(), 2);
        assert!(e.hint_text().unwrap().contains("ai chat delete 9D6 K7Q"));
    }
}
