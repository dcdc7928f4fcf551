//! Completion scripts and `--help`, checked against committed golden files so they never go
//! stale. To refresh them after changing the CLI: `AI_UPDATE_GOLDEN=1 cargo test`.

use std::path::{Path, PathBuf};

use crate::support::Env;

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Compare `actual` with the golden file `rel`, or rewrite it when `AI_UPDATE_GOLDEN=1`.
fn golden(rel: &str, actual: &str) {
    let path = repo_file(rel);
    if std::env::var_os("AI_UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!("{rel} is missing; create it with: AI_UPDATE_GOLDEN=1 cargo test")
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()))
            + 1;
        panic!(
            "{rel} is stale (first difference at line {line}); if the change is intended, \
             refresh it with: AI_UPDATE_GOLDEN=1 cargo test\n--- committed line {line}: {:?}\n+++ generated line {line}: {:?}",
            expected.lines().nth(line - 1),
            actual.lines().nth(line - 1)
        );
    }
}

const SHELLS: [(&str, &str); 5] = [
    ("bash", "completions/ai.bash"),
    ("zsh", "completions/_ai"),
    ("fish", "completions/ai.fish"),
    ("powershell", "completions/_ai.ps1"),
    ("elvish", "completions/ai.elv"),
];

#[test]
fn completion_scripts_match_the_committed_files() {
    let env = Env::bare();
    for (shell, file) in SHELLS {
        let out = env.ai().args(["completions", shell]).run();
        assert!(out.status.success(), "{shell}: {}", out.stderr);
        let script = out.stdout;
        if shell == "fish" {
            // fish lists no alias itself: it asks `ai __complete models` for the first word
            // (checked to list sonnet in `complete_models_lists_builtin_and_config_aliases`).
            assert!(
                script.contains(
                    "complete -c ai -n \"__fish_is_first_arg\" -f -a \"(ai __complete models 2>/dev/null)\""
                ),
                "fish completes aliases"
            );
        } else {
            assert!(script.contains("sonnet"), "{shell} completes aliases");
        }
        assert!(script.contains("init"), "{shell} completes commands");
        assert!(script.contains("dry-run"), "{shell} completes options");
        golden(file, &script);
    }
}

#[test]
fn completion_scripts_ask_ai_for_config_aliases() {
    let env = Env::bare();
    for shell in ["bash", "zsh", "fish"] {
        let script = env.ai().args(["completions", shell]).run().stdout;
        assert!(
            script.contains("ai __complete models"),
            "{shell} asks for the aliases of the config"
        );
    }
}

#[test]
fn completion_for_an_unknown_shell_is_a_usage_error() {
    let env = Env::bare();
    let out = env.ai().args(["completions", "tcsh"]).run();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(out.stdout, "");
}

#[test]
fn help_matches_the_committed_file() {
    let env = Env::bare();
    let out = env.ai().arg("--help").run();
    assert!(out.status.success(), "{}", out.stderr);
    golden("tests/golden/help.txt", &out.stdout);
}

#[test]
fn complete_models_lists_builtin_and_config_aliases() {
    let env = Env::bare();
    env.write_config(
        r#"{"aliases": {"l3": ["ollama", "llama3.2"], "zz-mine": ["claude", "opus"]}}"#,
    );
    let out = env.ai().args(["__complete", "models"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    let names: Vec<String> = out.stdout.lines().map(str::to_owned).collect();
    for want in ["sonnet", "codex-xh", "echo", "l3", "zz-mine"] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    assert!(!names.iter().any(|n| n.trim().is_empty()));

    // A broken config still completes the built-in aliases, quietly.
    env.write_config("{ not json");
    let out = env.ai().args(["__complete", "models"]).run();
    assert!(out.status.success());
    assert!(out.stdout.lines().any(|l| l == "sonnet"));
    assert_eq!(out.stderr, "");
}

/// The helper `ai __complete` is called by the scripts, never offered by them.
#[test]
fn scripts_never_offer_the_internal_helper() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = env.ai().args(["completions", shell]).run();
        // An empty or failed script would offer nothing at all: check it is a real one.
        assert!(out.status.success(), "{shell}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{shell}");
        let script = out.stdout;
        assert!(
            script.contains("chat") && script.contains("completions"),
            "{shell}: the script offers the subcommands: {script:?}"
        );
        let offered = script
            .lines()
            .filter(|l| l.contains("__complete") && !l.contains("ai __complete"))
            .collect::<Vec<_>>();
        assert!(offered.is_empty(), "{shell}: {offered:?}");
        if matches!(shell, "bash" | "zsh" | "fish") {
            // These ask `ai __complete models` for the model words, so the helper is there,
            // and only ever as a call.
            assert!(script.contains("ai __complete"), "{shell}: {script:?}");
        }
    }
}
