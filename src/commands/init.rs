//! `ai init`: detect the backend CLIs and local Ollama models, write the config.

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::alias::{self, Cli};
use crate::backend::cli::{Invocation, find_program};
use crate::backend::{End, process};
use crate::config::{Config, Home};
use crate::error::Result;
use crate::output::{self, Sink};

pub(crate) fn run() -> Result<()> {
    let home = Home::locate()?;
    home.ensure()?;
    let mut config = Config::load(&home)?;
    let mut report = String::new();

    let installed: Vec<Cli> = Cli::ALL
        .into_iter()
        .filter(|c| find_program(c.name()).is_some())
        .collect();
    let names: Vec<&str> = installed.iter().map(|c| c.name()).collect();
    if names.is_empty() {
        report.push_str("backend CLIs: none found on PATH (`ai echo \"hi\"` works without any)\n");
    } else {
        report.push_str(&format!("backend CLIs: {}\n", names.join(", ")));
    }
    let missing: Vec<&str> = Cli::ALL
        .iter()
        .filter(|c| !installed.contains(c))
        .map(|c| c.name())
        .collect();
    if !missing.is_empty() {
        report.push_str(&format!("not found: {}\n", missing.join(", ")));
    }

    // Aliases of the config file, kept as they are; generated ones are added beside them.
    let mut aliases: Map<String, Value> = match config.key("aliases") {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    let mut models = Vec::new();
    if installed.contains(&Cli::Ollama) {
        match ollama_models() {
            Ok(list) => {
                let mut added = Vec::new();
                for model in list {
                    let name = alias_for(&model);
                    models.push(model.clone());
                    let taken = aliases.contains_key(&name)
                        || alias::BUILTIN.iter().any(|(a, _, _)| *a == name)
                        || alias::RESERVED.contains(&name.as_str());
                    if !taken && !name.is_empty() {
                        aliases.insert(name.clone(), json!(["ollama", model]));
                        added.push(format!("{name} → {model}"));
                    }
                }
                if added.is_empty() {
                    report.push_str(&format!(
                        "ollama models: {} (no new aliases)\n",
                        models.len()
                    ));
                } else {
                    report.push_str(&format!("ollama aliases added: {}\n", added.join(", ")));
                }
            }
            Err(why) => report.push_str(&format!("ollama models: not listed ({why})\n")),
        }
    }

    config.set_key("installed_tools", Some(json!(names)));
    if !aliases.is_empty() {
        config.set_key("aliases", Some(Value::Object(aliases)));
    }
    if !models.is_empty() {
        let mut m = match config.key("models") {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        m.insert("ollama".into(), json!(models));
        config.set_key("models", Some(Value::Object(m)));
    }
    config.save()?;
    report.push_str(&format!("wrote {}\n", config.path.display()));
    if config.default_alias.is_none()
        && let Some(first) = installed.first()
    {
        report.push_str(&format!(
            "next: ai default {}   (then: ai \"your question\")\n",
            first.name()
        ));
    }
    output::print_stdout(&report)
}

/// A short alias for an Ollama model: `llama3.2:latest` → `llama3.2`, `qwen2.5:7b` → `qwen2.5-7b`.
pub(crate) fn alias_for(model: &str) -> String {
    let base = model.strip_suffix(":latest").unwrap_or(model);
    let base = base.rsplit('/').next().unwrap_or(base);
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// Run `ollama list` (10 s at most) and take the NAME column.
fn ollama_models() -> std::result::Result<Vec<String>, String> {
    struct Quiet;
    impl Sink for Quiet {
        fn chunk(&mut self, _: &[u8]) -> Result<()> {
            Ok(())
        }
    }
    let inv = Invocation {
        name: "ollama".into(),
        program: "ollama".into(),
        args: vec!["list".into()],
        stdin: None,
        hold_stdout: false,
        cli: Some(Cli::Ollama),
        install_hint: None,
        notes: Vec::new(),
    };
    let outcome = process::run(&inv, Duration::from_secs(10), &mut Quiet);
    match outcome.end {
        End::Complete => Ok(parse_ollama_list(&outcome.text)),
        End::Interrupted => Err("interrupted".into()),
        End::Failed(e) => Err(e.to_string().lines().next().unwrap_or("failed").to_owned()),
    }
}

fn parse_ollama_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "NAME")
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_aliases() {
        assert_eq!(alias_for("llama3.2:latest"), "llama3.2");
        assert_eq!(alias_for("qwen2.5-coder:7b"), "qwen2.5-coder-7b");
        assert_eq!(alias_for("hf.co/org/Model:Q4"), "model-q4");
        let list =
            "NAME              ID    SIZE   MODIFIED\nllama3.2:latest   a80c  2.0 GB 2 days ago\n";
        assert_eq!(parse_ollama_list(list), vec!["llama3.2:latest"]);
    }
}
