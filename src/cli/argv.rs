//! The argument pre-pass, before clap sees the arguments: prompt text that starts with `-` is
//! hidden from clap, and options written before a command word are moved after it. Which options
//! take a value is read from the clap definitions ([`super::tables`]), never listed by hand.

use std::ffi::OsString;

use crate::reserved::option_span;

/// Marks a hidden prompt argument (see [`protect_prompts`]).
const HIDDEN: &str = "\u{1}ai-prompt-";

/// An argument that starts with `-` but holds whitespace ("-v means verbose?") is prompt text,
/// never an option cluster. Such arguments are hidden from clap behind placeholders, which
/// [`restore`] turns back into the text. `--opt=value` forms and option values are left alone.
pub(crate) fn protect_prompts(args: Vec<OsString>) -> (Vec<OsString>, Vec<String>) {
    let mut hidden = Vec::new();
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    let mut literal = false;
    for (i, arg) in args.into_iter().enumerate() {
        let text = arg.to_string_lossy().into_owned();
        let option_form = text.starts_with("--")
            && text
                .split_once('=')
                .is_some_and(|(name, _)| !name.chars().any(char::is_whitespace));
        let protect = i > 0
            && !literal
            && !value_next
            && text.starts_with('-')
            && text.chars().any(char::is_whitespace)
            && !option_form;
        value_next = !literal && !protect && text.starts_with('-') && option_span(&text) == 2;
        literal |= text == "--";
        if protect {
            out.push(OsString::from(format!("{HIDDEN}{}", hidden.len())));
            hidden.push(text);
        } else {
            out.push(arg);
        }
    }
    (out, hidden)
}

/// Put hidden prompt arguments back.
pub(crate) fn restore(words: &mut [String], hidden: &[String]) {
    for w in words.iter_mut() {
        if let Some(text) = w
            .strip_prefix(HIDDEN)
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|i| hidden.get(i))
        {
            *w = text.clone();
        }
    }
}

/// Where `--` ends option parsing in the raw arguments: the number of words after it.
pub(crate) fn words_after_dashdash(args: &[OsString]) -> usize {
    match args.iter().skip(1).position(|a| a == "--") {
        Some(pos) => args.len() - 2 - pos,
        None => 0,
    }
}

/// Options written before a command word apply to that command: `ai -q chat list` is
/// `ai chat list -q`, and `ai --json list` is `ai list --json`. Without this, clap (which stops
/// matching command words once it has seen an option at the top level, so that
/// `ai sonnet list files` stays a prompt) would take the command word for prompt text. The
/// options are moved, at each level, to just after the command word they precede; one the
/// command does not take is then clap's usage error, naming it. Arguments after `--`, and
/// everything from the first word that is not a command word, stay where they are.
pub(crate) fn hoist_options(cmd: &clap::Command, args: Vec<OsString>) -> Vec<OsString> {
    let Some((program, rest)) = args.split_first() else {
        return args;
    };
    let mut out = vec![program.clone()];
    out.extend(hoist(cmd, Vec::new(), rest));
    out
}

fn hoist(cmd: &clap::Command, mut before: Vec<OsString>, args: &[OsString]) -> Vec<OsString> {
    let mut i = 0;
    while i < args.len() {
        let text = args[i].to_string_lossy();
        if text == "--" {
            break;
        }
        if text.len() > 1 && text.starts_with('-') {
            let end = (i + option_span(&text)).min(args.len());
            before.extend_from_slice(&args[i..end]);
            i = end;
            continue;
        }
        if text == "help" && cmd.has_subcommands() {
            // clap's own `help` command (added when clap builds the command, so not found
            // below): it prints help whatever the options were, and takes no options itself.
            return args[i..].to_vec();
        }
        if let Some(sub) = cmd.find_subcommand(text.as_ref()) {
            let mut out = vec![args[i].clone()];
            out.extend(hoist(sub, before, &args[i + 1..]));
            return out;
        }
        break;
    }
    before.extend_from_slice(&args[i..]);
    before
}

#[cfg(test)]
mod tests {
    use super::super::Cli;
    use super::*;
    use clap::{CommandFactory, Parser};

    fn os(list: &[&str]) -> Vec<OsString> {
        list.iter().map(Into::into).collect()
    }

    #[test]
    fn hyphen_prompts_are_protected() {
        let a = os(&[
            "ai",
            "sonnet",
            "-v means verbose?",
            "-q",
            "--system",
            "-be terse now",
            "--chat=a b",
            "--",
            "-x y",
        ]);
        let (out, hidden) = protect_prompts(a);
        assert_eq!(hidden, vec!["-v means verbose?"]);
        assert_eq!(out[3], "-q");
        assert_eq!(out[5], "-be terse now");
        assert_eq!(out[8], "-x y");
        let cli = Cli::try_parse_from(&out).unwrap();
        let mut words = cli.words.clone();
        restore(&mut words, &hidden);
        assert_eq!(words, vec!["sonnet", "-v means verbose?", "-x y"]);
        assert_eq!(cli.call.system.as_deref(), Some("-be terse now"));
    }

    #[test]
    fn values_of_every_valued_option_are_not_protected() {
        // --keep, --format, --host and --token were missing from the hand-written table.
        for opt in [
            "--keep",
            "--format",
            "--host",
            "--token",
            "--older-than",
            "-F",
        ] {
            let (out, hidden) = protect_prompts(os(&["ai", opt, "-a b"]));
            assert!(hidden.is_empty(), "{opt}");
            assert_eq!(out[2], "-a b", "{opt}");
        }
    }

    #[test]
    fn dashdash_position() {
        assert_eq!(
            words_after_dashdash(&os(&["ai", "sonnet", "--", "-x", "--"])),
            2
        );
        assert_eq!(words_after_dashdash(&os(&["ai", "sonnet", "x"])), 0);
    }

    #[test]
    fn options_before_a_command_word_move_after_it() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["ai", "-q", "chat", "list"], &["ai", "chat", "list", "-q"]),
            (&["ai", "--json", "list"], &["ai", "list", "--json"]),
            (
                &["ai", "-q", "chat", "delete", "K7Q"],
                &["ai", "chat", "delete", "-q", "K7Q"],
            ),
            (
                &[
                    "ai",
                    "--timeout",
                    "5",
                    "chat",
                    "--no-wait",
                    "compact",
                    "K7Q",
                ],
                &[
                    "ai",
                    "chat",
                    "compact",
                    "--timeout",
                    "5",
                    "--no-wait",
                    "K7Q",
                ],
            ),
            (
                &["ai", "--host", "0.0.0.0", "serve", "9"],
                &["ai", "serve", "--host", "0.0.0.0", "9"],
            ),
            (&["ai", "-q", "reply", "hi"], &["ai", "reply", "-q", "hi"]),
            (
                &["ai", "-qF", "a", "chat", "K7Q"],
                &["ai", "chat", "-qF", "a", "K7Q"],
            ),
            // Not a command word: nothing moves.
            (
                &["ai", "-q", "sonnet", "list"],
                &["ai", "-q", "sonnet", "list"],
            ),
            (
                &["ai", "--chat", "list", "hi"],
                &["ai", "--chat", "list", "hi"],
            ),
            (&["ai", "-F", "chat", "x"], &["ai", "-F", "chat", "x"]),
            (&["ai", "-q", "--", "list"], &["ai", "-q", "--", "list"]),
            (
                &["ai", "sonnet", "-q", "chat", "list"],
                &["ai", "sonnet", "-q", "chat", "list"],
            ),
            (
                &["ai", "chat", "K7Q", "-q", "list"],
                &["ai", "chat", "K7Q", "-q", "list"],
            ),
            (&["ai"], &["ai"]),
            (&["ai", "-q", "help", "chat"], &["ai", "help", "chat"]),
            (&["ai", "chat", "--json", "help"], &["ai", "chat", "help"]),
        ];
        for (given, want) in cases {
            assert_eq!(
                hoist_options(&Cli::command(), os(given)),
                os(want),
                "{given:?}"
            );
        }
        let cli = Cli::try_parse_from(hoist_options(
            &Cli::command(),
            os(&["ai", "-q", "chat", "list"]),
        ))
        .unwrap();
        assert!(cli.call.quiet);
        assert!(matches!(
            cli.command,
            Some(super::super::Command::Chat {
                action: Some(super::super::ChatAction::List { .. }),
                ..
            })
        ));
    }
}
