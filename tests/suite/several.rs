//! Several models at once: `ai sonnet gpt flash "prompt"`.

use crate::support::Env;

#[test]
fn answers_come_in_the_order_given_each_under_its_header() {
    let env = Env::new();
    // The first model is the slowest: its answer still comes first.
    env.script("claude", "\"$SLEEP\" 0.5\n");
    env.reply("claude", "from claude\n");
    env.reply("gemini", "from gemini\n");
    let out = env
        .ai()
        .args(["sonnet", "flash", "echo", "the question"])
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    let text = out.stdout;
    let claude = text.find("── sonnet · ").expect("sonnet header");
    let gemini = text.find("── flash · ").expect("flash header");
    let echo = text.find("── echo · ").expect("echo header");
    assert!(claude < gemini && gemini < echo, "{text}");
    assert!(text[claude..gemini].contains("from claude"), "{text}");
    assert!(text[gemini..echo].contains("from gemini"), "{text}");
    assert!(text[echo..].contains("the question"), "{text}");
    // Every model got the same prompt, and each answer is a chat of its own.
    assert_eq!(env.stdin_text("claude"), "the question");
    assert_eq!(env.stdin_text("gemini"), "the question");
    assert_eq!(env.chat_files().len(), 3);
    assert!(out.stderr.contains("[chats: sonnet "), "{}", out.stderr);
}

#[test]
fn one_failure_does_not_hide_the_others_and_sets_the_exit_code() {
    let env = Env::new();
    env.stderr("codex", "codex is unhappy\n");
    env.exit_code("codex", 7);
    env.reply("claude", "fine answer\n");
    let out = env.ai().args(["gpt", "sonnet", "q"]).run();
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    let text = out.stdout;
    assert!(text.contains("── gpt · failed after"), "{text}");
    assert!(
        text.contains("── sonnet · ") && text.contains("fine answer"),
        "{text}"
    );
    assert!(out.stderr.contains("codex is unhappy"), "{}", out.stderr);
}

#[test]
fn json_gives_an_array_in_order_with_errors() {
    let env = Env::new();
    env.exit_code("qwen", 1);
    env.stderr("qwen", "no quota\n");
    let out = env.ai().args(["--json", "echo", "qwen", "hi"]).run();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["alias"], "echo");
    assert!(items[0]["reply"].as_str().unwrap().contains("hi"));
    assert!(items[0]["chat"].is_string());
    assert_eq!(items[1]["alias"], "qwen");
    assert!(items[1]["reply"].is_null());
    assert!(items[1]["error"].as_str().unwrap().contains("no quota"));
}

#[test]
fn several_models_cannot_continue_one_chat_nor_run_commands() {
    let env = Env::new();
    let out = env.ai().args(["echo", "hello"]).run();
    let id = out
        .stderr
        .trim()
        .trim_start_matches("[chat: ")
        .trim_end_matches(']')
        .to_owned();
    let out = env.ai().args(["chat", &id, "echo", "sonnet", "more"]).run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("cannot continue one"), "{}", out.stderr);
    let out = env.ai().args(["cmd", "echo", "sonnet", "list files"]).run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(env.calls().is_empty(), "nothing was sent");
}

#[test]
fn no_chat_saves_nothing() {
    let env = Env::new();
    let out = env.ai().args(["--no-chat", "echo", "sonnet", "q"]).run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(env.chat_files().len(), 0);
}

/// Ctrl+C with several models running stops every backend, saves each partial answer, exits 130.
#[test]
fn interrupt_stops_every_backend() {
    use crate::support::{read_pid, wait_for_file, wait_gone};
    use std::process::Stdio;
    use std::time::Duration;

    let env = Env::new();
    for name in ["gemini", "qwen"] {
        let pid = env.path(&format!("{name}.pid"));
        env.script(
            name,
            &format!(
                "echo 'partial {name}'\necho $$ > '{p}.part'\nmv '{p}.part' '{p}'\n\"$SLEEP\" 30\n",
                p = pid.display()
            ),
        );
    }
    let mut child = env
        .ai()
        .args(["flash", "qwen", "x"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for name in ["gemini", "qwen"] {
        if !wait_for_file(&env.path(&format!("{name}.pid")), Duration::from_secs(30)) {
            child.kill();
            panic!("{name} never started");
        }
    }
    let pids: Vec<u32> = ["gemini", "qwen"]
        .iter()
        .map(|n| read_pid(&env.path(&format!("{n}.pid"))))
        .collect();
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait_status();
    assert_eq!(status.code(), Some(130));
    for pid in pids {
        assert!(
            wait_gone(pid, Duration::from_secs(10)),
            "backend {pid} still runs"
        );
    }
    // Both partial answers were kept, marked interrupted, each in its own chat.
    let interrupted = env
        .chats()
        .iter()
        .filter(|records| {
            records.iter().any(|r| {
                r["interrupted"] == true
                    && r["content"]
                        .as_str()
                        .is_some_and(|c| c.contains("partial "))
            })
        })
        .count();
    assert_eq!(interrupted, 2);
}

#[test]
fn several_models_stop_when_nobody_reads_their_answers() {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let env = Env::new();
    env.reply("claude", "first answer\n");
    // codex answers after a moment, gemini only after a long while.
    env.script("codex", "\"$SLEEP\" 1\n");
    env.script("gemini", "\"$SLEEP\" 30\n");
    let started = Instant::now();
    let mut p = env
        .ai()
        .args(["--no-chat", "sonnet", "codex", "flash", "question"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    p.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The reader is gone (like `| head -c 1`): the next answer cannot be written.
    let status = p.wait_status_within(Duration::from_secs(25));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "ai waited for a model nobody would read: {:?}",
        started.elapsed()
    );
    assert_eq!(status.code(), Some(0), "a closed stdout ends ai quietly");
}

#[test]
fn several_models_stop_as_soon_as_the_reader_goes_and_list_every_chat() {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let env = Env::new();
    env.reply("claude", "first answer\n");
    env.script("codex", "\"$SLEEP\" 30\n");
    env.script("gemini", "\"$SLEEP\" 30\n");
    let started = Instant::now();
    let mut p = env
        .ai()
        .args(["sonnet", "codex", "flash", "question"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = p.stderr.take().unwrap();
    let mut first = [0u8; 1];
    p.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The reader goes after the first answer, while the slow models still think.
    let status = p.wait_status_within(Duration::from_secs(25));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "ai waited for models nobody would read: {:?}",
        started.elapsed()
    );
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    err.read_to_string(&mut stderr).unwrap();
    let footer = stderr
        .lines()
        .find(|l| l.starts_with("[chats: "))
        .unwrap_or("");
    for model in ["sonnet", "codex", "flash"] {
        assert!(footer.contains(model), "{stderr}");
    }
}

/// R2-2: the chat a call writes to is process-wide (its `--json-stream` error line names it);
/// several models would race for it, so `--json-stream` takes one model.
#[test]
fn json_stream_takes_one_model_so_the_call_chat_is_never_shared() {
    let env = Env::new();
    let out = env.ai().args(["--json-stream", "echo", "qwen", "hi"]).run();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("--json-stream takes one model"),
        "{}",
        out.stderr
    );
    assert!(env.chat_ids().is_empty(), "{:?}", env.chat_ids());
}
