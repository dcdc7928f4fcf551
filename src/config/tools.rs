//! The tools that act, as config.json declares them: command tools (`tools.commands`, with
//! `tools.allow`) and MCP servers (`mcp.servers`).
//!
//! ```json
//! "tools": {
//!   "allow": ["disk_usage"],
//!   "commands": {
//!     "disk_usage": {"description": "Disk usage of a folder",
//!                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
//!                                   "required": ["path"]},
//!                    "command": ["/usr/local/bin/du-json"], "timeout": 30}
//!   }
//! },
//! "mcp": {"servers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
//!                               "env": {"DEBUG": "0"}, "timeout": 30}}}
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// One `tools.commands` entry: a program the model may run (after a yes).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandSpec {
    #[serde(default)]
    pub(crate) description: String,
    /// The JSON schema of its arguments (default: an object with any properties).
    #[serde(default)]
    pub(crate) parameters: Option<Value>,
    /// The program and its arguments, run as given (never through a shell).
    pub(crate) command: Vec<String>,
    /// Seconds it may take (default 60).
    #[serde(default)]
    pub(crate) timeout: Option<f64>,
}

/// The `"mcp"` object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpSettings {
    #[serde(default)]
    pub(crate) servers: BTreeMap<String, McpServerSpec>,
    /// What `ai mcp` exposes when its command line does not say.
    #[serde(default)]
    pub(crate) serve: Option<McpServe>,
}

/// `mcp.serve`: what `ai mcp` offers an agent (the command line wins).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpServe {
    /// The knowledge bases (default: all).
    #[serde(default)]
    pub(crate) kb: Option<Vec<String>>,
    /// The models `ask` may use (default: every alias).
    #[serde(default)]
    pub(crate) models: Option<Vec<String>>,
    /// Offer `ask` (default true).
    #[serde(default)]
    pub(crate) ask: Option<bool>,
    /// Offer `list_chats` and `read_chat` (default true).
    #[serde(default)]
    pub(crate) chats: Option<bool>,
    /// Seconds one `ask` may take (default 600).
    #[serde(default)]
    pub(crate) timeout: Option<f64>,
}

/// One `mcp.servers` entry: a server spoken to over its standard input and output.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpServerSpec {
    /// The program (looked up on PATH) or its path.
    pub(crate) command: String,
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// Variables added to its environment.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// Seconds one request may take (default 30).
    #[serde(default)]
    pub(crate) timeout: Option<f64>,
    /// Its tools that run without asking even though the server does not mark them read-only.
    #[serde(default)]
    pub(crate) allow: Vec<String>,
}

/// Default `tools.commands.NAME.timeout`.
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// Default `mcp.servers.NAME.timeout`.
pub(crate) const MCP_TIMEOUT: Duration = Duration::from_secs(30);

/// A timeout in seconds as written, or the default.
pub(crate) fn seconds(written: Option<f64>, default: Duration) -> Duration {
    written
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(default)
}

fn check_timeout(t: Option<f64>, path: &str) -> Result<(), String> {
    match t {
        Some(t) if !(t > 0.0 && Duration::try_from_secs_f64(t).is_ok()) => Err(format!(
            "{path}.timeout: expected a positive number of seconds, found {t}"
        )),
        _ => Ok(()),
    }
}

/// What serde cannot say: names a tool can have, a command to run, timeouts, `allow` naming
/// commands that exist.
pub(crate) fn check(
    commands: &BTreeMap<String, CommandSpec>,
    allow: &[String],
    mcp: &McpSettings,
) -> Result<(), String> {
    for (name, c) in commands {
        let path = format!("tools.commands.{name}");
        if !valid_tool_name(name) {
            return Err(format!(
                "{path}: a tool name takes letters, digits, _ and - (at most 64)"
            ));
        }
        if c.command.first().is_none_or(|p| p.is_empty()) {
            return Err(format!(
                "{path}.command: give the program and its arguments, e.g. [\"/usr/local/bin/tool\", \"--json\"]"
            ));
        }
        if c.parameters.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(format!("{path}.parameters: expected an object"));
        }
        check_timeout(c.timeout, &path)?;
    }
    for name in allow {
        if !commands.contains_key(name) {
            return Err(format!(
                "tools.allow: {name:?} is not a command under \"tools.commands\""
            ));
        }
    }
    for (name, s) in &mcp.servers {
        let path = format!("mcp.servers.{name}");
        if !crate::config::kb::valid_name(name) {
            return Err(format!(
                "{path}: a server name takes letters, digits, - and _ (at most 64)"
            ));
        }
        if s.command.is_empty() {
            return Err(format!("{path}.command: give the program to start"));
        }
        check_timeout(s.timeout, &path)?;
    }
    Ok(())
}

/// A tool name every provider accepts: letters, digits, `_` and `-`, up to 64.
pub(crate) fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(v: Value) -> BTreeMap<String, CommandSpec> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn bad_entries_name_their_key() {
        let none = McpSettings::default();
        for (cmds, allow, want) in [
            (
                serde_json::json!({"a b": {"command": ["x"]}}),
                vec![],
                "tools.commands.a b: a tool name",
            ),
            (
                serde_json::json!({"t": {"command": []}}),
                vec![],
                "tools.commands.t.command: give the program",
            ),
            (
                serde_json::json!({"t": {"command": [""]}}),
                vec![],
                "tools.commands.t.command",
            ),
            (
                serde_json::json!({"t": {"command": ["x"], "parameters": 3}}),
                vec![],
                "tools.commands.t.parameters: expected an object",
            ),
            (
                serde_json::json!({"t": {"command": ["x"], "timeout": 0}}),
                vec![],
                "tools.commands.t.timeout: expected a positive number",
            ),
            (
                serde_json::json!({"t": {"command": ["x"]}}),
                vec!["u".to_owned()],
                "tools.allow: \"u\" is not a command",
            ),
        ] {
            let e = check(&commands(cmds), &allow, &none).unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
        let ok = commands(serde_json::json!({"t": {"command": ["x"], "timeout": 1.5}}));
        assert!(check(&ok, &["t".to_owned()], &none).is_ok());
        let mcp: McpSettings =
            serde_json::from_value(serde_json::json!({"servers": {"-x": {"command": "y"}}}))
                .unwrap();
        assert!(
            check(&ok, &[], &mcp)
                .unwrap_err()
                .starts_with("mcp.servers.-x")
        );
        let mcp: McpSettings =
            serde_json::from_value(serde_json::json!({"servers": {"x": {"command": ""}}})).unwrap();
        assert!(check(&ok, &[], &mcp).unwrap_err().contains("x.command"));
        assert_eq!(seconds(None, MCP_TIMEOUT), MCP_TIMEOUT);
        assert_eq!(seconds(Some(2.0), MCP_TIMEOUT), Duration::from_secs(2));
    }
}
