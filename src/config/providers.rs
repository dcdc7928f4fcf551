//! The shape of config `"providers"` entries (read by the HTTP backend) and of a custom
//! backend's output format (read by the CLI backends): checked when the config is loaded, so a
//! bad entry fails before anything is written.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Protocol {
    #[serde(alias = "openai-compatible", alias = "compat")]
    Openai,
    Azure,
    Anthropic,
    Gemini,
    Ollama,
    Bedrock,
}

/// One entry of config `"providers"`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProviderConfig {
    pub(crate) protocol: Option<Protocol>,
    pub(crate) base_url: Option<String>,
    /// Name of the environment variable holding the key.
    pub(crate) api_key_env: Option<String>,
    /// The key itself, best written `${VAR}`.
    pub(crate) api_key: Option<String>,
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) max_tokens: Option<u64>,
    pub(crate) max_tokens_field: Option<String>,
    /// Azure `api-version`.
    pub(crate) api_version: Option<String>,
    pub(crate) retries: Option<u32>,
    /// Seconds.
    pub(crate) timeout: Option<f64>,
    pub(crate) max_requests_per_minute: Option<u32>,
    pub(crate) stream: Option<bool>,
    /// The AWS region (Bedrock); AWS_REGION and AWS_DEFAULT_REGION win over it.
    pub(crate) region: Option<String>,
}

/// How a backend's stdout is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Format {
    /// Stdout is the reply, streamed as it comes.
    #[default]
    Text,
    /// `claude --output-format stream-json --verbose --include-partial-messages`.
    ClaudeStream,
    /// `codex exec --json`.
    CodexJson,
    /// `gemini -o stream-json`.
    GeminiStream,
    /// `qwen -o stream-json --include-partial-messages`.
    QwenStream,
}
