//! How many tokens each model accepts: a built-in table for the default aliases' models, and
//! config `"context_tokens"` (by alias, `provider:model`, or `provider`) over it.

use crate::alias::{Cli, Provider, Route};
use crate::config::Config;

/// Context size of a route's model, in tokens.
pub(crate) fn tokens(route: &Route, config: &Config) -> u64 {
    // Checked when the config was read: every entry is a whole number above 0.
    let keys = [
        route.label.clone(),
        format!("{}:{}", route.provider.name(), route.model),
        route.provider.name().to_owned(),
    ];
    keys.iter()
        .find_map(|k| config.context_tokens.get(k).copied())
        .unwrap_or_else(|| builtin(&route.provider, &route.model))
}

fn builtin(provider: &Provider, model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    match provider {
        Provider::Echo => 1_000_000,
        Provider::Cli(Cli::Claude) => 200_000,
        Provider::Cli(Cli::Codex) => 400_000,
        Provider::Cli(Cli::Gemini) => 1_048_576,
        Provider::Cli(Cli::Qwen) if m.contains("vision") => 131_072,
        Provider::Cli(Cli::Qwen) => 262_144,
        // Local models: Ollama's own default window is small; say so with config if larger.
        Provider::Cli(Cli::Ollama) => 8_192,
        Provider::Http(name) => match name.as_str() {
            "anthropic" => 200_000,
            "gemini-api" => 1_048_576,
            "ollama-api" => 8_192,
            "glm" if m.contains("air") => 128_000,
            "glm" => 200_000,
            _ if m.contains("gpt-5") => 400_000,
            _ if m.starts_with('o') && m.chars().nth(1).is_some_and(|c| c.is_ascii_digit()) => {
                200_000
            }
            _ if m.contains("gpt-4.1") => 1_047_576,
            _ => 128_000,
        },
        Provider::Custom(_) => 128_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(word: &str, config: &Config) -> Route {
        crate::alias::resolve(word, config).unwrap().unwrap()
    }

    #[test]
    fn table_and_overrides() {
        let c = Config::parse("c.json".into(), "{}").unwrap();
        assert_eq!(tokens(&route("sonnet", &c), &c), 200_000);
        assert_eq!(tokens(&route("ollama", &c), &c), 8_192);
        assert_eq!(tokens(&route("openai:o3-mini", &c), &c), 200_000);
        let c = Config::parse(
            "c.json".into(),
            r#"{"context_tokens":{"sonnet":1000,"ollama":32768,"openai:gpt-x":5}}"#,
        )
        .unwrap();
        assert_eq!(tokens(&route("sonnet", &c), &c), 1000);
        assert_eq!(tokens(&route("ollama:qwen3", &c), &c), 32768);
        assert_eq!(tokens(&route("openai:gpt-x", &c), &c), 5);
    }
}
