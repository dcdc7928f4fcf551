//! `ai list`: every alias by provider, and whether it can be used now.

use std::collections::HashMap;

use comfy_table::{Table, presets};
use serde::Serialize;

use crate::alias::{self, Provider};
use crate::backend::cli::find_program;
use crate::backend::http::provider::{self as http_provider, Env};
use crate::config::{Config, Home};
use crate::error::{Error, Result};
use crate::output;

#[derive(Serialize)]
struct Row {
    alias: String,
    provider: String,
    model: String,
    effort: Option<String>,
    /// `builtin` or `config`.
    source: &'static str,
    default: bool,
    usable: bool,
    status: String,
}

/// One provider: a backend CLI, an HTTP API, a custom CLI, or the built-in echo.
#[derive(Serialize)]
struct ProviderRow {
    name: String,
    /// `cli`, `http`, `custom` or `builtin`.
    kind: &'static str,
    /// How to name any of its models.
    use_as: String,
    usable: bool,
    status: String,
}

pub(crate) fn run(json: bool, providers_only: bool) -> Result<()> {
    let home = Home::locate()?;
    let config = Config::load(&home)?;
    let encode = |v: serde_json::Result<String>| -> Result<String> {
        let mut t = v.map_err(|e| Error::backend(e.to_string()))?;
        t.push('\n');
        Ok(t)
    };
    let text = match (providers_only, json) {
        (true, true) => encode(serde_json::to_string_pretty(&providers(&config)?))?,
        (true, false) => render_providers(&providers(&config)?),
        (false, true) => encode(serde_json::to_string_pretty(&rows(&config)?))?,
        (false, false) => format!(
            "{}\n{}",
            render(&rows(&config)?),
            render_providers(&providers(&config)?)
        ),
    };
    output::print_stdout(&text)
}

/// Every provider, whether or not an alias uses it.
fn providers(config: &Config) -> Result<Vec<ProviderRow>> {
    let mut list: Vec<(Provider, &'static str)> = crate::alias::Cli::ALL
        .into_iter()
        .map(|c| (Provider::Cli(c), "cli"))
        .collect();
    list.extend(http_provider::builtin_names().map(|n| (Provider::Http(n.to_owned()), "http")));
    for name in http_provider::configured(config)?.into_keys() {
        if !list.iter().any(|(p, _)| p.name() == name) {
            list.push((Provider::Http(name), "http"));
        }
    }
    list.extend(
        config
            .backends
            .keys()
            .map(|n| (Provider::Custom(n.clone()), "custom")),
    );
    list.push((Provider::Echo, "builtin"));
    Ok(list
        .into_iter()
        .map(|(p, kind)| {
            let (usable, status) = provider_status(&p, config);
            ProviderRow {
                name: p.name().to_owned(),
                kind,
                use_as: format!("{}:MODEL", p.name()),
                usable,
                status,
            }
        })
        .collect())
}

fn render_providers(rows: &[ProviderRow]) -> String {
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    table.set_header(vec!["PROVIDER", "USE AS", "STATUS"]);
    for r in rows {
        let mark = if r.usable { "ready" } else { "unavailable" };
        table.add_row(vec![
            r.name.clone(),
            r.use_as.clone(),
            format!("{mark}: {}", r.status),
        ]);
    }
    let mut out = output::trim_lines(&table.to_string());
    out.push('\n');
    out
}

fn rows(config: &Config) -> Result<Vec<Row>> {
    let mut status_of: HashMap<String, (bool, String)> = HashMap::new();
    let mut rows = Vec::new();
    for (name, (_, builtin)) in alias::table(config) {
        let route = match alias::resolve(&name, config) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                rows.push(Row {
                    alias: name,
                    provider: String::new(),
                    model: String::new(),
                    effort: None,
                    source: "config",
                    default: false,
                    usable: false,
                    status: e.to_string(),
                });
                continue;
            }
        };
        let provider = route.provider.name().to_owned();
        let (usable, status) = status_of
            .entry(provider.clone())
            .or_insert_with(|| provider_status(&route.provider, config))
            .clone();
        rows.push(Row {
            default: config.default_alias.as_deref() == Some(name.as_str()),
            alias: name,
            provider,
            model: route.model,
            effort: route.effort,
            source: if builtin { "builtin" } else { "config" },
            usable,
            status,
        });
    }
    rows.sort_by(|a, b| {
        (order(&a.provider), &a.provider, &a.alias).cmp(&(
            order(&b.provider),
            &b.provider,
            &b.alias,
        ))
    });
    Ok(rows)
}

/// CLIs first, then echo and custom backends, then HTTP providers.
fn order(provider: &str) -> u8 {
    match provider {
        "claude" => 0,
        "codex" => 1,
        "gemini" => 2,
        "qwen" => 3,
        "ollama" => 4,
        p if http_provider::builtin_names().any(|n| n == p) => 7,
        "echo" => 6,
        _ => 5,
    }
}

fn provider_status(provider: &Provider, config: &Config) -> (bool, String) {
    match provider {
        Provider::Echo => (true, "built in".to_owned()),
        Provider::Cli(cli) => match find_program(cli.name()) {
            Some(p) => (true, format!("installed ({})", p.display())),
            None => (false, format!("{} not installed", cli.name())),
        },
        Provider::Custom(name) => {
            let program = config
                .backends
                .get(name)
                .map(|b| b.program.as_str())
                .unwrap_or(name);
            match find_program(program) {
                Some(p) => (true, format!("custom ({})", p.display())),
                None => (false, format!("{program} not found on PATH")),
            }
        }
        Provider::Http(name) => match http_provider::resolve(name, config, &Env::load(config)) {
            Ok(p) if p.key_required && !p.has_credentials() => {
                (false, format!("needs {}", p.credentials_wanted()))
            }
            Ok(p) if p.needs_region() => (false, "needs AWS_REGION".to_owned()),
            Ok(p) if p.key.is_some() => (true, format!("key set ({})", p.key_var)),
            Ok(p) if p.aws.is_some() => (
                true,
                "AWS credentials set (AWS_ACCESS_KEY_ID, signed with SigV4)".to_owned(),
            ),
            Ok(p) => match listening(&p.base_url) {
                Some(false) => (
                    false,
                    format!(
                        "nothing is listening at {}; start the server",
                        p.redact(&p.base_url)
                    ),
                ),
                _ => (true, format!("no key needed ({})", p.redact(&p.base_url))),
            },
            Err(e) => (false, e.to_string()),
        },
    }
}

/// Whether a server on this machine (a keyless local provider: Ollama, LM Studio, vLLM,
/// llama.cpp) accepts a connection at `base_url`: `None` when the URL is not on this machine,
/// which is not tried (`ai list` sends nothing over the network).
fn listening(base_url: &str) -> Option<bool> {
    use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
    let (scheme, rest) = base_url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']')?;
            let port = match after.strip_prefix(':') {
                Some(p) => p.parse().ok()?,
                None => default_port,
            };
            (host, port)
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().ok()?),
            None => (authority, default_port),
        },
    };
    let local = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified());
    if !local {
        return None;
    }
    let addrs: Vec<SocketAddr> = if host.eq_ignore_ascii_case("localhost") {
        ("localhost", port).to_socket_addrs().ok()?.collect()
    } else {
        let ip: std::net::IpAddr = host.parse().ok()?;
        let ip = if ip.is_unspecified() {
            std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
        } else {
            ip
        };
        vec![SocketAddr::new(ip, port)]
    };
    let timeout = std::time::Duration::from_millis(500);
    Some(
        addrs
            .iter()
            .any(|a| TcpStream::connect_timeout(a, timeout).is_ok()),
    )
}

fn render(rows: &[Row]) -> String {
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    table.set_header(vec!["PROVIDER", "ALIAS", "MODEL", "STATUS"]);
    for r in rows {
        let alias = if r.default {
            format!("{} (default)", r.alias)
        } else {
            r.alias.clone()
        };
        let model = match &r.effort {
            Some(e) => format!("{}@{e}", r.model),
            None => r.model.clone(),
        };
        let mark = if r.usable { "ready" } else { "unavailable" };
        table.add_row(vec![
            r.provider.clone(),
            alias,
            model,
            format!("{mark}: {}", r.status),
        ]);
    }
    let mut out = output::trim_lines(&table.to_string());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::listening;

    #[test]
    fn only_servers_on_this_machine_are_tried() {
        assert_eq!(listening("https://api.openai.com/v1"), None);
        assert_eq!(listening("http://10.0.0.5:11434"), None);
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        assert_eq!(
            listening(&format!("http://127.0.0.1:{port}/v1")),
            Some(true)
        );
        assert_eq!(
            listening(&format!("http://u:p@localhost:{port}")),
            Some(true)
        );
        drop(server);
        assert_eq!(
            listening(&format!("http://127.0.0.1:{port}/v1")),
            Some(false)
        );
    }
}
