//! Operator configuration of MCP servers: the `[mcp]` table of the gateway's
//! TOML file.
//!
//! ```toml
//! [mcp]
//! call_timeout_secs = 60
//! allow_hosts = ["127.0.0.1", "10.0.0.0/8", "localhost", "mcp.internal"]
//!
//! [[mcp.servers]]
//! label = "calc"
//! url = "http://127.0.0.1:8091/mcp"
//! headers = { "X-Key" = "..." }
//! bearer_token_env = "CALC_TOKEN"
//! require_approval = "never"
//!
//! [[mcp.servers]]
//! label = "time"
//! command = "python"
//! args = ["server.py", "--stdio"]
//! env = { TZ = "UTC" }
//! cwd = "/tmp"
//! ```

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use windlass_protocol::McpRequireApproval;

use crate::client::ListLimits;
use crate::ssrf::AllowList;

/// Default per-call timeout: long enough for real tools (a search, a build
/// step) while still bounding a hung server.
pub const DEFAULT_CALL_TIMEOUT_SECS: u64 = 60;
/// How long a session with a request-declared server is kept without use, so
/// a `previous_response_id` chain does not re-initialize for every call.
pub const DEFAULT_SESSION_IDLE_SECS: u64 = 300;
/// Tools and bytes a request-declared server may list (all are sent to the
/// model, so more would be useless as well as costly).
pub const DEFAULT_MAX_LISTED_TOOLS: usize = 1000;
pub const DEFAULT_MAX_LISTED_BYTES: usize = 4 * 1024 * 1024;

/// The `[mcp]` table.
#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Timeout of one MCP call (connect, list or call), in seconds.
    #[serde(default = "default_call_timeout")]
    pub call_timeout_secs: u64,
    /// Idle expiry of cached sessions with request-declared servers.
    #[serde(default = "default_session_idle")]
    pub session_idle_secs: u64,
    /// Most tools a request-declared server may list.
    #[serde(default = "default_max_listed_tools")]
    pub max_listed_tools: usize,
    /// Most bytes (as JSON) a request-declared server's tool list may hold.
    #[serde(default = "default_max_listed_bytes")]
    pub max_listed_bytes: usize,
    /// Outbound-guard exceptions for request-declared servers: host names
    /// (exact, case-insensitive), IP addresses or CIDRs.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Servers the operator trusts; requests refer to them by label.
    #[serde(default)]
    pub servers: Vec<McpServerConfig>,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            call_timeout_secs: DEFAULT_CALL_TIMEOUT_SECS,
            session_idle_secs: DEFAULT_SESSION_IDLE_SECS,
            max_listed_tools: DEFAULT_MAX_LISTED_TOOLS,
            max_listed_bytes: DEFAULT_MAX_LISTED_BYTES,
            allow_hosts: Vec::new(),
            servers: Vec::new(),
        }
    }
}

// Servers carry tokens and headers, so Debug shows labels only.
impl fmt::Debug for McpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpConfig")
            .field("call_timeout_secs", &self.call_timeout_secs)
            .field("session_idle_secs", &self.session_idle_secs)
            .field("max_listed_tools", &self.max_listed_tools)
            .field("max_listed_bytes", &self.max_listed_bytes)
            .field("allow_hosts", &self.allow_hosts)
            .field("servers", &self.servers)
            .finish()
    }
}

fn default_call_timeout() -> u64 {
    DEFAULT_CALL_TIMEOUT_SECS
}

fn default_session_idle() -> u64 {
    DEFAULT_SESSION_IDLE_SECS
}

fn default_max_listed_tools() -> usize {
    DEFAULT_MAX_LISTED_TOOLS
}

fn default_max_listed_bytes() -> usize {
    DEFAULT_MAX_LISTED_BYTES
}

/// One `[[mcp.servers]]` entry: either `url` (streamable HTTP) or `command`
/// (a child process speaking MCP on stdio).
#[derive(Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub label: String,
    #[serde(default)]
    pub url: Option<String>,
    /// Extra HTTP headers sent with every request. Secret.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Sent as `Authorization: Bearer <token>`. Secret.
    #[serde(default)]
    pub bearer_token: Option<String>,
    /// Name of an environment variable holding the bearer token, so the
    /// secret need not sit in the config file.
    #[serde(default)]
    pub bearer_token_env: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment of the child process. May hold secrets.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Approval policy for requests that use this server without saying.
    #[serde(default)]
    pub require_approval: Option<McpRequireApproval>,
}

impl fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerConfig")
            .field("label", &self.label)
            .field("url", &self.url)
            .field(
                "headers",
                &format_args!("[{} redacted]", self.headers.len()),
            )
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "[redacted]"),
            )
            .field("bearer_token_env", &self.bearer_token_env)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &format_args!("[{} redacted]", self.env.len()))
            .field("cwd", &self.cwd)
            .field("require_approval", &self.require_approval)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("mcp.call_timeout_secs must be at least 1")]
    ZeroTimeout,
    #[error("mcp.session_idle_secs must be at least 1")]
    ZeroIdle,
    #[error("mcp.allow_hosts: {0}")]
    AllowHost(String),
    #[error("mcp server label {0:?} must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")]
    BadLabel(String),
    #[error("mcp server label '{0}' is configured twice")]
    DuplicateLabel(String),
    #[error("mcp server label 'windlass' is reserved for the built-in tools")]
    ReservedLabel,
    #[error("mcp server '{0}' needs exactly one of `url` (streamable HTTP) or `command` (stdio)")]
    TransportChoice(String),
    #[error("mcp server '{label}': url {url:?} is not an http or https URL")]
    BadUrl { label: String, url: String },
    #[error("mcp server '{label}': header {name:?} is not a valid HTTP header name or value")]
    BadHeader { label: String, name: String },
    #[error("mcp server '{label}': `{field}` only applies to {applies_to} servers")]
    MisplacedField {
        label: String,
        field: &'static str,
        applies_to: &'static str,
    },
    #[error("mcp server '{0}': set `bearer_token` or `bearer_token_env`, not both")]
    TwoTokens(String),
    #[error("mcp server '{label}': environment variable {var} (bearer_token_env) is not set")]
    MissingTokenEnv { label: String, var: String },
}

/// How to reach a configured server, resolved from its entry.
#[derive(Clone)]
pub(crate) enum ServerTransport {
    Http {
        url: String,
        /// Headers including `Authorization` built from the bearer token.
        headers: Vec<(String, String)>,
    },
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
}

impl McpConfig {
    /// Checks the whole table; call it when loading the gateway config so a
    /// typo stops startup with a clear message.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.call_timeout_secs == 0 {
            return Err(ConfigError::ZeroTimeout);
        }
        if self.session_idle_secs == 0 {
            return Err(ConfigError::ZeroIdle);
        }
        self.allow_list()?;
        let mut seen = HashSet::new();
        for server in &self.servers {
            if server.label == crate::builtins::BUILTIN_LABEL {
                return Err(ConfigError::ReservedLabel);
            }
            server.transport()?;
            if !seen.insert(server.label.as_str()) {
                return Err(ConfigError::DuplicateLabel(server.label.clone()));
            }
        }
        Ok(())
    }

    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout_secs.max(1))
    }

    pub fn list_limits(&self) -> ListLimits {
        ListLimits {
            max_tools: self.max_listed_tools,
            max_bytes: self.max_listed_bytes,
        }
    }

    pub fn session_idle(&self) -> Duration {
        Duration::from_secs(self.session_idle_secs.max(1))
    }

    pub fn allow_list(&self) -> Result<AllowList, ConfigError> {
        AllowList::parse(&self.allow_hosts).map_err(ConfigError::AllowHost)
    }
}

/// Labels name servers in requests and in tool names, so they stay short
/// and plain.
pub fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 64
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl McpServerConfig {
    /// Validates the entry and resolves how to reach the server (reading
    /// `bearer_token_env` now, so a missing secret is reported at startup).
    pub(crate) fn transport(&self) -> Result<ServerTransport, ConfigError> {
        let label = &self.label;
        if !valid_label(label) {
            return Err(ConfigError::BadLabel(label.clone()));
        }
        let misplaced = |field, applies_to| ConfigError::MisplacedField {
            label: label.clone(),
            field,
            applies_to,
        };
        match (&self.url, &self.command) {
            (Some(url), None) => {
                if !self.args.is_empty() {
                    return Err(misplaced("args", "stdio"));
                }
                if !self.env.is_empty() {
                    return Err(misplaced("env", "stdio"));
                }
                if self.cwd.is_some() {
                    return Err(misplaced("cwd", "stdio"));
                }
                let parsed = reqwest::Url::parse(url).map_err(|_| ConfigError::BadUrl {
                    label: label.clone(),
                    url: url.clone(),
                })?;
                if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
                    return Err(ConfigError::BadUrl {
                        label: label.clone(),
                        url: url.clone(),
                    });
                }
                let mut headers = Vec::with_capacity(self.headers.len() + 1);
                for (name, value) in &self.headers {
                    check_header(label, name, value)?;
                    headers.push((name.clone(), value.clone()));
                }
                if let Some(token) = self.bearer_token()? {
                    let value = format!("Bearer {token}");
                    check_header(label, "Authorization", &value)?;
                    headers.push(("Authorization".to_owned(), value));
                }
                Ok(ServerTransport::Http {
                    url: url.clone(),
                    headers,
                })
            }
            (None, Some(command)) if !command.is_empty() => {
                if !self.headers.is_empty() {
                    return Err(misplaced("headers", "HTTP"));
                }
                if self.bearer_token.is_some() || self.bearer_token_env.is_some() {
                    return Err(misplaced("bearer_token", "HTTP"));
                }
                Ok(ServerTransport::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: self
                        .env
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    cwd: self.cwd.clone(),
                })
            }
            _ => Err(ConfigError::TransportChoice(label.clone())),
        }
    }

    fn bearer_token(&self) -> Result<Option<String>, ConfigError> {
        match (&self.bearer_token, &self.bearer_token_env) {
            (Some(_), Some(_)) => Err(ConfigError::TwoTokens(self.label.clone())),
            (Some(token), None) => Ok(Some(token.clone())),
            (None, Some(var)) => match std::env::var(var) {
                Ok(token) if !token.is_empty() => Ok(Some(token)),
                _ => Err(ConfigError::MissingTokenEnv {
                    label: self.label.clone(),
                    var: var.clone(),
                }),
            },
            (None, None) => Ok(None),
        }
    }
}

/// The same check the HTTP transport applies when it sends the header.
fn check_header(label: &str, name: &str, value: &str) -> Result<(), ConfigError> {
    crate::transport::header_map(&[(name.to_owned(), value.to_owned())])
        .map(|_| ())
        .map_err(|_| ConfigError::BadHeader {
            label: label.to_owned(),
            name: name.to_owned(),
        })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
