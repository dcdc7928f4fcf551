//! The window: what part of a long chat is sent, and what is said about the rest.

use serde_json::{Value, json};

use crate::support::{Env, RECORDING_CLAUDE, echo_reply, header, message, transcript};

/// A chat of `turns` exchanges, user `question N …` and assistant `answer N …`, each padded
/// with `pad` characters.
fn long_chat(env: &Env, id: &str, turns: usize, pad: usize, system: Option<&str>) {
    let mut recs: Vec<Value> = vec![header(id, json!({"model": "echo", "system": system}))];
    for t in 1..=turns {
        recs.push(message(
            "user",
            &format!("question {t} {}", "x".repeat(pad)),
            t as u64,
        ));
        recs.push(message(
            "assistant",
            &format!("answer {t} {}", "y".repeat(pad)),
            t as u64,
        ));
    }
    env.write_chat(id, &recs);
}

/// The number in a notice like "16 older messages of chat K7Q were not sent".
fn left_out(stderr: &str, id: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.contains("not sent"))
        .unwrap_or_else(|| panic!("no notice of messages left out:\n{stderr}"));
    let n: usize = line
        .trim_start_matches("ai: ")
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in: {line}"));
    let said = match n {
        1 => format!("ai: 1 older message of chat {id} was not sent ("),
        n => format!("ai: {n} older messages of chat {id} were not sent ("),
    };
    assert!(line.starts_with(&said), "{line}");
    n
}

/// The prompt part of `--dry-run` output for a CLI backend, as transcript messages.
fn dry_run_transcript(stdout: &str) -> Vec<(String, String)> {
    let (_, prompt) = stdout
        .split_once("--- prompt ---\n")
        .unwrap_or_else(|| panic!("no prompt in dry run:\n{stdout}"));
    transcript(prompt)
}

/// Check that `sent` (after any system message) is the newest `pairs` whole exchanges of a
/// `long_chat` of `turns`, then `prompt`. Returns the number of pairs.
fn newest_pairs(sent: &[(String, String)], turns: usize, prompt: &str) -> usize {
    let (last, history) = sent.split_last().expect("a prompt");
    assert_eq!((last.0.as_str(), last.1.as_str()), ("user", prompt));
    assert!(history.len() % 2 == 0, "whole pairs only: {history:?}");
    let pairs = history.len() / 2;
    for (k, pair) in history.chunks(2).enumerate() {
        let t = turns - pairs + 1 + k;
        assert_eq!(pair[0].0, "user");
        assert!(
            pair[0].1.starts_with(&format!("question {t} ")),
            "{:?}",
            pair[0]
        );
        assert_eq!(pair[1].0, "assistant");
        assert!(
            pair[1].1.starts_with(&format!("answer {t} ")),
            "{:?}",
            pair[1]
        );
    }
    pairs
}

#[test]
fn a_small_window_sends_the_system_prompt_the_newest_pairs_and_the_prompt() {
    let env = Env::empty();
    env.write_config(r#"{"default_alias":"echo","chat":{"window_tokens":200}}"#);
    env.fake("claude", RECORDING_CLAUDE);
    long_chat(&env, "K7Q", 10, 100, Some("Be brief."));
    let before = env.bytes("K7Q");

    let out = env
        .run(&["chat", "K7Q", "claude", "--dry-run", "q"])
        .success();
    assert!(
        out.stdout.contains("--print --model sonnet"),
        "{}",
        out.stdout
    );
    let sent = dry_run_transcript(&out.stdout);
    assert_eq!(sent[0], ("system".to_owned(), "Be brief.".to_owned()));
    let pairs = newest_pairs(&sent[1..], 10, "q");
    assert!(
        (1..10).contains(&pairs),
        "some but not all pairs fit: {pairs}"
    );
    assert_eq!(left_out(&out.stderr, "K7Q"), 20 - 2 * pairs);
    assert!(
        !env.state.join("claude.calls").exists(),
        "a dry run runs nothing"
    );
    assert_eq!(env.bytes("K7Q"), before, "a dry run writes nothing");

    // A real turn sends the same window and says so.
    let out = env.run(&["chat", "K7Q", "q"]).success();
    let mut want = echo_reply("q", 2 * pairs);
    want.insert_str(want.find('\n').unwrap(), ", system prompt of 9 characters");
    assert_eq!(out.stdout, want);
    assert_eq!(left_out(&out.stderr, "K7Q"), 20 - 2 * pairs);
    assert!(
        out.stderr.contains("window_tokens"),
        "how to send more: {}",
        out.stderr
    );
    // The whole history stays on disk.
    assert_eq!(env.messages("K7Q").len(), 22);
}

#[test]
fn a_long_chat_file_is_windowed_from_its_tail() {
    // Over 256 KiB: a turn reads the header and only as much of the tail as its window needs.
    let env = Env::echo();
    env.fake("claude", RECORDING_CLAUDE);
    long_chat(&env, "BIG1", 300, 500, None);
    assert!(env.bytes("BIG1").len() > 300 * 1024);

    let out = env
        .run(&["chat", "BIG1", "claude", "--dry-run", "last"])
        .success();
    let sent = dry_run_transcript(&out.stdout);
    let pairs = newest_pairs(&sent, 300, "last");
    assert!((1..300).contains(&pairs), "{pairs}");
    assert_eq!(left_out(&out.stderr, "BIG1"), 600 - 2 * pairs);

    // A torn tail is found and cut off there too.
    env.append_raw("BIG1", br#"{"type":"message","ro"#);
    let out = env.run(&["chat", "BIG1", "last"]).success();
    assert_eq!(out.stdout, echo_reply("last", 2 * pairs));
    assert_eq!(left_out(&out.stderr, "BIG1"), 600 - 2 * pairs);
    assert!(out.stderr.contains("cut short"), "{}", out.stderr);
    let msgs = env.messages("BIG1");
    assert_eq!(msgs.len(), 602);
    assert_eq!(
        (&msgs[600]["turn"], &msgs[601]["turn"]),
        (&301.into(), &301.into())
    );
    assert_eq!(msgs[600]["content"], "last");

    let out = env.run(&["chat", "list", "--json"]).success();
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v[0]["turns"], 301);
}
