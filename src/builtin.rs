//! The built-in alias table: plain data, read by alias resolution and by the clap
//! definitions (which offer the aliases as values), so neither has to import the other.

/// The Python tool's default aliases (alias, provider, model), plus `echo`.
pub(crate) const BUILTIN: &[(&str, &str, &str)] = &[
    // Claude Code
    ("claude", "claude", "sonnet"),
    ("haiku", "claude", "haiku"),
    ("sonnet", "claude", "sonnet"),
    ("opus", "claude", "opus"),
    ("opus-m", "claude", "opus@medium"),
    ("opus-h", "claude", "opus@high"),
    // Codex CLI
    ("codex", "codex", "gpt-5.3-codex"),
    ("codex-m", "codex", "gpt-5.3-codex@medium"),
    ("codex-h", "codex", "gpt-5.3-codex@high"),
    ("codex-xh", "codex", "gpt-5.3-codex@xhigh"),
    ("gpt", "codex", "gpt-5.2"),
    ("codex-max", "codex", "gpt-5.1-codex-max"),
    ("codex-mini", "codex", "gpt-5.1-codex-mini"),
    // Gemini CLI
    ("gemini", "gemini", "gemini-3-flash-preview"),
    ("pro", "gemini", "gemini-3-pro-preview"),
    ("flash", "gemini", "gemini-3-flash-preview"),
    ("pro-2.5", "gemini", "gemini-2.5-pro"),
    ("flash-2.5", "gemini", "gemini-2.5-flash"),
    ("flash-lite", "gemini", "gemini-2.5-flash-lite"),
    // Qwen Code
    ("qwen", "qwen", "coder-model"),
    ("qwen-vision", "qwen", "vision-model"),
    // Ollama (local)
    ("ollama", "ollama", "llama3"),
    // GLM (Zhipu AI)
    ("glm", "glm", "glm-5"),
    ("glm5", "glm", "glm-5"),
    ("glm4", "glm", "glm-4.7"),
    ("glm-air", "glm", "glm-4.5-air"),
    // OpenRouter, free models
    ("mimo", "openrouter", "xiaomi/mimo-v2-flash:free"),
    ("olmo", "openrouter", "allenai/olmo-3.1-32b-think:free"),
    (
        "deepseek",
        "openrouter",
        "nex-agi/deepseek-v3.1-nex-n1:free",
    ),
    (
        "chimera",
        "openrouter",
        "tngtech/deepseek-r1t2-chimera:free",
    ),
    ("devstral", "openrouter", "mistralai/devstral-2512:free"),
    ("oss", "openrouter", "openai/gpt-oss-120b:free"),
    // No AI at all: replies with an account of what it received.
    ("echo", "echo", "echo"),
];

/// Aliases `ai init` offers for the HTTP APIs whose key it finds (alias, provider, model); the
/// first of each provider is the one it makes the default when nothing else answers.
pub(crate) const API_MODELS: &[(&str, &str, &str)] = &[
    ("claude-sonnet", "anthropic", "claude-sonnet-4-5"),
    ("claude-haiku", "anthropic", "claude-haiku-4-5"),
    ("claude-opus", "anthropic", "claude-opus-4-5"),
    ("gpt-5-mini", "openai", "gpt-5-mini"),
    ("gpt-5", "openai", "gpt-5"),
    ("gpt-4.1", "openai", "gpt-4.1"),
    ("gemini-flash", "gemini-api", "gemini-2.5-flash"),
    ("gemini-pro", "gemini-api", "gemini-2.5-pro"),
];
