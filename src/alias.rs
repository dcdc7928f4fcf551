//! Aliases and providers: from a word the user typed to a [`Route`].

use std::collections::BTreeMap;

use crate::config::{AliasTarget, Config};
use crate::error::{Error, Result};

pub(crate) use crate::builtin::BUILTIN;

pub(crate) use crate::target::{Cli, Provider, Route};

impl Provider {
    /// Resolve a provider name; custom backends in config win over built-in names.
    pub(crate) fn lookup(name: &str, config: &Config) -> Option<Provider> {
        if config.backends.contains_key(name) {
            return Some(Provider::Custom(name.to_owned()));
        }
        if name == "echo" {
            return Some(Provider::Echo);
        }
        if let Some(cli) = Cli::from_name(name) {
            return Some(Provider::Cli(cli));
        }
        crate::backend::http::provider::exists(name, config)
            .then(|| Provider::Http(name.to_owned()))
    }
}

/// All aliases visible now: built-ins, overridden and extended by config.
pub(crate) fn table(config: &Config) -> BTreeMap<String, (AliasTarget, bool)> {
    let mut all: BTreeMap<String, (AliasTarget, bool)> = BUILTIN
        .iter()
        .map(|(a, p, m)| {
            (
                (*a).to_owned(),
                (AliasTarget((*p).to_owned(), (*m).to_owned()), true),
            )
        })
        .collect();
    for (alias, target) in &config.aliases {
        all.insert(alias.clone(), (target.clone(), false));
    }
    all
}

fn target_of(word: &str, config: &Config) -> Option<AliasTarget> {
    if let Some(t) = config.aliases.get(word) {
        return Some(t.clone());
    }
    BUILTIN
        .iter()
        .find(|(a, _, _)| *a == word)
        .map(|(_, p, m)| AliasTarget((*p).to_owned(), (*m).to_owned()))
}

/// Split a trailing `@effort` off a model name.
fn split_effort(model: &str) -> (String, Option<String>) {
    match model.rsplit_once('@') {
        Some((m, e))
            if !m.is_empty() && !e.is_empty() && e.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            (m.to_owned(), Some(e.to_ascii_lowercase()))
        }
        _ => (model.to_owned(), None),
    }
}

/// Resolve a word to a route, or `None` when it names no model.
///
/// Accepted: an alias, `alias@effort`, `provider:model`, `provider:model@effort`.
pub(crate) fn resolve(word: &str, config: &Config) -> Result<Option<Route>> {
    if word.is_empty()
        || word.chars().any(char::is_whitespace)
        || crate::reserved::is_reserved(word)
    {
        return Ok(None);
    }
    let (base, effort_suffix) = split_effort(word);
    if let Some(target) = target_of(&base, config) {
        let provider = Provider::lookup(&target.0, config).ok_or_else(|| {
            Error::config(format!(
                "alias '{base}' names unknown provider '{}'",
                target.0
            ))
            .hint(format!("fix \"aliases\" in {}", config.path.display()))
        })?;
        let (model, effort) = split_effort(&target.1);
        return Ok(Some(Route {
            label: word.to_owned(),
            provider,
            model,
            effort: effort_suffix.or(effort),
        }));
    }
    if let Some((prov, model)) = word.split_once(':')
        && let Some(provider) = Provider::lookup(prov, config)
    {
        if model.is_empty() {
            return Err(
                Error::usage(format!("'{word}' names no model after '{prov}:'"))
                    .hint(format!("write it as {prov}:MODEL")),
            );
        }
        let (model, effort) = split_effort(model);
        // A backend CLI gets the model as an argument (`gemini -m MODEL`, `ollama run MODEL`):
        // one that begins with '-' would be one of its options (`gemini:--yolo`).
        if model.starts_with('-') {
            return Err(Error::usage(format!(
                "'{}': a model name cannot begin with '-'",
                crate::fmt::one_line(word, 64)
            ))
            .hint(format!(
                "write it as {prov}:MODEL, the model's ID as {prov} lists it"
            )));
        }
        return Ok(Some(Route {
            label: word.to_owned(),
            provider,
            model,
            effort,
        }));
    }
    Ok(None)
}

/// A model that can answer here, for hints that name one: an installed CLI's alias, then an
/// HTTP API whose key is set (its `ai init` alias, or `provider:model`), then the config's own
/// aliases. `None` when nothing can (then `ai init` or `echo` is the way on).
pub(crate) fn usable(config: &Config) -> Option<String> {
    use crate::backend::cli::find_program;
    let works = |word: &str| -> bool {
        let Ok(Some(route)) = resolve(word, config) else {
            return false;
        };
        match &route.provider {
            Provider::Cli(c) => find_program(c.name()).is_some(),
            Provider::Custom(name) => config
                .backends
                .get(name)
                .is_some_and(|b| find_program(&b.program).is_some()),
            Provider::Http(_) => crate::backend::check(&route, config).is_ok(),
            Provider::Echo => false,
        }
    };
    let mut words: Vec<String> = ["sonnet", "codex", "gemini", "qwen"]
        .iter()
        .map(|w| (*w).to_owned())
        .collect();
    for (a, p, m) in crate::builtin::API_MODELS {
        words.push(if config.aliases.contains_key(*a) {
            (*a).to_owned()
        } else {
            format!("{p}:{m}")
        });
    }
    words.extend(config.aliases.keys().cloned());
    words.into_iter().find(|w| works(w))
}

/// The hint for a call that needs a default model when none is set.
pub(crate) fn default_hint(config: &Config) -> String {
    match usable(config) {
        Some(a) => format!("set a default: ai default {a}"),
        None => {
            "run `ai init` to find the models you can use here (`ai echo \"hi\"` works without any)"
                .to_owned()
        }
    }
}

/// Does a word look like it was meant as a model (so an unknown one is an error, not a prompt)?
pub(crate) fn looks_like_model(word: &str, config: &Config) -> bool {
    if word.is_empty() || word.chars().any(char::is_whitespace) {
        return false;
    }
    if word.contains(':') && !word.ends_with(':') && !word.contains("://") {
        return true;
    }
    !suggestions(word, config).is_empty()
}

/// Up to three known aliases close to `word`.
pub(crate) fn suggestions(word: &str, config: &Config) -> Vec<String> {
    let word = word.to_ascii_lowercase();
    let (base, _) = split_effort(&word);
    let limit = if base.len() <= 3 { 1 } else { 2 };
    let mut scored: Vec<(usize, String)> = table(config)
        .into_keys()
        .filter_map(|alias| {
            let d = distance(&base, &alias.to_ascii_lowercase());
            (d <= limit).then_some((d, alias))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, a)| a).collect()
}

/// Levenshtein distance, small strings only.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The error for a word meant as a model that names none.
pub(crate) fn unknown(word: &str, config: &Config) -> Error {
    if let Some((prov, _)) = word.split_once(':')
        && Provider::lookup(prov, config).is_none()
    {
        return Error::not_found(format!("unknown provider '{prov}' in '{word}'")).hint(format!(
            "known providers: claude, codex, gemini, qwen, ollama, echo, {}",
            crate::backend::http::provider::builtin_names()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let close = suggestions(word, config);
    let hint = if close.is_empty() {
        "`ai list` shows every alias".to_owned()
    } else {
        format!(
            "did you mean {}? (`ai list` shows every alias)",
            close.join(", ")
        )
    };
    Error::not_found(format!("unknown model '{word}'")).hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::parse("c.json".into(), json).unwrap()
    }

    #[test]
    fn builtin_and_effort() {
        let c = cfg("{}");
        let r = resolve("opus-h", &c).unwrap().unwrap();
        assert_eq!(
            (r.model.as_str(), r.effort.as_deref()),
            ("opus", Some("high"))
        );
        let r = resolve("sonnet@low", &c).unwrap().unwrap();
        assert_eq!(
            (r.model.as_str(), r.effort.as_deref()),
            ("sonnet", Some("low"))
        );
        assert_eq!(r.provider, Provider::Cli(Cli::Claude));
    }

    #[test]
    fn provider_model_keeps_colons() {
        let c = cfg("{}");
        let r = resolve("openrouter:x/y:free", &c).unwrap().unwrap();
        assert_eq!(r.model, "x/y:free");
        assert_eq!(r.provider, Provider::Http("openrouter".into()));
    }

    #[test]
    fn a_model_that_begins_with_a_dash_is_refused() {
        let c = cfg("{}");
        for w in ["gemini:--yolo", "ollama:-v", "openai:-x@high", "claude:--p"] {
            let e = resolve(w, &c).unwrap_err().to_string();
            assert!(e.contains("cannot begin with '-'"), "{w}: {e}");
        }
        assert_eq!(resolve("ollama:a-b", &c).unwrap().unwrap().model, "a-b");
    }

    #[test]
    fn config_overrides_builtin() {
        let c = cfg(r#"{"aliases":{"sonnet":["ollama","qwen3"]}}"#);
        let r = resolve("sonnet", &c).unwrap().unwrap();
        assert_eq!(r.provider, Provider::Cli(Cli::Ollama));
    }

    #[test]
    fn reserved_and_prose_are_not_models() {
        let c = cfg("{}");
        for w in ["chat", "list", "hello there", "explain", ""] {
            assert!(resolve(w, &c).unwrap().is_none(), "{w}");
        }
        assert!(!looks_like_model("explain", &c));
        assert!(looks_like_model("sonet", &c));
        assert_eq!(suggestions("sonet", &c), vec!["sonnet"]);
    }
}
