//! What models cost: the one price table of `ai`, read by `ai usage` and the monthly budget
//! where a backend does not report the cost of a reply itself. A cost computed from it is
//! always marked estimated.
//!
//! Standard list prices in US dollars per million tokens (input, output), for prompts under
//! 200k tokens, as the providers published them in late 2026; batch, cache and long-context
//! prices differ. To correct or add a model, edit [`TABLE`]: the first pattern found in the
//! model's name (lower case) wins, so more specific names come first.

/// A model's price per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Price {
    pub(crate) input: f64,
    pub(crate) output: f64,
}

impl Price {
    /// The cost of `input` and `output` tokens.
    pub(crate) fn cost(self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input + output as f64 * self.output) / 1_000_000.0
    }
}

/// (pattern in the model name, input, output).
pub(crate) const TABLE: &[(&str, f64, f64)] = &[
    // Anthropic (the claude CLI names its models sonnet, opus, haiku).
    ("opus", 5.0, 25.0),
    ("sonnet", 3.0, 15.0),
    ("haiku", 1.0, 5.0),
    // OpenAI (codex models are priced as their base).
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-5-mini", 0.25, 2.0),
    ("codex-mini", 0.25, 2.0),
    ("gpt-5", 1.25, 10.0),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.0),
    ("o4-mini", 1.10, 4.40),
    ("o3", 2.0, 8.0),
    // Google.
    ("gemini-2.5-flash-lite", 0.10, 0.40),
    ("gemini-2.5-flash", 0.30, 2.50),
    ("gemini-2.5-pro", 1.25, 10.0),
    ("gemini-3-pro", 2.0, 12.0),
    ("gemini-3-flash", 0.50, 3.0),
    // Zhipu.
    ("glm-4.5-air", 0.20, 1.10),
    ("glm", 0.60, 2.20),
];

/// Providers that run on this machine (or no model at all): they cost nothing.
const FREE_PROVIDERS: &[&str] = &["echo", "ollama", "ollama-api", "lmstudio"];

/// What a reply of `model` from `provider` costs per million tokens: zero for local providers
/// and OpenRouter's `:free` models, `None` when the table does not know the model.
pub(crate) fn price(provider: &str, model: &str) -> Option<Price> {
    if is_free(provider, model) {
        return Some(Price {
            input: 0.0,
            output: 0.0,
        });
    }
    let model = model.to_ascii_lowercase();
    TABLE
        .iter()
        .find(|(pattern, _, _)| model.contains(pattern))
        .map(|&(_, input, output)| Price { input, output })
}

/// A provider or model that costs nothing to call.
pub(crate) fn is_free(provider: &str, model: &str) -> bool {
    FREE_PROVIDERS.contains(&provider) || model.ends_with(":free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(price("claude", "sonnet").unwrap().input, 3.0);
        assert_eq!(price("anthropic", "claude-opus-4-5").unwrap().output, 25.0);
        assert_eq!(price("openai", "gpt-5-mini").unwrap().input, 0.25);
        assert_eq!(price("openai", "gpt-5.2").unwrap().input, 1.25);
        assert_eq!(price("openrouter", "x/y:free").unwrap().output, 0.0);
        assert_eq!(price("ollama-api", "llama3.2").unwrap().output, 0.0);
        assert!(price("openai", "some-new-model").is_none());
        let p = price("openai", "gpt-4o").unwrap();
        assert!((p.cost(1_000_000, 100_000) - 3.5).abs() < 1e-9);
    }
}
