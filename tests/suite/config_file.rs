//! config.json as a file: written through a symlink, read-modify-write under a lock, type
//! errors that name the key, and unreadable files that are config errors (exit 3).

use std::fs;
use std::time::{Duration, Instant};

use crate::support::{Env, Out};

fn run(env: &Env, args: &[&str]) -> Out {
    env.ai().args(args).run()
}

#[test]
fn a_symlinked_config_is_written_through_the_link() {
    let env = Env::new();
    let real = env.root.join("dotfiles");
    fs::create_dir_all(&real).unwrap();
    fs::write(real.join("c.json"), r#"{"keep":1}"#).unwrap();
    // A relative link, as stow makes them.
    std::os::unix::fs::symlink("../dotfiles/c.json", env.config_path()).unwrap();
    let out = run(&env, &["default", "echo"]);
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        fs::symlink_metadata(env.config_path())
            .unwrap()
            .is_symlink(),
        "the link stays a link"
    );
    let target: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(real.join("c.json")).unwrap()).unwrap();
    assert_eq!(target["keep"], 1);
    assert_eq!(target["default_alias"], "echo");
    let leftovers: Vec<_> = fs::read_dir(&real).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temp file left beside the target");
}

#[test]
fn init_keeps_a_default_set_while_it_was_running() {
    let env = Env::new();
    let gate = env.root.join("gate");
    // `ollama list` waits (up to a minute) until the test opens the gate.
    env.script(
        "ollama",
        &format!(
            "i=0; while [ ! -e '{}' ] && [ $i -lt 1200 ]; do \"$SLEEP\" 0.05; i=$((i+1)); done\n\
             printf 'NAME ID SIZE MODIFIED\\nllama3.2:latest a 2 GB now\\n'; exit 0\n",
            gate.display()
        ),
    );
    let init = env.ai().arg("init");
    let started = Instant::now();
    let child = std::thread::spawn(move || init.run());
    // Let init read the config and reach `ollama list`.
    while !env.calls().iter().any(|c| c == "ollama") {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "init never ran ollama"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = run(&env, &["default", "echo"]);
    assert!(out.status.success(), "{}", out.stderr);
    fs::write(&gate, "").unwrap();
    let init = child.join().unwrap();
    assert!(init.status.success(), "{}", init.stderr);
    let config = env.config();
    assert_eq!(config["default_alias"], "echo", "{config}");
    assert!(config["aliases"].is_object(), "{config}");
}
