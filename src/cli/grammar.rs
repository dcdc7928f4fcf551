//! The positional grammar: raw words → models, mode words, the chat and the prompt, resolved in
//! one tested function.
//!
//! The rules, in order: after `chat` (or `ai chat`) an existing chat's ID; then keywords (models,
//! `chat [ID]`, `reply`, and mode words, which count only before a model word, so that
//! `ai sonnet run the tests` is a prompt); the first other word starts the prompt. Words after
//! `--` are always prompt text.

use crate::alias::{self, Route};
use crate::config::Config;
use crate::error::{Error, Result};

use crate::reserved::{MODE_WORDS, is_chat_action, is_command, is_reserved};

use super::suggest::{self, Level};

pub(crate) use crate::target::Modes;

/// Which command the words came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// `ai [MODEL…] [chat [ID]] PROMPT`
    Top,
    /// `ai chat [ID] [MODEL] PROMPT`
    Chat,
    /// `ai reply [MODEL] PROMPT`
    Reply,
}

/// Which chat a call continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChatRef {
    /// A plain prompt: saved as a new chat unless `--no-chat` or config `chat.save: false`.
    Plain,
    /// `chat` with no ID: a new chat.
    New,
    /// A new chat with this name (`--chat NAME`).
    Named(String),
    /// An existing chat (its canonical ID).
    Existing(String),
    /// `reply`: the most recently used chat.
    Last,
}

/// The positional words, resolved.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Words {
    pub(crate) models: Vec<Route>,
    pub(crate) modes: Modes,
    pub(crate) chat: ChatRef,
    /// Prompt words, joined by single spaces (may be empty: the prompt can come from stdin).
    pub(crate) prompt: String,
}

/// Resolve the raw words. `literal_from` is the index of the first word that came after `--`:
/// from there on every word is prompt text. `find_chat` maps a word to the ID of an existing
/// chat (case-insensitively); `chat_flag` is the value of `--chat`.
pub(crate) fn resolve_words(
    entry: Entry,
    words: &[String],
    literal_from: usize,
    chat_flag: Option<&str>,
    config: &Config,
    find_chat: &dyn Fn(&str) -> Option<String>,
) -> Result<Words> {
    let mut models = Vec::new();
    let mut modes = Modes::default();
    let mut chat = match entry {
        Entry::Top => ChatRef::Plain,
        Entry::Chat => ChatRef::New,
        Entry::Reply => ChatRef::Last,
    };
    let keywords_end = words.len().min(literal_from);
    let mut i = 0;
    if entry == Entry::Top
        && i < keywords_end
        && is_command(&words[0])
        && words[0] != "chat"
        && words[0] != "reply"
    {
        // The argv pre-pass (`hoist_options`) lets clap see every command word, so this is a
        // guard for callers that skip it (the fuzz targets): a command word is never a prompt.
        return Err(command_word_error(&words[0], None));
    }
    if entry == Entry::Top && i < keywords_end {
        mistyped_command(Level::Top, words, i, keywords_end, config, find_chat)?;
    }
    if entry == Entry::Chat && i < keywords_end {
        match chat_id_word(&words[i], config, find_chat)? {
            Some(id) => {
                chat = ChatRef::Existing(id);
                i += 1;
            }
            None => mistyped_command(Level::Chat, words, i, keywords_end, config, find_chat)?,
        }
    }
    while i < keywords_end {
        let w = words[i].as_str();
        match w {
            _ if MODE_WORDS.contains(&w) => {
                // A mode word counts only where it cannot be the start of an unquoted prompt:
                // followed (past other mode words) by a model word, by nothing (the prompt is on
                // stdin or after --), or by one quoted prompt. `ai sonnet run the tests` is a
                // prompt; `ai run sonnet "…"` and `ai sonnet run "the tests"` are run mode.
                let rest: Vec<&String> = words[i + 1..keywords_end]
                    .iter()
                    .skip_while(|n| MODE_WORDS.contains(&n.as_str()))
                    .collect();
                let is_mode = match rest.first() {
                    None => true,
                    Some(n) if alias::resolve(n, config)?.is_some() => true,
                    Some(n) => rest.len() == 1 && n.chars().any(char::is_whitespace),
                };
                if !is_mode {
                    break;
                }
                match w {
                    "json" => modes.json = true,
                    "yolo" => modes.yolo = true,
                    "cmd" => modes.cmd = true,
                    _ => modes.run = true,
                }
            }
            "chat" if entry == Entry::Top && chat == ChatRef::Plain => {
                chat = ChatRef::New;
                if i + 1 < keywords_end {
                    match chat_id_word(&words[i + 1], config, find_chat)? {
                        Some(id) => {
                            chat = ChatRef::Existing(id);
                            i += 1;
                        }
                        None => mistyped_command(
                            Level::Chat,
                            words,
                            i + 1,
                            keywords_end,
                            config,
                            find_chat,
                        )?,
                    }
                }
            }
            "reply" if entry == Entry::Top && chat == ChatRef::Plain => chat = ChatRef::Last,
            "chat"
                if entry == Entry::Reply
                    && i + 1 < keywords_end
                    && find_chat(&words[i + 1]).is_some() =>
            {
                return Err(
                    Error::usage("`reply` (or -c) and `chat ID` name the chat twice")
                        .hint("to continue that chat, leave out reply/-c: ai chat ID \"…\""),
                );
            }
            _ if is_reserved(w) => break,
            _ => match alias::resolve(w, config)? {
                Some(route) => models.push(route),
                None => {
                    // A near-miss alias is a mistyped model only when the call is shaped like
                    // one: `provider:model`, `@effort`, or a single (or quoted) prompt after it.
                    // `ai code review this` is a prompt, not a typo of `codex`.
                    let next = words.get(i + 1);
                    let call_shaped = w.contains(':')
                        || w.contains('@')
                        || i + 2 == words.len()
                        || next.is_some_and(|n| n.chars().any(char::is_whitespace));
                    if models.is_empty()
                        && next.is_some()
                        && call_shaped
                        && alias::looks_like_model(w, config)
                    {
                        return Err(alias::unknown(w, config));
                    }
                    break;
                }
            },
        }
        i += 1;
    }
    if let Some(flag) = chat_flag {
        if chat != ChatRef::Plain {
            return Err(
                Error::usage("--chat and a `chat`/`reply` word name the chat twice")
                    .hint("use one of them"),
            );
        }
        chat = match find_chat(flag) {
            Some(id) => ChatRef::Existing(id),
            None => new_chat_name(flag)?,
        };
    }
    if models.is_empty()
        && config.default_alias.is_none()
        && matches!(chat, ChatRef::Plain | ChatRef::New | ChatRef::Named(_))
        && i < keywords_end
        && !words[i].chars().any(char::is_whitespace)
    {
        // The call needs the default model and there is none: the first word was most likely
        // meant as a model. Say which word, and what is close to it.
        return Err(no_default_error(&words[i], config));
    }
    Ok(Words {
        models,
        modes,
        chat,
        prompt: words[i..].join(" "),
    })
}

/// `words[at]` stands where a command goes: an error when it is a mistyped command word (see
/// [`suggest`]), unless it names a model or a mode. Words after `--` are never looked at.
fn mistyped_command(
    level: Level,
    words: &[String],
    at: usize,
    keywords_end: usize,
    config: &Config,
    find_chat: &dyn Fn(&str) -> Option<String>,
) -> Result<()> {
    let word = words[at].as_str();
    // Words reserved below the top (`show`, `delete`) are checked: `ai show K7Q` is a slip.
    if MODE_WORDS.contains(&word)
        || is_command(word)
        || word.contains(':')
        || word.contains('@')
        || alias::resolve(word, config)?.is_some()
    {
        return Ok(());
    }
    let is_chat = |w: &str| find_chat(w).is_some() || crate::chat::store::id_shaped(w);
    match suggest::mistyped_command(level, word, &words[at + 1..keywords_end], &is_chat) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// No model named, none by default, and `word` came first.
fn no_default_error(word: &str, config: &Config) -> Error {
    let close = alias::suggestions(word, config);
    let then = alias::default_hint(config);
    let hint = if close.is_empty() {
        format!("name one (`ai list` shows them all), or {then}")
    } else {
        format!("did you mean {}? Or {then}", close.join(", "))
    };
    Error::usage(format!(
        "no model named, and no default model is set ('{}' is not a known model)",
        crate::output::sanitize(word)
    ))
    .hint(hint)
}

/// A command word where a prompt would start (`ai sonnet chat list`).
fn command_word_error(word: &str, parent: Option<&str>) -> Error {
    let full = match parent {
        Some(p) => format!("ai {p} {word}"),
        None => format!("ai {word}"),
    };
    Error::usage(format!("'{word}' is a command word here, not a prompt")).hint(format!(
        "to run the command, write `{full} …` with options after the command word; to send \
         '{word}' as text, quote the whole prompt or put it after --"
    ))
}

/// After `chat`: an existing chat's ID, an error for a chat action word (`chat list`) or for an
/// ID-shaped word that names neither a chat nor a model, or `None` (the word starts the model or
/// prompt). An existing chat wins over an alias of the same name (`glm5`, `qwen3`).
fn chat_id_word(
    word: &str,
    config: &Config,
    find_chat: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>> {
    if let Some(id) = find_chat(word) {
        return Ok(Some(id));
    }
    if is_chat_action(word) {
        return Err(command_word_error(word, Some("chat")));
    }
    if crate::chat::store::id_shaped(word) && alias::resolve(word, config)?.is_none() {
        return Err(Error::not_found(format!("no chat '{word}'")).hint(format!(
            "`ai chat list` shows your chats; to send '{word}' as text, quote the whole prompt or put it after --"
        )));
    }
    Ok(None)
}

/// `--chat NAME` for a chat that does not exist yet.
fn new_chat_name(name: &str) -> Result<ChatRef> {
    use crate::chat::store;
    store::check_id(name)?;
    if store::id_shaped(name) {
        return Err(Error::not_found(format!("no chat '{name}'"))
            .hint("`ai chat list` shows your chats; a new chat's name needs a letter-only part or a - or _"));
    }
    if is_reserved(name) {
        return Err(Error::usage(format!(
            "'{name}' cannot be a chat name (it is a command word)"
        )));
    }
    Ok(ChatRef::Named(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config::parse("c.json".into(), "{}").unwrap()
    }

    fn w(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn chats(word: &str) -> Option<String> {
        ["K7Q", "ABC", "work"]
            .iter()
            .find(|c| c.eq_ignore_ascii_case(word))
            .map(|c| (*c).to_owned())
    }

    fn resolve(entry: Entry, words: &[&str], literal: usize, flag: Option<&str>) -> Result<Words> {
        resolve_words(entry, &w(words), literal, flag, &with_default(), &chats)
    }

    /// A top-level call in a world with a default model (so words that name no model are a
    /// prompt for it).
    fn resolve_words_top(words: &[String], literal: usize, _: &Config) -> Result<Words> {
        resolve_words(Entry::Top, words, literal, None, &with_default(), &chats)
    }

    #[test]
    fn chat_forms() {
        let r = resolve(
            Entry::Top,
            &["sonnet", "chat", "k7q", "hi"],
            usize::MAX,
            None,
        )
        .unwrap();
        assert_eq!(
            (r.chat, r.prompt.as_str(), r.models.len()),
            (ChatRef::Existing("K7Q".into()), "hi", 1)
        );
        let r = resolve(Entry::Chat, &["K7Q", "gpt", "more"], usize::MAX, None).unwrap();
        assert_eq!(
            (r.chat, r.models[0].label.as_str()),
            (ChatRef::Existing("K7Q".into()), "gpt")
        );
        let r = resolve(Entry::Chat, &["fix", "this", "bug"], usize::MAX, None).unwrap();
        assert_eq!((r.chat, r.prompt.as_str()), (ChatRef::New, "fix this bug"));
        let r = resolve(Entry::Top, &["sonnet", "hi"], usize::MAX, Some("k7q")).unwrap();
        assert_eq!(r.chat, ChatRef::Existing("K7Q".into()));
        let r = resolve(Entry::Top, &["hi"], usize::MAX, Some("notes")).unwrap();
        assert_eq!(r.chat, ChatRef::Named("notes".into()));
        let r = resolve(Entry::Reply, &["opus", "more"], usize::MAX, None).unwrap();
        assert_eq!((r.chat, r.models.len()), (ChatRef::Last, 1));
        // Three-letter aliases beside IDs: `gpt` is a model, not a chat.
        let r = resolve(Entry::Chat, &["gpt", "hello"], usize::MAX, None).unwrap();
        assert_eq!((r.chat, r.models.len()), (ChatRef::New, 1));
    }

    #[test]
    fn chat_traps() {
        let e = resolve(Entry::Chat, &["Z9Z", "hello"], usize::MAX, None).unwrap_err();
        assert_eq!(e.exit_code(), 4);
        let r = resolve(Entry::Chat, &["Z9Z", "hello"], 0, None).unwrap();
        assert_eq!((r.chat, r.prompt.as_str()), (ChatRef::New, "Z9Z hello"));
        assert_eq!(
            resolve(Entry::Top, &["hi"], usize::MAX, Some("../../etc/passwd"))
                .unwrap_err()
                .exit_code(),
            2
        );
        assert_eq!(
            resolve(Entry::Top, &["hi"], usize::MAX, Some("Q1Q"))
                .unwrap_err()
                .exit_code(),
            4
        );
        assert!(resolve(Entry::Top, &["chat", "K7Q", "hi"], usize::MAX, Some("ABC")).is_err());
    }

    #[test]
    fn model_then_prompt() {
        let r =
            resolve_words_top(&w(&["sonnet", "explain", "recursion"]), usize::MAX, &cfg()).unwrap();
        assert_eq!(r.models.len(), 1);
        assert_eq!(r.prompt, "explain recursion");
    }

    #[test]
    fn no_model_is_prompt_for_default() {
        let r = resolve_words_top(&w(&["explain", "recursion"]), usize::MAX, &cfg()).unwrap();
        assert!(r.models.is_empty());
        assert_eq!(r.prompt, "explain recursion");
    }

    #[test]
    fn english_first_words_are_prompts() {
        for words in [
            &["code", "review", "this"][..],
            &["open", "the", "door"],
            &["fast", "way", "to", "sort"],
        ] {
            let r = resolve_words_top(&w(words), usize::MAX, &cfg()).unwrap();
            assert!(r.models.is_empty(), "{words:?}");
            assert_eq!(r.prompt, words.join(" "));
        }
        // Shaped like a call with a mistyped model: an error with a suggestion.
        assert_eq!(
            resolve_words_top(&w(&["sonet", "explain this"]), usize::MAX, &cfg())
                .unwrap_err()
                .exit_code(),
            4
        );
        assert_eq!(
            resolve_words_top(&w(&["codx", "hi"]), usize::MAX, &cfg())
                .unwrap_err()
                .exit_code(),
            4
        );
    }

    #[test]
    fn typo_is_unknown_alias() {
        let e = resolve_words_top(&w(&["sonet", "hi"]), usize::MAX, &cfg()).unwrap_err();
        assert_eq!(e.exit_code(), 4);
        assert!(e.hint_text().unwrap().contains("sonnet"));
    }

    #[test]
    fn modes_and_dashdash() {
        let r = resolve_words_top(&w(&["yolo", "json", "sonnet", "sonnet"]), 3, &cfg()).unwrap();
        assert!(r.modes.yolo && r.modes.json);
        assert_eq!(r.prompt, "sonnet");
        let r = resolve_words_top(&w(&["sonnet", "list", "files"]), usize::MAX, &cfg()).unwrap();
        assert_eq!(r.prompt, "list files");
    }

    /// N12: a mode word counts only before a model word, nothing, or one quoted prompt;
    /// elsewhere it is the first word of the prompt.
    #[test]
    fn mode_words_count_only_before_a_model() {
        for (words, prompt) in [
            (&["sonnet", "run", "the", "tests"][..], "run the tests"),
            (&["sonnet", "cmd", "line", "tools"], "cmd line tools"),
            (&["sonnet", "json", "is", "a", "format"], "json is a format"),
            (&["sonnet", "yolo", "means"], "yolo means"),
            (&["run", "the", "tests"], "run the tests"),
            (&["run", "the tests", "now"], "run the tests now"),
        ] {
            let r = resolve_words(
                Entry::Top,
                &w(words),
                usize::MAX,
                None,
                &with_default(),
                &chats,
            )
            .unwrap();
            assert_eq!(r.modes, Modes::default(), "{words:?}");
            assert_eq!(r.prompt, prompt, "{words:?}");
        }
        let r = resolve_words_top(
            &w(&["run", "yolo", "sonnet", "fix", "it"]),
            usize::MAX,
            &cfg(),
        )
        .unwrap();
        assert!(r.modes.run && r.modes.yolo && !r.modes.json);
        assert_eq!(r.prompt, "fix it");
        // Between two models, before the second.
        let r =
            resolve_words_top(&w(&["sonnet", "json", "gpt", "hi"]), usize::MAX, &cfg()).unwrap();
        assert!(r.modes.json);
        assert_eq!(r.models.len(), 2);
        // A quoted prompt, nothing (stdin), or `--` after the mode word.
        for (words, literal, prompt) in [
            (&["sonnet", "run", "the tests"][..], usize::MAX, "the tests"),
            (&["run", "the tests"], usize::MAX, "the tests"),
            (&["sonnet", "run"], usize::MAX, ""),
            (&["json", "yolo"], usize::MAX, ""),
            (&["run", "sonnet", "x"], 1, "sonnet x"),
        ] {
            let r = resolve_words(
                Entry::Top,
                &w(words),
                literal,
                None,
                &with_default(),
                &chats,
            )
            .unwrap();
            assert!(r.modes.run || r.modes.json, "{words:?}");
            assert_eq!(r.prompt, prompt, "{words:?}");
        }
    }

    fn with_default() -> Config {
        Config::parse("c.json".into(), r#"{"default_alias":"sonnet"}"#).unwrap()
    }

    /// D2: an alias shaped like a chat ID (`glm5`, `qwen3`) is a model after `chat` when no chat
    /// has that name; a chat of that name wins.
    #[test]
    fn id_shaped_aliases_after_chat() {
        let c = Config::parse(
            "c.json".into(),
            r#"{"aliases":{"qwen3":["ollama","qwen3"],"K7Q":["ollama","x"]}}"#,
        )
        .unwrap();
        for (entry, words) in [
            (Entry::Chat, &["glm5", "hi"][..]),
            (Entry::Chat, &["qwen3", "hi"]),
            (Entry::Top, &["chat", "glm4", "hi"]),
        ] {
            let r = resolve_words(entry, &w(words), usize::MAX, None, &c, &chats).unwrap();
            assert_eq!(r.chat, ChatRef::New, "{words:?}");
            assert_eq!(r.models.len(), 1, "{words:?}");
            assert_eq!(r.prompt, "hi");
        }
        let r = resolve_words(
            Entry::Chat,
            &w(&["k7q", "hi"]),
            usize::MAX,
            None,
            &c,
            &chats,
        )
        .unwrap();
        assert_eq!(r.chat, ChatRef::Existing("K7Q".into()));
        let e = resolve_words(
            Entry::Chat,
            &w(&["Z9Z", "hi"]),
            usize::MAX,
            None,
            &c,
            &chats,
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 4);
    }

    /// D1: a command word is never sent as a prompt.
    #[test]
    fn command_words_are_never_prompts() {
        for (entry, words) in [
            (Entry::Top, &["sonnet", "chat", "delete", "K9Z"][..]),
            (Entry::Top, &["chat", "list"]),
            (Entry::Chat, &["list"]),
            (Entry::Chat, &["export", "K7Q"]),
            (Entry::Top, &["list"]),
            (Entry::Top, &["serve"]),
            (Entry::Top, &["help"]),
            (Entry::Chat, &["help"]),
        ] {
            let e = resolve_words(entry, &w(words), usize::MAX, None, &with_default(), &chats)
                .unwrap_err();
            assert_eq!(e.exit_code(), 2, "{words:?}");
            assert!(e.to_string().contains("command word"), "{words:?}: {e}");
        }
        // After `--`, or as part of a prompt, they are text.
        let r =
            resolve_words(Entry::Chat, &w(&["list"]), 0, None, &with_default(), &chats).unwrap();
        assert_eq!(r.prompt, "list");
        let r = resolve_words(
            Entry::Top,
            &w(&["sonnet", "list", "files"]),
            usize::MAX,
            None,
            &with_default(),
            &chats,
        )
        .unwrap();
        assert_eq!(r.prompt, "list files");
    }

    /// Issue 9: with no default model, an unknown first word is named, with close aliases.
    #[test]
    fn unknown_first_word_without_default() {
        let e = resolve_words(
            Entry::Top,
            &w(&["nosuchmodelzz", "x"]),
            usize::MAX,
            None,
            &cfg(),
            &chats,
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string()
                .contains("'nosuchmodelzz' is not a known model"),
            "{e}"
        );
        let e = resolve_words(
            Entry::Top,
            &w(&["sonnnet", "explain", "this"]),
            usize::MAX,
            None,
            &cfg(),
            &chats,
        )
        .unwrap_err();
        assert!(e.hint_text().unwrap().contains("sonnet"), "{e}");
        // With a default, the same words are a prompt for it.
        let r = resolve_words(
            Entry::Top,
            &w(&["nosuchmodelzz", "x"]),
            usize::MAX,
            None,
            &with_default(),
            &chats,
        )
        .unwrap();
        assert_eq!(r.prompt, "nosuchmodelzz x");
        // A whole quoted prompt, or one after --, is not taken for a model.
        assert!(
            resolve_words(
                Entry::Top,
                &w(&["explain this"]),
                usize::MAX,
                None,
                &cfg(),
                &chats
            )
            .is_ok()
        );
        assert!(
            resolve_words(
                Entry::Top,
                &w(&["explain", "this"]),
                0,
                None,
                &cfg(),
                &chats
            )
            .is_ok()
        );
    }
}
