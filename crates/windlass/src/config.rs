//! The gateway's settings: defaults, then the TOML file, then flags and env.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use windlass_engine::{ClientToolsStatus, EngineConfig};
use windlass_governance::GovernanceConfig;
use windlass_providers::ChatProviderConfig;
use windlass_server::ServerConfig;
use windlass_tools::builtins::BuiltinsConfig;
use windlass_tools::McpConfig;

use crate::cli::{ClientToolsArg, LogFormat, ServeArgs};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("config file {path} is invalid: {source}")]
    Parse {
        path: String,
        source: toml::de::Error,
    },
    #[error("[mcp]: {0}")]
    Mcp(#[from] windlass_tools::ConfigError),
    #[error("[governance]: {0}")]
    Governance(#[from] windlass_governance::GovernanceConfigError),
    #[error("no upstream configured: pass --upstream URL or set WINDLASS_UPSTREAM_URL (or [upstream] url in the config file)")]
    NoUpstream,
}

/// The config file's shape. Every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<String>,
    pub db: Option<String>,
    pub log_format: Option<LogFormat>,
    #[serde(default)]
    pub upstream: UpstreamFile,
    #[serde(default, rename = "loop")]
    pub agent_loop: LoopFile,
    #[serde(default)]
    pub server: ServerFile,
    /// MCP servers and the outbound guard for request-declared ones.
    #[serde(default)]
    pub mcp: McpConfig,
    /// Built-in tools (off unless listed) and the governance gate.
    #[serde(default)]
    pub builtins: BuiltinsConfig,
    #[serde(default)]
    pub governance: GovernanceConfig,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamFile {
    pub url: Option<String>,
    pub api_key: Option<String>,
    pub default_model: Option<String>,
    pub connect_timeout_ms: Option<u64>,
    pub first_byte_timeout_ms: Option<u64>,
    pub idle_timeout_ms: Option<u64>,
    pub max_retries: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopFile {
    pub max_agentic_turns: Option<u32>,
    pub max_tool_calls: Option<u64>,
    pub tool_concurrency: Option<usize>,
    pub tool_timeout_ms: Option<u64>,
    pub max_response_time_ms: Option<u64>,
    pub client_tools_status: Option<ClientToolsArg>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    pub max_body_bytes: Option<usize>,
    #[serde(default)]
    pub api_keys: Vec<String>,
}

/// Everything `serve` needs, resolved.
pub struct Settings {
    pub listen: String,
    pub db: String,
    pub log_format: LogFormat,
    pub provider: ChatProviderConfig,
    pub engine: EngineConfig,
    pub server: ServerConfig,
    pub mcp: McpConfig,
    pub builtins: BuiltinsConfig,
    pub governance: GovernanceConfig,
}

pub fn load_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse {
        path: path.display().to_string(),
        source,
    })
}

pub fn resolve(args: ServeArgs) -> Result<Settings, ConfigError> {
    let file = match &args.config {
        Some(p) => load_file(p)?,
        None => FileConfig::default(),
    };
    let up = file.upstream;
    let lp = file.agent_loop;
    let base_url = args
        .upstream_url
        .or(up.url)
        .ok_or(ConfigError::NoUpstream)?;

    let mut provider = ChatProviderConfig::new(base_url);
    provider.api_key = args.upstream_api_key.or(up.api_key);
    if let Some(ms) = up.connect_timeout_ms {
        provider.connect_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = up.first_byte_timeout_ms {
        provider.first_byte_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = up.idle_timeout_ms {
        provider.idle_timeout = Duration::from_millis(ms);
    }
    if let Some(n) = up.max_retries {
        provider.max_retries = n;
    }

    let mut engine = EngineConfig {
        default_model: args.default_model.or(up.default_model),
        ..EngineConfig::default()
    };
    if let Some(n) = args.max_agentic_turns.or(lp.max_agentic_turns) {
        engine.max_agentic_turns = n;
    }
    if let Some(n) = lp.max_tool_calls {
        engine.max_tool_calls = n;
    }
    if let Some(n) = lp.tool_concurrency {
        engine.tool_concurrency = n;
    }
    if let Some(ms) = lp.tool_timeout_ms {
        engine.tool_timeout = Duration::from_millis(ms);
    }
    engine.max_response_time = lp.max_response_time_ms.map(Duration::from_millis);
    engine.client_tools_status = match args.client_tools_status.or(lp.client_tools_status) {
        Some(ClientToolsArg::Completed) => ClientToolsStatus::Completed,
        _ => ClientToolsStatus::RequiresAction,
    };

    let mut server = ServerConfig::default();
    if let Some(n) = file.server.max_body_bytes {
        server.max_body_bytes = n;
    }
    // An empty `--api-keys ""` / `WINDLASS_API_KEYS=` (an unset variable in
    // a compose file) must not silently turn the file's authentication off.
    let non_empty =
        |keys: Vec<String>| -> Vec<String> { keys.into_iter().filter(|k| !k.is_empty()).collect() };
    server.api_keys = match args.api_keys.map(non_empty) {
        Some(keys) if !keys.is_empty() => keys,
        _ => non_empty(file.server.api_keys),
    };

    let mut mcp = file.mcp;
    mcp.allow_hosts.extend(
        args.mcp_allow_hosts
            .into_iter()
            .flatten()
            .filter(|h| !h.is_empty()),
    );
    mcp.validate()?;
    file.governance.validate()?;

    Ok(Settings {
        listen: args
            .listen
            .or(file.listen)
            .unwrap_or_else(|| "127.0.0.1:8080".to_owned()),
        db: args
            .db
            .or(file.db)
            .unwrap_or_else(|| "./windlass.db".to_owned()),
        log_format: args
            .log_format
            .or(file.log_format)
            .unwrap_or(LogFormat::Text),
        provider,
        engine,
        server,
        mcp,
        builtins: file.builtins,
        governance: file.governance,
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn resolve_with(extra: &[&str]) -> Settings {
        let dir = std::env::temp_dir().join(format!("windlass-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("windlass.toml");
        std::fs::write(&file, "[server]\napi_keys = [\"sk-file\"]\n").unwrap();
        let mut argv = vec![
            "windlass",
            "serve",
            "--upstream",
            "http://127.0.0.1:1/v1",
            "--config",
            file.to_str().unwrap(),
        ];
        argv.extend_from_slice(extra);
        let Command::Serve(args) = Cli::try_parse_from(argv).unwrap().command else {
            panic!("not serve");
        };
        resolve(args).unwrap()
    }

    #[test]
    fn an_empty_api_keys_value_keeps_the_file_keys() {
        assert_eq!(resolve_with(&[]).server.api_keys, ["sk-file"]);
        assert_eq!(
            resolve_with(&["--api-keys", ""]).server.api_keys,
            ["sk-file"]
        );
        assert_eq!(
            resolve_with(&["--api-keys", "sk-a,,sk-b"]).server.api_keys,
            ["sk-a", "sk-b"]
        );
    }
}
