//! `ai init`: detect the backend CLIs, API keys and local servers (Ollama, LM Studio); write
//! aliases and a default model that can answer into the config (never a key: providers read
//! their variables at each call).

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::alias::{self, Cli};
use crate::backend::cli::{Invocation, find_program};
use crate::backend::http::provider::{self as http_provider, Env};
use crate::backend::{End, process};
use crate::config::{Config, Home};
use crate::error::Result;
use crate::output::{self, Sink};

pub(crate) fn run() -> Result<()> {
    let home = Home::locate()?;
    home.ensure()?;
    let config = Config::load(&home)?;
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
    let mut found: Map<String, Value> = match config.key("models") {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    // Local Ollama models: over HTTP when the server answers, else `ollama list`.
    let env = Env::load(&config);
    let ollama = match http_provider::resolve("ollama-api", &config, &env) {
        Ok(p) => ollama_tags(&p.base_url).map(|m| (m, "ollama-api")),
        Err(e) => Err(e.to_string()),
    };
    let ollama = match ollama {
        Ok(found) => Ok(found),
        Err(_) if installed.contains(&Cli::Ollama) => ollama_models().map(|m| (m, "ollama")),
        Err(why) => Err(why),
    };
    match ollama {
        Ok((list, provider)) => {
            // With the CLI installed, aliases use it; otherwise the HTTP API.
            let provider = if installed.contains(&Cli::Ollama) {
                "ollama"
            } else {
                provider
            };
            let added = add_aliases(&mut aliases, provider, &list, alias_for);
            report.push_str(&summary("ollama", list.len(), &added));
            found.insert("ollama".into(), json!(list));
        }
        Err(why) if installed.contains(&Cli::Ollama) => {
            report.push_str(&format!("ollama models: not listed ({why})\n"));
        }
        Err(_) => {}
    }
    // OpenRouter's free models, when there is a key to use them with.
    match http_provider::resolve("openrouter", &config, &env) {
        Ok(p) if p.key.is_some() => match openrouter_free(&p.base_url, p.key.as_deref()) {
            Ok(list) => {
                let added = add_aliases(&mut aliases, "openrouter", &list, openrouter_alias);
                report.push_str(&summary("openrouter free", list.len(), &added));
                found.insert("openrouter".into(), json!(list));
            }
            Err(why) => report.push_str(&format!("openrouter models: not fetched ({why})\n")),
        },
        _ => report.push_str(
            "openrouter models: skipped (set OPENROUTER_API_KEY to add its free models)\n",
        ),
    }
    // API keys (environment or <home>/.env): aliases for their models. The key stays where it
    // is; the provider reads its variable at each call, so the config never holds it.
    let mut keys = Vec::new();
    let mut api_default: Option<String> = None;
    for provider in ["anthropic", "openai", "gemini-api", "openrouter"] {
        let Some(var) = http_provider::key_variable(provider, &env) else {
            continue;
        };
        keys.push(format!("{var} ({provider})"));
        let offered: Vec<(&str, &str)> = crate::builtin::API_MODELS
            .iter()
            .filter(|(_, p, _)| *p == provider)
            .map(|(a, _, m)| (*a, *m))
            .collect();
        let mut added = Vec::new();
        for (name, model) in &offered {
            let target = json!([provider, model]);
            if !aliases.contains_key(*name) && !crate::cli::is_reserved(name) {
                aliases.insert((*name).to_owned(), target.clone());
                added.push(format!("{name} → {model}"));
            }
            if api_default.is_none() && aliases.get(*name) == Some(&target) {
                api_default = Some((*name).to_owned());
            }
        }
        if provider == "openrouter" && api_default.is_none() {
            api_default = found
                .get("openrouter")
                .and_then(|v| v.as_array())
                .and_then(|l| l.first())
                .and_then(|m| m.as_str())
                .map(openrouter_alias)
                .filter(|a| aliases.contains_key(a));
        }
        if !added.is_empty() {
            report.push_str(&format!("{provider} aliases added: {}\n", added.join(", ")));
        }
    }
    if keys.is_empty() {
        report.push_str(
            "API keys: none found (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY, OPENROUTER_API_KEY, in the environment or .env)\n",
        );
    } else {
        report.push_str(&format!("API keys: {}\n", keys.join(", ")));
    }
    // LM Studio's server (OpenAI-compatible), when it answers.
    let lmstudio_base = env
        .get("LMSTUDIO_BASE_URL")
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| LMSTUDIO_URL.to_owned());
    let lmstudio_base = lmstudio_base.trim_end_matches('/').to_owned();
    let mut lmstudio = None;
    match openai_models(&lmstudio_base) {
        Ok(list) if !list.is_empty() => {
            let added = add_aliases(&mut aliases, "lmstudio", &list, alias_for);
            report.push_str(&summary("lm studio", list.len(), &added));
            lmstudio = list.first().map(|m| alias_for(m));
            found.insert("lmstudio".into(), json!(list));
        }
        Ok(_) => report.push_str(&format!("lm studio at {lmstudio_base}: no models loaded\n")),
        Err(_) => {}
    }
    let ollama_first = found
        .get("ollama")
        .and_then(|v| v.as_array())
        .and_then(|l| l.first())
        .and_then(|m| m.as_str())
        .map(alias_for);
    // The default, when there is none yet: what can answer here, in this order.
    let cli_default = installed.iter().find_map(|c| match c {
        Cli::Claude => Some("sonnet"),
        Cli::Codex => Some("codex"),
        Cli::Gemini => Some("gemini"),
        Cli::Qwen => Some("qwen"),
        Cli::Ollama => None,
    });
    let default_choice: Option<String> = cli_default
        .map(str::to_owned)
        .or(api_default)
        .or_else(|| ollama_first.filter(|a| aliases.contains_key(a)))
        .or_else(|| lmstudio.filter(|a| aliases.contains_key(a)));
    // The network calls above took a while: what they found is merged into the file as it is
    // now, under the config lock, so a change made meanwhile (`ai default`) is kept.
    let generated: Vec<(String, Value)> = aliases
        .into_iter()
        .filter(
            |(k, _)| !matches!(config.key("aliases"), Some(Value::Object(m)) if m.contains_key(k)),
        )
        .collect();
    let (config, chosen) = Config::update(&home, |fresh| {
        fresh.set_key("installed_tools", Some(json!(names)));
        let mut aliases = match fresh.key("aliases") {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        for (k, v) in generated {
            aliases.entry(k).or_insert(v);
        }
        if !aliases.is_empty() {
            fresh.set_key("aliases", Some(Value::Object(aliases)));
        }
        if found.contains_key("lmstudio") {
            let mut providers = match fresh.key("providers") {
                Some(Value::Object(map)) => map.clone(),
                _ => Map::new(),
            };
            providers
                .entry("lmstudio")
                .or_insert_with(|| json!({"protocol": "openai", "base_url": lmstudio_base}));
            fresh.set_key("providers", Some(Value::Object(providers)));
        }
        let mut chosen = None;
        if fresh.default_alias.is_none()
            && let Some(d) = &default_choice
        {
            fresh.set_key("default_alias", Some(json!(d)));
            chosen = Some(d.clone());
        }
        if !found.is_empty() {
            let mut models = match fresh.key("models") {
                Some(Value::Object(map)) => map.clone(),
                _ => Map::new(),
            };
            models.extend(found);
            fresh.set_key("models", Some(Value::Object(models)));
        }
        Ok(chosen)
    })?;
    report.push_str(&format!("wrote {}\n", config.path.display()));
    match (&chosen, &config.default_alias) {
        (Some(d), _) => report.push_str(&format!(
            "default model: {d} (next: ai \"your question\"; change it with `ai default ALIAS`)\n"
        )),
        (None, Some(d)) => report.push_str(&format!("default model: {d} (kept)\n")),
        (None, None) => report.push_str(
            "no model found that can answer here: install a backend CLI (claude, codex, gemini, qwen), set an API key, or start Ollama or LM Studio, then run `ai init` again; `ai echo \"hi\"` works meanwhile\n",
        ),
    }
    output::print_stdout(&report)
}

/// Add `provider` aliases for models whose alias is still free; returns "alias → model" lines.
fn add_aliases(
    aliases: &mut Map<String, Value>,
    provider: &str,
    models: &[String],
    short: impl Fn(&str) -> String,
) -> Vec<String> {
    let mut added = Vec::new();
    for model in models {
        let name = short(model);
        let taken = name.is_empty()
            || aliases.contains_key(&name)
            || alias::BUILTIN.iter().any(|(a, _, _)| *a == name)
            || crate::cli::is_reserved(&name);
        if !taken {
            aliases.insert(name.clone(), json!([provider, model]));
            added.push(format!("{name} → {model}"));
        }
    }
    added
}

fn summary(what: &str, count: usize, added: &[String]) -> String {
    if added.is_empty() {
        format!("{what} models: {count} (no new aliases)\n")
    } else {
        format!(
            "{what} models: {count}; aliases added: {}\n",
            added.join(", ")
        )
    }
}

/// `xiaomi/mimo-v2-flash:free` → `mimo-v2-flash`.
pub(crate) fn openrouter_alias(model: &str) -> String {
    let base = model.strip_suffix(":free").unwrap_or(model);
    alias_for(base)
}

/// GET a JSON document (init only; short timeout, no retries).
fn get_json(url: &str, key: Option<&str>) -> std::result::Result<Value, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .timeout_connect(Some(Duration::from_secs(2)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut req = agent.get(url);
    if let Some(k) = key {
        req = req.header("Authorization", &format!("Bearer {k}"));
    }
    let resp = req.call().map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    if status >= 400 {
        return Err(format!("HTTP {status}"));
    }
    let mut body = resp.into_body();
    let text = body.read_to_string().map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("not JSON ({e})"))
}

/// Where LM Studio's server listens unless LMSTUDIO_BASE_URL says otherwise.
const LMSTUDIO_URL: &str = "http://127.0.0.1:1234/v1";

/// Model IDs from an OpenAI-compatible server's `GET /models` (LM Studio).
fn openai_models(base: &str) -> std::result::Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct List {
        #[serde(default)]
        data: Vec<Model>,
    }
    #[derive(serde::Deserialize)]
    struct Model {
        id: String,
    }
    let v = get_json(&format!("{base}/models"), None)?;
    let list: List = serde_json::from_value(v).map_err(|e| format!("unexpected answer ({e})"))?;
    Ok(list.data.into_iter().map(|m| m.id).collect())
}

/// Model names from Ollama's `GET /api/tags`.
fn ollama_tags(base: &str) -> std::result::Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct Tags {
        #[serde(default)]
        models: Vec<Tag>,
    }
    #[derive(serde::Deserialize)]
    struct Tag {
        name: String,
    }
    let v = get_json(&format!("{base}/api/tags"), None)?;
    let tags: Tags = serde_json::from_value(v).map_err(|e| format!("unexpected answer ({e})"))?;
    Ok(tags.models.into_iter().map(|t| t.name).collect())
}

/// Free model IDs from OpenRouter's `GET /models`.
fn openrouter_free(base: &str, key: Option<&str>) -> std::result::Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct List {
        #[serde(default)]
        data: Vec<Model>,
    }
    #[derive(serde::Deserialize)]
    struct Model {
        id: String,
    }
    let v = get_json(&format!("{base}/models"), key)?;
    let list: List = serde_json::from_value(v).map_err(|e| format!("unexpected answer ({e})"))?;
    let mut free: Vec<String> = list
        .data
        .into_iter()
        .map(|m| m.id)
        .filter(|id| id.ends_with(":free"))
        .collect();
    free.sort();
    Ok(free)
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
        output: crate::backend::stream::Format::Text,
        plain_args: None,
        cli: Some(Cli::Ollama),
        install_hint: None,
        notes: Vec::new(),
        structured: false,
        schema_file: None,
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
