//! HTTP providers as data: a built-in table (name, protocol, base URL, key variable), config
//! `"providers"` entries that override them or add OpenAI-compatible servers, environment
//! variables over both, `<home>/.env` under those, and `${VAR}` in config values.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use super::sigv4::Credentials;
use crate::config::Config;
pub(crate) use crate::config::providers::{Protocol, ProviderConfig};
use crate::error::{Error, Result};

struct Builtin {
    name: &'static str,
    protocol: Protocol,
    base_url: &'static str,
    /// Environment variables that set the base URL, first found wins.
    base_env: &'static [&'static str],
    /// Environment variables that hold the key, first found wins; empty: no key needed.
    key_env: &'static [&'static str],
    max_tokens_field: &'static str,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "openai",
        protocol: Protocol::Openai,
        base_url: "https://api.openai.com/v1",
        base_env: &["OPENAI_BASE_URL"],
        key_env: &["OPENAI_API_KEY"],
        max_tokens_field: "max_completion_tokens",
    },
    Builtin {
        name: "openrouter",
        protocol: Protocol::Openai,
        base_url: "https://openrouter.ai/api/v1",
        base_env: &["OPENROUTER_BASE_URL"],
        key_env: &["OPENROUTER_API_KEY"],
        max_tokens_field: "max_tokens",
    },
    Builtin {
        name: "anthropic",
        protocol: Protocol::Anthropic,
        base_url: "https://api.anthropic.com",
        base_env: &["ANTHROPIC_BASE_URL"],
        key_env: &["ANTHROPIC_API_KEY"],
        max_tokens_field: "max_tokens",
    },
    Builtin {
        name: "gemini-api",
        protocol: Protocol::Gemini,
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        // The Gemini CLI's own variable too; GEMINI_BASE_URL wins when both are set.
        base_env: &["GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"],
        key_env: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        max_tokens_field: "maxOutputTokens",
    },
    Builtin {
        name: "ollama-api",
        protocol: Protocol::Ollama,
        base_url: "http://127.0.0.1:11434",
        base_env: &["OLLAMA_HOST"],
        key_env: &[],
        max_tokens_field: "num_predict",
    },
    Builtin {
        name: "azure",
        protocol: Protocol::Azure,
        base_url: "",
        base_env: &["AZURE_OPENAI_ENDPOINT"],
        key_env: &["AZURE_OPENAI_API_KEY"],
        max_tokens_field: "max_tokens",
    },
    Builtin {
        name: "bedrock",
        protocol: Protocol::Bedrock,
        // `{region}` is the AWS region (AWS_REGION, AWS_DEFAULT_REGION, or config "region").
        base_url: "https://bedrock-runtime.{region}.amazonaws.com",
        base_env: &["BEDROCK_BASE_URL"],
        // A Bedrock API key; AWS credentials (signed with SigV4) do instead.
        key_env: &["AWS_BEARER_TOKEN_BEDROCK"],
        max_tokens_field: "maxTokens",
    },
    Builtin {
        name: "glm",
        protocol: Protocol::Openai,
        base_url: "https://open.bigmodel.cn/api/paas/v4",
        base_env: &["GLM_BASE_URL"],
        key_env: &["ZHIPU_API_KEY"],
        max_tokens_field: "max_tokens",
    },
];

/// Names of the built-in HTTP providers.
pub(crate) fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name)
}

/// The protocol of a built-in HTTP provider.
pub(crate) fn builtin_protocol(name: &str) -> Option<Protocol> {
    BUILTINS.iter().find(|b| b.name == name).map(|b| b.protocol)
}

/// Config `"providers"`, parsed.
pub(crate) fn configured(config: &Config) -> Result<BTreeMap<String, ProviderConfig>> {
    match config.key("providers") {
        None => Ok(BTreeMap::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            Error::config(format!("invalid \"providers\" in {}: {e}", config.path.display()))
                .hint("each provider takes: protocol, base_url, api_key_env, api_key, headers, max_tokens, max_tokens_field, api_version, retries, timeout, max_requests_per_minute, stream, region")
        }),
    }
}

/// The variable holding a built-in provider's key, when it is set (environment or `.env`).
pub(crate) fn key_variable(name: &str, env: &Env) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|b| b.name == name)?
        .key_env
        .iter()
        .copied()
        .find(|v| env.get(v).is_some_and(|k| !k.trim().is_empty()))
}

/// Is `name` an HTTP provider (built in or declared in config)?
pub(crate) fn exists(name: &str, config: &Config) -> bool {
    BUILTINS.iter().any(|b| b.name == name)
        || matches!(config.key("providers"), Some(serde_json::Value::Object(m)) if m.contains_key(name))
}

/// Environment lookup: the process environment, then `<home>/.env`.
pub(crate) struct Env {
    dotenv: HashMap<String, String>,
}

impl Env {
    pub(crate) fn load(config: &Config) -> Env {
        let path = config.path.with_file_name(".env");
        let dotenv = read_dotenv(&path)
            .map(|t| parse_dotenv(&t))
            .unwrap_or_default();
        Env { dotenv }
    }

    pub(crate) fn get(&self, name: &str) -> Option<String> {
        std::env::var(name)
            .ok()
            .or_else(|| self.dotenv.get(name).cloned())
            .filter(|v| !v.is_empty())
    }

    /// Replace `${VAR}` with its value (unset: empty).
    pub(crate) fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            match rest[start + 2..].find('}') {
                Some(end) => {
                    out.push_str(
                        &self
                            .get(&rest[start + 2..start + 2 + end])
                            .unwrap_or_default(),
                    );
                    rest = &rest[start + 3 + end..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// The most of `.env` that is read; a file of keys is a few hundred bytes.
const MAX_DOTENV: u64 = 1024 * 1024;

/// `<home>/.env`, when it is a regular file. Opened without blocking and checked before it is
/// read: a FIFO there (1Password mounts them) would otherwise hang every call.
fn read_dotenv(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_DOTENV).read_to_string(&mut text).ok()?;
    Some(text)
}

/// `KEY=VALUE` lines; `export ` prefixes, quotes, and `#` comments (whole lines, or after a
/// value and a space: `KEY="v" # note`) allowed.
pub(crate) fn parse_dotenv(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                return None;
            }
            let l = l.strip_prefix("export ").unwrap_or(l);
            let (k, v) = l.split_once('=')?;
            Some((k.trim().to_owned(), dotenv_value(v.trim())))
        })
        .collect()
}

/// A value: quoted (up to the closing quote; what follows is a comment) or bare (up to a `#`
/// after white space).
fn dotenv_value(v: &str) -> String {
    for q in ['"', '\''] {
        if let Some(rest) = v.strip_prefix(q)
            && let Some(end) = rest.find(q)
        {
            return rest[..end].to_owned();
        }
    }
    let cut = v
        .char_indices()
        .find(|&(i, c)| c == '#' && v[..i].ends_with([' ', '\t']))
        .map_or(v.len(), |(i, _)| i);
    v[..cut].trim_end().to_owned()
}

/// A provider ready to call. Its `Debug` is written by hand and shows no secret (R2-7): the
/// key, header values, `${VAR}` values and AWS credentials are left out, and the base URL is
/// redacted.
#[derive(Clone)]
pub(crate) struct Resolved {
    pub(crate) name: String,
    pub(crate) protocol: Protocol,
    pub(crate) base_url: String,
    pub(crate) key: Option<String>,
    /// Where the key comes from, for messages (`OPENAI_API_KEY`).
    pub(crate) key_var: String,
    pub(crate) key_required: bool,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) max_tokens: u64,
    pub(crate) max_tokens_field: String,
    pub(crate) api_version: String,
    pub(crate) retries: u32,
    pub(crate) timeout: Duration,
    pub(crate) max_requests_per_minute: Option<u32>,
    pub(crate) stream: bool,
    /// Where the base URL came from, for messages.
    pub(crate) base_from: String,
    /// The query of the base URL (`key=x` of `…/v1?key=x`), kept apart so paths go before it.
    pub(crate) base_query: Option<String>,
    /// Everything never to show: the key, configured header values, and every value a
    /// `${VAR}` in config stood for.
    pub(crate) secrets: Vec<String>,
    /// The AWS region (Bedrock).
    pub(crate) region: Option<String>,
    /// AWS credentials to sign with (Bedrock, when no API key is set).
    pub(crate) aws: Option<Credentials>,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("name", &self.name)
            .field("protocol", &self.protocol)
            .field("base_url", &self.redact(&self.base_url))
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("key_var", &self.key_var)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("region", &self.region)
            .field("aws", &self.aws)
            .finish_non_exhaustive()
    }
}

impl Resolved {
    /// A key, or (Bedrock) AWS credentials, to call with.
    pub(crate) fn has_credentials(&self) -> bool {
        self.key.is_some() || self.aws.is_some()
    }

    /// No AWS region, where one is needed: for the default Bedrock URL, or to sign with AWS
    /// credentials.
    pub(crate) fn needs_region(&self) -> bool {
        self.protocol == Protocol::Bedrock
            && self.region.is_none()
            && (self.base_url.contains("{region}") || (self.key.is_none() && self.aws.is_some()))
    }

    /// What to set when there are no credentials.
    pub(crate) fn credentials_wanted(&self) -> String {
        if self.protocol == Protocol::Bedrock {
            format!(
                "{}, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                self.key_var
            )
        } else {
            self.key_var.clone()
        }
    }
}

impl Resolved {
    /// `text` with every secret replaced by `***`, and so are the credentials of any URL in it
    /// (`http://user:password@host` → `http://***@host`).
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = redact_userinfo(text);
        for s in self.secrets.iter().filter(|s| s.len() >= 4) {
            out = out.replace(s.as_str(), "***");
        }
        out
    }
}

impl Resolved {
    /// A header value as shown: a secret that is the whole value, or its last word (`Bearer
    /// KEY`), is `***` whatever its length. (In a body a secret shorter than 4 characters is
    /// left alone: it could be any word.)
    pub(crate) fn redact_header(&self, value: &str) -> String {
        for s in self.secrets.iter().filter(|s| !s.is_empty()) {
            if value == s {
                return "***".into();
            }
            if let Some(head) = value.strip_suffix(s.as_str())
                && head.ends_with(' ')
            {
                return format!("{head}***");
            }
        }
        self.redact(value)
    }
}

/// `scheme://user:password@host…` → `scheme://***@host…`, for every URL in `text`.
pub(crate) fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        match tail[..authority_end].rfind('@') {
            Some(i) => {
                out.push_str("***");
                rest = &tail[i..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// A number as config gave it, short even when huge (`1e300`, not 301 digits).
pub(crate) fn show_number(n: f64) -> String {
    if n != 0.0 && !(1e-3..1e9).contains(&n.abs()) {
        format!("{n:e}")
    } else {
        n.to_string()
    }
}

/// The names of the `${VAR}`s in a config value.
fn vars_in(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        match rest[start + 2..].find('}') {
            Some(end) => {
                names.push(&rest[start + 2..start + 2 + end]);
                rest = &rest[start + 3 + end..];
            }
            None => break,
        }
    }
    names
}

pub(crate) fn resolve(name: &str, config: &Config, env: &Env) -> Result<Resolved> {
    let all = configured(config)?;
    let cfg = all.get(name).cloned().unwrap_or_default();
    let builtin = BUILTINS.iter().find(|b| b.name == name);
    let protocol = match (cfg.protocol, builtin) {
        (Some(p), _) => p,
        (None, Some(b)) => b.protocol,
        (None, None) => Protocol::Openai,
    };
    let base_env = builtin.map_or(&[][..], |b| b.base_env);
    let (base_url, base_from) = match base_env
        .iter()
        .find_map(|v| env.get(v).map(|val| (val, (*v).to_owned())))
    {
        Some(found) => found,
        None => match &cfg.base_url {
            Some(u) => (
                env.expand(u),
                format!("providers.{name}.base_url in config.json"),
            ),
            None => (
                builtin.map_or("", |b| b.base_url).to_owned(),
                format!("the built-in {name} URL"),
            ),
        },
    };
    let region = (protocol == Protocol::Bedrock)
        .then(|| {
            ["AWS_REGION", "AWS_DEFAULT_REGION"]
                .iter()
                .find_map(|v| env.get(v))
                .or_else(|| cfg.region.as_deref().map(|r| env.expand(r)))
        })
        .flatten()
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty());
    if let Some(r) = &region
        && !r
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(Error::config(format!(
            "the AWS region for {name} is not a region name: '{}'",
            crate::fmt::one_line(r, 60)
        ))
        .hint("set AWS_REGION to a region such as us-east-1"));
    }
    // Without a region, `{region}` stays in the URL: `needs_region` then stops the call
    // (after a missing key, which `ai list` names first).
    let base_url = match &region {
        Some(r) => base_url.replace("{region}", r),
        None => base_url,
    };
    let (base_url, base_query) = split_query(&base_url);
    let base_url = normalize_base(&base_url, protocol);
    if base_url.is_empty() {
        let var = base_env
            .first()
            .map_or(String::new(), |v| format!("set {v}, or "));
        return Err(
            Error::config(format!("no base URL for provider '{name}'")).hint(format!(
                "{var}set \"base_url\" under \"providers\".\"{name}\" in config.json"
            )),
        );
    }
    let key_env: Vec<String> = match &cfg.api_key_env {
        Some(v) => vec![v.clone()],
        None => builtin.map_or_else(Vec::new, |b| {
            b.key_env.iter().map(|s| (*s).to_owned()).collect()
        }),
    };
    let key = key_env.iter().find_map(|v| env.get(v)).or_else(|| {
        cfg.api_key
            .as_deref()
            .map(|k| env.expand(k))
            .filter(|k| !k.is_empty())
    });
    let key_var = key_env
        .first()
        .cloned()
        .unwrap_or_else(|| format!("providers.{name}.api_key"));
    // Bedrock always needs a key or AWS credentials, also under another name.
    let key_required = builtin.is_some_and(|b| !b.key_env.is_empty())
        || cfg.api_key_env.is_some()
        || protocol == Protocol::Bedrock;
    let mut headers: Vec<(String, String)> = cfg
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), env.expand(v)))
        .collect();
    if name == "openrouter"
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("x-title"))
    {
        headers.push(("HTTP-Referer".into(), "https://github.com/ai-cli/ai".into()));
        headers.push(("X-Title".into(), "ai".into()));
    }
    let max_tokens_field = cfg.max_tokens_field.clone().unwrap_or_else(|| {
        builtin
            .map_or("max_tokens", |b| b.max_tokens_field)
            .to_owned()
    });
    let timeout = match cfg.timeout {
        Some(s) if s > 0.0 && Duration::try_from_secs_f64(s).is_ok() => Duration::from_secs_f64(s),
        Some(s) => {
            return Err(Error::config(format!(
                "providers.{name}.timeout must be a positive number of seconds, not {}",
                show_number(s)
            )));
        }
        None => config.timeout,
    };
    let mut secrets: Vec<String> = key.iter().cloned().collect();
    secrets.extend(
        headers
            .iter()
            .filter(|(k, _)| {
                !k.eq_ignore_ascii_case("X-Title") && !k.eq_ignore_ascii_case("HTTP-Referer")
            })
            .map(|(_, v)| v.clone()),
    );
    let aws = if protocol == Protocol::Bedrock {
        match (
            env.get("AWS_ACCESS_KEY_ID"),
            env.get("AWS_SECRET_ACCESS_KEY"),
        ) {
            (Some(access_key), Some(secret_key)) => Some(Credentials {
                access_key,
                secret_key,
                session_token: env.get("AWS_SESSION_TOKEN"),
            }),
            _ => None,
        }
    } else {
        None
    };
    if let Some(c) = &aws {
        secrets.push(c.access_key.clone());
        secrets.push(c.secret_key.clone());
        secrets.extend(c.session_token.iter().cloned());
    }
    // A key in the base URL's query (`…/v1?key=…`) is as secret as one in a header.
    if let Some(q) = &base_query {
        secrets.extend(query_secrets(q));
    }
    let raw = [cfg.base_url.as_deref(), cfg.api_key.as_deref()]
        .into_iter()
        .flatten()
        .chain(cfg.headers.values().map(String::as_str));
    for text in raw {
        secrets.extend(vars_in(text).into_iter().filter_map(|v| env.get(v)));
    }
    Ok(Resolved {
        name: name.to_owned(),
        protocol,
        base_url,
        key,
        key_var,
        key_required,
        headers,
        max_tokens: cfg.max_tokens.unwrap_or(4096),
        max_tokens_field,
        api_version: cfg.api_version.unwrap_or_else(|| "2024-10-21".to_owned()),
        retries: cfg.retries.unwrap_or(2),
        timeout,
        max_requests_per_minute: cfg.max_requests_per_minute.filter(|n| *n > 0),
        stream: cfg.stream.unwrap_or(true),
        base_from,
        base_query,
        secrets,
        region,
        aws,
    })
}

/// `…/v1?x=1#frag` → (`…/v1`, `x=1`). The fragment is never sent to a server.
/// The values of a query's parameters whose names say they are credentials (`key`, `api-key`,
/// `token`, `sig`, `code`, `secret`, …), as written and percent-decoded.
fn query_secrets(query: &str) -> Vec<String> {
    const NAMES: [&str; 9] = [
        "key",
        "token",
        "sig",
        "code",
        "secret",
        "pass",
        "auth",
        "session",
        "credential",
    ];
    let mut out = Vec::new();
    for pair in query.split('&') {
        let Some((name, value)) = pair.split_once('=') else {
            continue;
        };
        let name = name.to_ascii_lowercase();
        if value.is_empty() || !NAMES.iter().any(|n| name.contains(n)) {
            continue;
        }
        let decoded = percent_decode(value);
        if decoded != value {
            out.push(decoded);
        }
        out.push(value.to_owned());
    }
    out
}

/// `%XX` escapes (and `+`) decoded; anything malformed is kept as it is.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn split_query(url: &str) -> (String, Option<String>) {
    let url = url.split_once('#').map_or(url, |(u, _)| u);
    match url.split_once('?') {
        Some((base, query)) => (
            base.to_owned(),
            Some(query.to_owned()).filter(|q| !q.is_empty()),
        ),
        None => (url.to_owned(), None),
    }
}

/// Trim a trailing `/`; give OLLAMA_HOST-style `host:port` a scheme.
fn normalize_base(url: &str, protocol: Protocol) -> String {
    let url = url.trim().trim_end_matches('/');
    if url.is_empty() {
        return String::new();
    }
    if protocol == Protocol::Gemini {
        return gemini_base(url);
    }
    if url.contains("://") {
        return url.to_owned();
    }
    let url = if protocol == Protocol::Ollama {
        url.replacen("0.0.0.0", "127.0.0.1", 1)
    } else {
        url.to_owned()
    };
    format!("http://{url}")
}

/// Gemini's paths start after the API version: a host root (`http://127.0.0.1:8080`, as
/// proxies are often given) gets `/v1beta`; a URL ending in a version (`/v1`, `/v1beta`,
/// `/v1alpha`) is kept.
fn gemini_base(url: &str) -> String {
    let url = if url.contains("://") {
        url.to_owned()
    } else {
        format!("http://{url}")
    };
    let last = url.rsplit('/').next().unwrap_or("");
    let version = last.strip_prefix('v').is_some_and(|v| {
        let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c.is_ascii_digit());
        digits.is_empty() && v.starts_with(|c: char| c.is_ascii_digit())
    });
    let path_starts = url.find("://").map_or(0, |i| i + 3);
    if version && url[path_starts..].contains('/') {
        url
    } else {
        format!("{url}/v1beta")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_forms() {
        let m = parse_dotenv("# c\nA=1\nexport B=\"two words\"\nC='x'\n\nbad line\n");
        assert_eq!(m["A"], "1");
        assert_eq!(m["B"], "two words");
        assert_eq!(m["C"], "x");
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn dotenv_comments_and_quotes() {
        let m = parse_dotenv(
            "A = \"k\" # note\nB='x y' #c\nC=plain # c\nD=a#b\nE=\"#in\"\nF=\"unclosed\n",
        );
        assert_eq!(m["A"], "k");
        assert_eq!(m["B"], "x y");
        assert_eq!(m["C"], "plain");
        assert_eq!(m["D"], "a#b");
        assert_eq!(m["E"], "#in");
        assert_eq!(m["F"], "\"unclosed");
    }

    #[test]
    fn userinfo_is_redacted() {
        assert_eq!(
            redact_userinfo("POST http://u:pw@h:1/v1?a=b@c and https://x@y/z, ftp://plain/p"),
            "POST http://***@h:1/v1?a=b@c and https://***@y/z, ftp://plain/p"
        );
    }

    #[test]
    fn queries_and_gemini_versions() {
        assert_eq!(
            split_query("http://h/v1?x=1#f"),
            ("http://h/v1".into(), Some("x=1".into()))
        );
        assert_eq!(split_query("http://h/v1#f"), ("http://h/v1".into(), None));
        assert_eq!(gemini_base("http://h:1"), "http://h:1/v1beta");
        assert_eq!(gemini_base("http://h:1/v1"), "http://h:1/v1");
        assert_eq!(gemini_base("h:1/p/v1alpha"), "http://h:1/p/v1alpha");
        assert_eq!(gemini_base("http://h/vendor"), "http://h/vendor/v1beta");
        assert_eq!(gemini_base("http://v1"), "http://v1/v1beta");
        assert_eq!(show_number(-1e300), "-1e300");
        assert_eq!(show_number(-2.5), "-2.5");
    }

    #[test]
    fn base_urls() {
        assert_eq!(
            normalize_base("0.0.0.0:11434", Protocol::Ollama),
            "http://127.0.0.1:11434"
        );
        assert_eq!(
            normalize_base("https://x/v1/", Protocol::Openai),
            "https://x/v1"
        );
    }

    #[test]
    fn expand_vars() {
        let env = Env {
            dotenv: HashMap::from([("AI_TEST_ONLY_VAR".to_owned(), "v".to_owned())]),
        };
        assert_eq!(
            env.expand("a${AI_TEST_ONLY_VAR}b${AI_TEST_UNSET_VAR}c${"),
            "avbc${"
        );
    }
}
