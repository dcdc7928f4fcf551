//! Saved prompts: `ai prompt add|list|show|edit|remove`, `-p NAME` with `-v` variables and
//! defaults, standard input as `{input}`, a prompt's system prompt and model, fabric's pattern
//! folders and plain prompt folders through config `prompts.dirs`.

use std::fs;

use crate::support::Env;

/// `--dry-run` with the echo backend prints exactly what a model would get.
fn dry(env: &Env, args: &[&str], stdin: &str) -> String {
    let out = env
        .ai()
        .args(args)
        .arg("--dry-run")
        .write_stdin(stdin)
        .run()
        .success();
    out.stdout
}

/// The text after the last `[[user …]]` marker of a dry run, and after `[[system …]]`.
fn parts(dry: &str) -> (Option<String>, String) {
    let section = |tag: &str| -> Option<String> {
        let at = dry.rfind(&format!("[[{tag} "))?;
        let rest = &dry[at..];
        let body = &rest[rest.find('\n')? + 1..];
        let end = body.find("\n\n[[").unwrap_or(body.len());
        Some(body[..end].trim_end().to_owned())
    };
    // A lone prompt is printed as it is, after the `prompt (N bytes):` line.
    let plain = || {
        let at = dry.find(" bytes):\n").expect("a dry run");
        dry[at + " bytes):\n".len()..].trim_end().to_owned()
    };
    (section("system"), section("user").unwrap_or_else(plain))
}

#[test]
fn variables_defaults_and_input() {
    let env = Env::echo();
    env.ai()
        .args([
            "prompt",
            "add",
            "tr",
            "Translate to {lang=German} in a {tone} tone: {input}",
        ])
        .run()
        .success();
    let file = env.home.join("prompts/tr.md");
    assert!(file.is_file());
    // Defaults fill what -v does not give; the words are the input.
    let (_, user) = parts(&dry(
        &env,
        &["-p", "tr", "-v", "tone=dry", "good morning"],
        "",
    ));
    assert_eq!(user, "Translate to German in a dry tone: good morning");
    // -v overrides a default; --var is the long form.
    let (_, user) = parts(&dry(
        &env,
        &[
            "-p",
            "tr",
            "-v",
            "lang=English",
            "--var",
            "tone=warm",
            "guten Tag",
        ],
        "",
    ));
    assert_eq!(user, "Translate to English in a warm tone: guten Tag");
    // A real call (no dry run) sends the filled prompt and saves it in the chat.
    let out = env
        .ai()
        .args(["echo", "--prompt", "tr", "-v", "tone=dry", "hello"])
        .run()
        .success();
    assert!(
        out.stdout
            .contains("Translate to German in a dry tone: hello"),
        "{}",
        out.stdout
    );
    let msgs = env.messages(&out.chat_id());
    assert_eq!(
        msgs[0]["content"],
        "Translate to German in a dry tone: hello"
    );
}

#[test]
fn missing_and_unknown_variables_are_named() {
    let env = Env::echo();
    env.ai()
        .args(["prompt", "add", "tr", "To {lang=German}, {tone}: {input}"])
        .run()
        .success();
    let out = env.ai().args(["-p", "tr", "hi"]).run().code(2);
    assert!(out.error().contains("needs 'tone'"), "{}", out.stderr);
    assert!(
        out.error().contains("it has: lang=German, tone"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("hint: give it: ai -p tr -v tone=…"),
        "{}",
        out.stderr
    );
    let out = env
        .ai()
        .args(["-p", "tr", "-v", "tone=x", "-v", "colour=red", "hi"])
        .run()
        .code(2);
    assert!(
        out.error().contains("no variable 'colour'"),
        "{}",
        out.stderr
    );
    assert!(out.error().contains("lang=German, tone"), "{}", out.stderr);
    // {input} with no input at all.
    let out = env
        .ai()
        .args(["-p", "tr", "-v", "tone=x"])
        .write_stdin("")
        .run()
        .code(2);
    assert!(out.error().contains("needs input"), "{}", out.stderr);
    // -v without -p is clap's usage error; an unknown prompt is "not found".
    env.ai().args(["-v", "a=b", "hi"]).run().code(2);
    let out = env.ai().args(["-p", "nosuch", "hi"]).run().code(4);
    assert!(
        out.error().contains("no saved prompt 'nosuch'"),
        "{}",
        out.stderr
    );
    // Nothing was saved by a refused call.
    assert!(env.chat_ids().is_empty());
}

#[test]
fn stdin_and_words_fill_input_together() {
    let env = Env::echo();
    env.ai()
        .args(["prompt", "add", "sum", "Summarize:\n{input}\nEnd."])
        .run()
        .success();
    // Standard input alone.
    let (_, user) = parts(&dry(&env, &["-p", "sum"], "line one\nline two\n"));
    assert_eq!(user, "Summarize:\nline one\nline two\nEnd.");
    // Standard input, then the words, a blank line between (as in any call).
    let (_, user) = parts(&dry(&env, &["-p", "sum", "focus on two"], "line one\n"));
    assert_eq!(user, "Summarize:\nline one\n\nfocus on two\nEnd.");
    // A template without {input}: the input follows it after a blank line.
    env.ai()
        .args(["prompt", "add", "plain", "Be brief."])
        .run()
        .success();
    let (_, user) = parts(&dry(&env, &["-p", "plain"], "the text\n"));
    assert_eq!(user, "Be brief.\n\nthe text");
}

#[test]
fn system_prompt_and_model_of_a_prompt() {
    let env = Env::new();
    env.write_config(r#"{"default_alias":"sonnet"}"#);
    let file = "---\ndescription: Fix grammar\nmodel: echo\nsystem: |\n  You fix grammar in {lang=English}.\n  Reply with the text only.\n---\nFix: {input}\n";
    env.ai()
        .args(["prompt", "add", "fix"])
        .write_stdin(file)
        .run()
        .success();
    assert_eq!(
        fs::read_to_string(env.home.join("prompts/fix.md")).unwrap(),
        file
    );
    // The prompt's model (echo) is used: no CLI runs.
    let out = env.ai().args(["-p", "fix", "teh cat"]).run().success();
    assert!(out.stdout.starts_with("echo: model echo"), "{}", out.stdout);
    assert!(env.calls().is_empty(), "{:?}", env.calls());
    let id = out.chat_id();
    assert_eq!(
        env.header(&id)["system"],
        "You fix grammar in English.\nReply with the text only."
    );
    // A model named on the command line wins; --system wins over the prompt's.
    let out = env
        .ai()
        .args([
            "sonnet",
            "-p",
            "fix",
            "--system",
            "mine",
            "-v",
            "lang=German",
            "x",
        ])
        .run()
        .success();
    assert_eq!(env.calls(), vec!["claude"]);
    assert_eq!(env.header(&out.chat_id())["system"], "mine");
    let (system, _) = parts(&dry(
        &env,
        &["echo", "-p", "fix", "-v", "lang=German", "x"],
        "",
    ));
    assert_eq!(
        system.as_deref(),
        Some("You fix grammar in German.\nReply with the text only.")
    );
}

#[test]
fn fabric_patterns_and_plain_folders() {
    let env = Env::echo();
    let fabric = env.root.join("fabric/patterns");
    fs::create_dir_all(fabric.join("extract_wisdom")).unwrap();
    fs::write(
        fabric.join("extract_wisdom/system.md"),
        "# IDENTITY\nYou extract wisdom for {{audience}}.\n\n# INPUT\n\nINPUT:\n",
    )
    .unwrap();
    fs::create_dir_all(fabric.join("with_user")).unwrap();
    fs::write(fabric.join("with_user/system.md"), "You rate things.\n").unwrap();
    fs::write(fabric.join("with_user/user.md"), "Rate this: {{input}}\n").unwrap();
    let plain = env.root.join("plain");
    fs::create_dir_all(&plain).unwrap();
    fs::write(plain.join("haiku.txt"), "Write a haiku about {input}").unwrap();
    fs::write(
        plain.join("extract_wisdom.md"),
        "shadowed by the first folder",
    )
    .unwrap();
    env.write_config(&format!(
        r#"{{"default_alias":"echo","prompts":{{"dirs":["{}","{}"]}}}}"#,
        fabric.display(),
        plain.display()
    ));
    let (system, user) = parts(&dry(
        &env,
        &["-p", "extract_wisdom", "-v", "audience=engineers"],
        "an article\n",
    ));
    assert_eq!(
        system.as_deref(),
        Some("# IDENTITY\nYou extract wisdom for engineers.\n\n# INPUT\n\nINPUT:")
    );
    assert_eq!(user, "an article");
    let (system, user) = parts(&dry(&env, &["-p", "with_user"], "a chair\n"));
    assert_eq!(system.as_deref(), Some("You rate things."));
    assert_eq!(user, "Rate this: a chair");
    let (_, user) = parts(&dry(&env, &["-p", "haiku", "autumn"], ""));
    assert_eq!(user, "Write a haiku about autumn");
    // list --json: every prompt once, the first folder winning.
    let list = env
        .ai()
        .args(["prompt", "list", "--json"])
        .run()
        .success()
        .json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["extract_wisdom", "with_user", "haiku"]);
    assert_eq!(list[0]["source"], "dirs");
    assert_eq!(list[0]["variables"][0]["name"], "audience");
    // A folder's prompt is not removed or edited from here; show | add copies it.
    let out = env.ai().args(["prompt", "remove", "haiku"]).run().code(2);
    assert!(out.stderr.contains("prompts.dirs"), "{}", out.stderr);
    assert!(plain.join("haiku.txt").is_file());
    let shown = env
        .ai()
        .args(["prompt", "show", "with_user"])
        .run()
        .success();
    env.ai()
        .args(["prompt", "add", "rate"])
        .write_stdin(shown.stdout)
        .run()
        .success();
    let (system, user) = parts(&dry(&env, &["-p", "rate"], "a lamp\n"));
    assert_eq!(system.as_deref(), Some("You rate things."));
    assert_eq!(user, "Rate this: a lamp");
}

#[test]
fn manage_prompts() {
    let env = Env::echo();
    let out = env.ai().args(["prompt", "list"]).run().success();
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("no saved prompts yet"),
        "{}",
        out.stderr
    );
    env.ai()
        .args([
            "prompt",
            "add",
            "a",
            "one {input}",
            "--description",
            "first",
        ])
        .run()
        .success();
    // Adding again needs --force.
    let out = env.ai().args(["prompt", "add", "a", "two"]).run().code(2);
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    env.ai()
        .args(["prompt", "add", "a", "two {input}", "--force"])
        .run()
        .success();
    let out = env.ai().args(["prompt", "list"]).run().success();
    assert!(out.stdout.starts_with("NAME"), "{}", out.stdout);
    assert!(out.stdout.contains("a "), "{}", out.stdout);
    let shown = env.ai().args(["prompt", "show", "a"]).run().success();
    assert_eq!(shown.stdout, "two {input}\n");
    // Edit with $EDITOR: a script that rewrites the file.
    let editor = env.root.join("editor.sh");
    fs::write(
        &editor,
        "#!/bin/sh\nprintf -- '---\\nmodel: echo\\n---\\nthree {input}\\n' > \"$1\"\n",
    )
    .unwrap();
    fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.ai()
        .args(["prompt", "edit", "a"])
        .env("EDITOR", &editor)
        .env("VISUAL", "")
        .run()
        .success();
    let (_, user) = parts(&dry(&env, &["-p", "a", "x"], ""));
    assert_eq!(user, "three x");
    // An edit that breaks the file: said at once, the file kept as written.
    fs::write(
        &editor,
        "#!/bin/sh\nprintf -- '---\\nmodle: echo\\n---\\nx\\n' > \"$1\"\n",
    )
    .unwrap();
    let out = env
        .ai()
        .args(["prompt", "edit", "a"])
        .env("EDITOR", &editor)
        .run()
        .code(2);
    assert!(
        out.stderr.contains("unknown front matter key 'modle'"),
        "{}",
        out.stderr
    );
    env.ai().args(["prompt", "remove", "a"]).run().success();
    assert!(!env.home.join("prompts/a.md").exists());
    env.ai().args(["prompt", "remove", "a"]).run().code(4);
    env.ai().args(["prompt", "edit", "a"]).run().code(4);
}

#[test]
fn names_are_never_paths() {
    let env = Env::echo();
    for bad in ["../evil", "a/b", ".x", "x.md", "a b"] {
        let out = env.ai().args(["prompt", "add", bad, "t"]).run().code(2);
        assert!(
            out.error().contains("is not a prompt name"),
            "{bad}: {}",
            out.stderr
        );
        let out = env.ai().args(["-p", bad, "hi"]).run().code(2);
        assert!(
            out.error().contains("is not a prompt name"),
            "{bad}: {}",
            out.stderr
        );
    }
    assert!(!env.root.join("evil.md").exists());
    assert!(!env.home.join("evil.md").exists());
    // A model the prompt names must exist.
    let out = env
        .ai()
        .args(["prompt", "add", "m", "t", "--model", "nosuchmodel"])
        .run()
        .code(4);
    assert!(!env.home.join("prompts/m.md").exists(), "{}", out.stderr);
}

#[test]
fn completion_offers_prompt_names() {
    let env = Env::echo();
    env.ai()
        .args(["prompt", "add", "summarize", "S: {input}"])
        .run()
        .success();
    env.ai()
        .args(["prompt", "add", "fix-grammar", "F: {input}"])
        .run()
        .success();
    let out = env.ai().args(["__complete", "prompts"]).run().success();
    assert_eq!(out.stdout, "fix-grammar\nsummarize\n");
    for shell in ["bash", "zsh", "fish"] {
        let script = env.ai().args(["completions", shell]).run().success();
        assert!(
            script.stdout.contains("__complete prompts"),
            "{shell} does not complete saved prompts"
        );
    }
}

#[test]
fn calls_that_cannot_take_a_saved_prompt_say_so() {
    let env = Env::echo();
    env.ai()
        .args(["prompt", "add", "s", "S: {input}"])
        .run()
        .success();
    let out = env.ai().args(["-i", "-p", "s"]).run().code(2);
    assert!(
        out.error().contains("-i cannot be used with --prompt"),
        "{}",
        out.stderr
    );
    let id = env.ai().args(["echo", "hi"]).run().success().chat_id();
    let out = env
        .ai()
        .args(["chat", "retry", &id, "-p", "s"])
        .run()
        .code(2);
    assert!(
        out.error()
            .contains("-p and --schema cannot be used with `chat retry`"),
        "{}",
        out.stderr
    );
    let out = env
        .ai()
        .args(["chat", "retry", &id, "--schema", "a int"])
        .run()
        .code(2);
    assert!(
        out.error().contains("cannot be used with `chat retry`"),
        "{}",
        out.stderr
    );
}

/// A template over 1 MiB on standard input was cut at the limit, saved (exit 0) and then
/// skipped by every list as too large: it is refused whole, and nothing is written.
#[test]
fn a_prompt_too_large_on_stdin_is_refused_and_nothing_is_saved() {
    let env = Env::new();
    let big = format!("{} {{input}}\n", "x".repeat(2 * 1024 * 1024));
    let out = env
        .ai()
        .args(["prompt", "add", "big"])
        .write_stdin(big.as_str())
        .run()
        .code(2);
    assert!(out.stderr.contains("larger than 1 MiB"), "{}", out.stderr);
    assert!(!env.home.join("prompts/big.md").exists());
    let out = env
        .ai()
        .args(["prompt", "add", "latin1"])
        .write_stdin(&b"Summarize \xe9: {input}\n"[..])
        .run()
        .code(2);
    assert!(out.stderr.contains("not UTF-8"), "{}", out.stderr);
    assert!(!env.home.join("prompts/latin1.md").exists());
}

/// A link in a `prompts.dirs` folder that leaves it is not followed (as a knowledge base does
/// not): `-p` says so and reads nothing; a link inside the folder, and a folder that is
/// itself a link, are fine.
#[test]
fn a_link_out_of_a_prompts_dir_is_not_followed() {
    use std::os::unix::fs::symlink;
    let env = Env::echo();
    let secret = env.root.join("elsewhere");
    fs::create_dir_all(secret.join("pattern")).unwrap();
    fs::write(secret.join("secret.md"), "SECRET {input}").unwrap();
    fs::write(secret.join("pattern/system.md"), "SECRET SYSTEM").unwrap();
    let real = env.root.join("real-prompts");
    fs::create_dir_all(&real).unwrap();
    fs::write(real.join("ok.md"), "Fine: {input}").unwrap();
    symlink(real.join("ok.md"), real.join("alias.md")).unwrap();
    symlink(secret.join("secret.md"), real.join("leak.md")).unwrap();
    symlink(secret.join("pattern"), real.join("leaky_pattern")).unwrap();
    // The configured folder is itself a link to the real one.
    let dir = env.root.join("prompts-link");
    symlink(&real, &dir).unwrap();
    env.write_config(&format!(
        r#"{{"default_alias":"echo","prompts":{{"dirs":["{}"]}}}}"#,
        dir.display()
    ));
    let (_, user) = parts(&dry(&env, &["-p", "alias", "x"], ""));
    assert_eq!(user, "Fine: x");
    for name in ["leak", "leaky_pattern"] {
        let out = env.ai().args(["-p", name, "x", "--dry-run"]).run().code(2);
        assert!(
            out.error()
                .contains("ai does not follow links out of a prompts.dirs folder"),
            "{name}: {}",
            out.stderr
        );
        assert!(!out.stdout.contains("SECRET"), "{}", out.stdout);
    }
    let list = env.ai().args(["prompt", "list"]).run();
    assert!(!list.stdout.contains("SECRET"), "{}", list.stdout);
}
