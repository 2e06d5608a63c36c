//! The gateway's settings: defaults, then the TOML file, then the
//! environment (`WINDLASS_SECTION__KEY`, see `config_env.rs`), then flags
//! and their own variables.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use windlass_auth::OidcConfig;
use windlass_engine::{ClientToolsStatus, EngineConfig};
use windlass_governance::GovernanceConfig;
use windlass_providers::ChatProviderConfig;
use windlass_server::fd_caps::{self, FdCaps};
use windlass_server::{ServerConfig, ServerFile, SettingsError};
use windlass_store::{PgOptions, SqliteOptions};
use windlass_tools::builtins::BuiltinsConfig;
use windlass_tools::hosted::code_interpreter::CodeInterpreterConfig;
use windlass_tools::hosted::web_search::WebSearchConfig;

use crate::hosted::HostedFile;
use windlass_tools::McpConfig;

use crate::otlp::{OtlpFile, OtlpSettings};
use crate::resources::{FilesFile, RetrievalFile};
use crate::upstreams::{apply_timeouts, ResolvedUpstream, UpstreamEntry, UpstreamError};

use crate::cli::{ClientToolsArg, LogFormat, ServeArgs};
use crate::config_env::EnvError;
use crate::config_schema::Schema;

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
    #[error(transparent)]
    Server(#[from] SettingsError),
    #[error("[mcp]: {0}")]
    Mcp(#[from] windlass_tools::ConfigError),
    #[error("[governance]: {0}")]
    Governance(#[from] windlass_governance::GovernanceConfigError),
    #[error("no upstream configured: pass --upstream URL or set WINDLASS_UPSTREAM_URL or OPENAI_BASE_URL (or [[upstreams]] in the config file)")]
    NoUpstream,
    #[error(transparent)]
    Env(#[from] EnvError),
    #[error("config from the environment is invalid: {0}")]
    EnvParse(toml::de::Error),
    #[error(transparent)]
    Upstreams(#[from] UpstreamError),
    #[error("[store] retention_days must be at least 1 (leave it out to keep everything)")]
    Retention,
    #[error("[loop] techniques: {0}")]
    Techniques(#[from] windlass_engine::UnknownTechnique),
    #[error("[store] conversation_retention_days must be at least 1 (leave it out to keep every conversation)")]
    ConversationRetention,
}

/// Zero days would delete every response as soon as it is stored.
pub fn check_retention(days: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match days {
        Some(0) => Err(ConfigError::Retention),
        other => Ok(other),
    }
}

/// The same bound for conversations.
pub fn check_conversation_retention(days: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match days {
        Some(0) => Err(ConfigError::ConversationRetention),
        other => Ok(other),
    }
}

/// The config file's shape. Every key is optional.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<String>,
    pub db: Option<String>,
    pub log_format: Option<LogFormat>,
    /// The one-upstream shorthand (same as `--upstream`).
    #[serde(default)]
    pub upstream: UpstreamFile,
    /// Every upstream, routed by model (see `upstreams.rs`).
    #[serde(default)]
    pub upstreams: Vec<UpstreamEntry>,
    #[serde(default, rename = "loop")]
    pub agent_loop: LoopFile,
    #[serde(default)]
    pub server: ServerFile,
    #[serde(default)]
    pub store: StoreFile,
    /// MCP servers and the outbound guard for request-declared ones.
    #[serde(default)]
    pub mcp: McpConfig,
    /// Built-in tools (off unless listed) and the governance gate.
    #[serde(default)]
    pub builtins: BuiltinsConfig,
    #[serde(default)]
    pub governance: GovernanceConfig,
    /// Trace export over OTLP/HTTP (off unless an endpoint is set).
    #[serde(default)]
    pub otlp: OtlpFile,
    /// Signed webhooks when background responses end (off unless a url is set).
    #[serde(default)]
    pub webhooks: crate::webhooks::WebhooksFile,
    /// Bearer JWTs as keys (`[auth.oidc]`).
    #[serde(default)]
    pub auth: AuthFile,
    /// OpenAI's `code_interpreter` tool: Python in the sandbox (off unless
    /// enabled).
    #[serde(default)]
    pub code_interpreter: CodeInterpreterConfig,
    /// The search backend serving the `web_search` hosted tool (off unless
    /// set).
    #[serde(default)]
    pub web_search: Option<WebSearchConfig>,
    /// Hosted tool types a request may carry although nothing serves them.
    #[serde(default)]
    pub hosted: HostedFile,
    /// The Files API and container uploads (see `resources.rs`).
    #[serde(default)]
    pub files: FilesFile,
    /// Vector stores: the embedding model and the ingestion worker.
    #[serde(default)]
    pub retrieval: RetrievalFile,
}

/// `[auth]`: identities besides the static keys.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthFile {
    /// Bearer JWTs of one OIDC issuer, verified against its JWKS.
    pub oidc: Option<OidcConfig>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamFile {
    pub url: Option<String>,
    pub api_key: Option<String>,
    pub default_model: Option<String>,
    pub connect_timeout_ms: Option<u64>,
    pub first_byte_timeout_ms: Option<u64>,
    pub idle_timeout_ms: Option<u64>,
    pub max_retries: Option<u32>,
    /// How the upstream counts input tokens (see `[[upstreams]]`).
    pub tokenize: Option<crate::upstreams::TokenizeArg>,
    /// The models' context length in tokens, when the upstream does not say.
    pub context_length: Option<u64>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopFile {
    pub max_agentic_turns: Option<u32>,
    pub max_tool_calls: Option<u64>,
    pub tool_concurrency: Option<usize>,
    pub tool_timeout_ms: Option<u64>,
    pub max_response_time_ms: Option<u64>,
    pub client_tools_status: Option<ClientToolsArg>,
    /// Tool calls one model turn may make (the rest get an error output).
    pub max_tool_calls_per_turn: Option<u32>,
    /// Consecutive failed tool calls that end a response `incomplete`.
    pub tool_error_threshold: Option<u32>,
    /// Ask the model to verify its first text-only answer after tools.
    pub completion_check: Option<bool>,
    /// The loop's task-success techniques, by name: `completion_check`,
    /// `restate_check`, `repeat_guard`, `schema_check`,
    /// `require_after_check`, `stall_stop`, `value_check`, or `all` /
    /// `none` (unset: `stall_stop` and `value_check`; a request changes them
    /// with `metadata.windlass_techniques`).
    pub techniques: Option<Vec<String>>,
}

/// `[store]`: the SQLite file's bounds and the Postgres pool.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreFile {
    pub wal_limit_bytes: Option<u64>,
    /// SQLite: WAL size past which a checkpoint folds it into the database
    /// (default 64 MiB, as `wal_limit_bytes`; never above it; 0: after
    /// every commit, at most four times a second).
    pub checkpoint_bytes: Option<u64>,
    pub size_log_interval_secs: Option<u64>,
    /// Responses older than this many days are deleted by `serve` (hourly)
    /// and by `windlass store prune`; unset keeps everything.
    pub retention_days: Option<u32>,
    /// Conversations without activity (creation, an appended item, a
    /// metadata update) for this many days are deleted by `serve` (hourly)
    /// and by `windlass store prune`; unset keeps them.
    pub conversation_retention_days: Option<u32>,
    /// Connections this process opens to Postgres at most.
    pub pg_max_connections: Option<usize>,
    /// SQLite: saves are committed by one writer thread and those queued
    /// behind it share one commit (less CPU per stored request).
    pub group_commit: Option<bool>,
}

/// Everything `serve` needs, resolved.
pub struct Settings {
    pub listen: String,
    pub db: String,
    pub log_format: LogFormat,
    pub upstreams: Vec<ResolvedUpstream>,
    pub engine: EngineConfig,
    pub server: ServerConfig,
    pub store: SqliteOptions,
    /// `[store] retention_days`, checked to be positive.
    pub retention_days: Option<u32>,
    /// `[store] conversation_retention_days`, checked to be positive.
    pub conversation_retention_days: Option<u32>,
    pub pg: PgOptions,
    pub mcp: McpConfig,
    pub builtins: BuiltinsConfig,
    pub governance: GovernanceConfig,
    /// `[webhooks]` (resolved by `serve`, which reads the secret).
    pub webhooks: crate::webhooks::WebhooksFile,
    /// Where traces are exported; `None`: not exported.
    pub otlp: Option<OtlpSettings>,
    /// Connection caps derived from the open-file limit (for the start-up
    /// log); `None`: both configured, or the limit is unknown.
    pub fd_caps: Option<FdCaps>,
    /// `[auth.oidc]`: bearer JWTs accepted as keys.
    pub oidc: Option<OidcConfig>,
    pub code_interpreter: CodeInterpreterConfig,
    /// `[web_search]`: the backend of the `web_search` hosted tool.
    pub web_search: Option<WebSearchConfig>,
    /// `[hosted] shell` / `apply_patch` = "server": run here, not by the client.
    pub server_run: Option<windlass_tools::hosted::server_run::ServerRunConfig>,
    pub files: FilesFile,
    pub retrieval: RetrievalFile,
}

/// The process environment, read once (tests pass their own).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: Vec<(String, String)>,
}

impl Environment {
    /// The process's variables (those that are valid UTF-8).
    pub fn current() -> Self {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Environment { vars }
    }

    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let vars = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Environment { vars }
    }

    /// A variable's value; an empty one counts as unset.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// Every setting the config file accepts, from the structs below.
pub fn file_schema() -> Schema {
    Schema::of::<FileConfig>()
}

/// The config file alone, as written (no environment).
pub fn load_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = read(path)?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse {
        path: path.display().to_string(),
        source,
    })
}

/// The config file (if any) with the environment's `WINDLASS_A__B`
/// settings applied over it.
pub fn load(path: Option<&Path>, env: &Environment) -> Result<FileConfig, ConfigError> {
    let mut table = match path {
        Some(p) => {
            toml::from_str::<toml::Table>(&read(p)?).map_err(|source| ConfigError::Parse {
                path: p.display().to_string(),
                source,
            })?
        }
        None => toml::Table::new(),
    };
    let applied = crate::config_env::apply(&mut table, env.vars.iter().cloned(), &file_schema())?;
    if applied == 0 {
        // Keeps the parser's line numbers in errors.
        return match path {
            Some(p) => load_file(p),
            None => Ok(FileConfig::default()),
        };
    }
    FileConfig::deserialize(toml::Value::Table(table)).map_err(ConfigError::EnvParse)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })
}

pub fn resolve(args: ServeArgs) -> Result<Settings, ConfigError> {
    resolve_in(args, &Environment::current())
}

/// `resolve` against a given environment.
pub fn resolve_in(args: ServeArgs, env: &Environment) -> Result<Settings, ConfigError> {
    let file = load(args.config.as_deref(), env)?;
    let up = file.upstream;
    let lp = file.agent_loop;
    // The flag (or `[upstream]`) is the one-upstream shorthand and, being
    // a flag, wins over the file's table. OpenAI's own variables are the
    // last resort for both the URL and the key, as in OpenAI's SDKs.
    let single = args.upstream_url.or(up.url).or_else(|| {
        file.upstreams
            .is_empty()
            .then(|| env.get("OPENAI_BASE_URL").map(str::to_owned))
            .flatten()
    });
    let upstreams = match single {
        Some(base_url) => {
            let mut provider = ChatProviderConfig::new(base_url);
            provider.api_key = args
                .upstream_api_key
                .or(up.api_key)
                .or_else(|| env.get("OPENAI_API_KEY").map(str::to_owned));
            apply_timeouts(
                &mut provider,
                up.connect_timeout_ms,
                up.first_byte_timeout_ms,
                up.idle_timeout_ms,
                up.max_retries,
            );
            crate::upstreams::apply_tokens(&mut provider, up.tokenize, up.context_length);
            vec![crate::upstreams::single(provider)]
        }
        None if !file.upstreams.is_empty() => file
            .upstreams
            .into_iter()
            .map(UpstreamEntry::resolve)
            .collect::<Result<_, _>>()?,
        None => return Err(ConfigError::NoUpstream),
    };

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
    engine.max_tool_calls_per_turn = lp.max_tool_calls_per_turn;
    engine.tool_error_threshold = lp.tool_error_threshold;
    engine.completion_check = lp.completion_check.unwrap_or(false);
    if let Some(names) = &lp.techniques {
        engine.techniques = windlass_engine::Techniques::none().apply(&names.join(","))?;
    }
    engine.drop_unserved_hosted = file.hosted.drop_list();
    engine.client_tools_status = match args.client_tools_status.or(lp.client_tools_status) {
        Some(ClientToolsArg::RequiresAction) => ClientToolsStatus::RequiresAction,
        Some(ClientToolsArg::Completed) | None => ClientToolsStatus::Completed,
    };

    // Flag or environment keys replace the file's list; a blank one (an
    // unset variable in `"$A,$B"`) refuses to start rather than turning
    // authentication off.
    let explicit_caps = (
        file.server.max_connections.is_some(),
        file.server.hard_max_connections.is_some(),
    );
    let mut server = file.server.resolve(args.api_keys)?;
    let mut store = SqliteOptions::default();
    if let Some(n) = file.store.wal_limit_bytes {
        store.wal_limit_bytes = n;
    }
    if let Some(n) = file.store.checkpoint_bytes {
        store.checkpoint_bytes = n;
    }
    if let Some(secs) = file.store.size_log_interval_secs {
        store.size_log_interval = Duration::from_secs(secs);
    }
    let retention_days = check_retention(file.store.retention_days)?;
    let conversation_retention_days =
        check_conversation_retention(file.store.conversation_retention_days)?;
    let mut pg = PgOptions::default();
    if let Some(on) = file.store.group_commit {
        store.group_commit = on;
    }
    if let Some(n) = file.store.pg_max_connections {
        pg.max_connections = n;
    }

    let mut mcp = file.mcp;
    mcp.allow_hosts.extend(
        args.mcp_allow_hosts
            .into_iter()
            .flatten()
            .filter(|h| !h.is_empty()),
    );
    mcp.validate()?;
    file.governance.validate()?;

    let db = args
        .db
        .or(file.db)
        .unwrap_or_else(|| "./windlass.db".to_owned());
    let fd_caps = follow_fd_limit(&mut server, explicit_caps, &db, &pg, &mcp);
    Ok(Settings {
        listen: args
            .listen
            .or(file.listen)
            .unwrap_or_else(|| "127.0.0.1:8080".to_owned()),
        db,
        log_format: args
            .log_format
            .or(file.log_format)
            .unwrap_or(LogFormat::Text),
        upstreams,
        engine,
        server,
        store,
        retention_days,
        conversation_retention_days,
        pg,
        mcp,
        server_run: file.hosted.server_run(&file.builtins.shell),
        builtins: file.builtins,
        governance: file.governance,
        webhooks: file.webhooks,
        otlp: file.otlp.resolve(|name| std::env::var(name).ok()),
        fd_caps,
        oidc: file.auth.oidc,
        code_interpreter: file.code_interpreter,
        web_search: file.web_search,
        files: file.files,
        retrieval: file.retrieval,
    })
}

/// The connection caps the operator left unset, from the open-file limit
/// with headroom for the store's connections and the MCP servers (see
/// `windlass_server::fd_caps`).
fn follow_fd_limit(
    server: &mut ServerConfig,
    (explicit_max, explicit_hard): (bool, bool),
    db: &str,
    pg: &PgOptions,
    mcp: &McpConfig,
) -> Option<FdCaps> {
    // Postgres: the pool and the cancel bus's connection; SQLite: the
    // writer, the readers, the WAL and its index, the checkpointer.
    let store = if windlass_store::is_postgres_url(db) {
        pg.max_connections as u64 + 1
    } else {
        16
    };
    // A child's three pipes or an HTTP session's sockets, per server.
    let reserved = store + 4 * mcp.servers.len() as u64;
    fd_caps::apply(
        &mut server.connections,
        explicit_max,
        explicit_hard,
        reserved,
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn resolve_with(extra: &[&str]) -> Settings {
        try_resolve(extra).unwrap()
    }

    fn try_resolve(extra: &[&str]) -> Result<Settings, ConfigError> {
        try_resolve_file("keys", "[server]\napi_keys = [\"sk-file\"]\n", extra)
    }

    fn resolve_file(name: &str, toml: &str, extra: &[&str]) -> Settings {
        try_resolve_file(name, toml, extra).unwrap()
    }

    fn try_resolve_file(name: &str, toml: &str, extra: &[&str]) -> Result<Settings, ConfigError> {
        // Tests run in parallel and several share a name: each call gets its own
        // directory, so no test reads a file another is halfway through writing.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pid = std::process::id();
        let dir = std::env::temp_dir().join(format!("windlass-cfg-{pid}-{name}-{call}"));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("windlass.toml");
        std::fs::write(&file, toml).unwrap();
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
        resolve_in(args, &Environment::default())
    }

    #[test]
    fn client_tools_status_is_completed_unless_opted_in() {
        use windlass_engine::ClientToolsStatus::{Completed, RequiresAction};
        assert_eq!(resolve_with(&[]).engine.client_tools_status, Completed);
        let flag = ["--client-tools-status", "requires-action"];
        assert_eq!(
            resolve_with(&flag).engine.client_tools_status,
            RequiresAction
        );
        let toml = "[loop]\nclient_tools_status = \"requires_action\"\n";
        assert_eq!(
            resolve_file("cts", toml, &[]).engine.client_tools_status,
            RequiresAction
        );
        let back = ["--client-tools-status", "completed"];
        assert_eq!(
            resolve_file("cts-back", toml, &back)
                .engine
                .client_tools_status,
            Completed
        );
    }

    #[test]
    fn retention_days_are_read_and_zero_is_refused() {
        assert_eq!(resolve_with(&[]).retention_days, None);
        let kept = resolve_file("ret", "[store]\nretention_days = 30\n", &[]);
        assert_eq!(kept.retention_days, Some(30));
        let zero = try_resolve_file("ret0", "[store]\nretention_days = 0\n", &[]);
        assert!(matches!(zero, Err(ConfigError::Retention)));
    }

    #[test]
    fn blank_api_keys_refuse_to_start() {
        assert_eq!(resolve_with(&[]).server.api_keys, ["sk-file"]);
        for blank in ["", ",", "sk-a,,sk-b", " "] {
            let err = try_resolve(&["--api-keys", blank]).err();
            assert!(matches!(err, Some(ConfigError::Server(_))), "{blank:?}");
        }
        let ring = resolve_with(&["--api-keys", "sk-a, sk-b"])
            .server
            .key_ring()
            .unwrap();
        assert_eq!(ring.find("sk-b").unwrap().name, "key-2");
    }

    fn serve_args(argv: &[&str]) -> ServeArgs {
        let mut full = vec!["windlass", "serve"];
        full.extend_from_slice(argv);
        let Command::Serve(args) = Cli::try_parse_from(full).unwrap().command else {
            panic!("not serve");
        };
        args
    }

    fn single_provider(s: &Settings) -> &ChatProviderConfig {
        assert_eq!(s.upstreams.len(), 1);
        &s.upstreams[0].provider
    }

    #[test]
    fn openai_variables_are_the_last_resort_for_url_and_key() {
        let openai = Environment::from_pairs([
            ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            ("OPENAI_API_KEY", "sk-openai"),
        ]);
        let s = resolve_in(serve_args(&[]), &openai).unwrap();
        let p = single_provider(&s);
        assert_eq!(p.base_url, "https://api.openai.com/v1");
        assert_eq!(p.api_key.as_deref(), Some("sk-openai"));
        // --upstream wins over OPENAI_BASE_URL; the key still falls back.
        let s = resolve_in(
            serve_args(&["--upstream", "http://127.0.0.1:1/v1"]),
            &openai,
        )
        .unwrap();
        let p = single_provider(&s);
        assert_eq!(p.base_url, "http://127.0.0.1:1/v1");
        assert_eq!(p.api_key.as_deref(), Some("sk-openai"));
        // The flag's key wins over OPENAI_API_KEY.
        let args = serve_args(&["--upstream-api-key", "sk-flag"]);
        let s = resolve_in(args, &openai).unwrap();
        assert_eq!(single_provider(&s).api_key.as_deref(), Some("sk-flag"));
        // Nothing at all: the error names every way to set it.
        let err = resolve_in(serve_args(&[]), &Environment::default()).err();
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("OPENAI_BASE_URL"), "{text}");
        // An empty variable counts as unset.
        let empty = Environment::from_pairs([("OPENAI_BASE_URL", "")]);
        assert!(matches!(
            resolve_in(serve_args(&[]), &empty),
            Err(ConfigError::NoUpstream)
        ));
    }

    #[test]
    fn openai_base_url_does_not_override_a_table_of_upstreams() {
        let toml = "[[upstreams]]\nname = \"local\"\nurl = \"http://127.0.0.1:2/v1\"\n";
        let dir = std::env::temp_dir().join(format!("windlass-cfg-{}-table", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("windlass.toml");
        std::fs::write(&path, toml).unwrap();
        let env = Environment::from_pairs([
            ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            ("OPENAI_API_KEY", "sk-openai"),
        ]);
        let args = serve_args(&["--config", path.to_str().unwrap()]);
        let s = resolve_in(args, &env).unwrap();
        assert_eq!(s.upstreams[0].name, "local");
        assert_eq!(s.upstreams[0].provider.base_url, "http://127.0.0.1:2/v1");
        // OpenAI's key is not sent to an upstream that did not ask for it.
        assert_eq!(s.upstreams[0].provider.api_key, None);
    }

    #[test]
    fn loop_limits_come_from_the_loop_section() {
        let toml = "[loop]\nmax_tool_calls_per_turn = 4\ntool_error_threshold = 3\ncompletion_check = true\n";
        let engine = resolve_file("limits", toml, &[]).engine;
        assert_eq!(engine.max_tool_calls_per_turn, Some(4));
        assert_eq!(engine.tool_error_threshold, Some(3));
        assert!(engine.completion_check);
        let defaults = resolve_with(&[]).engine;
        assert_eq!(defaults.max_tool_calls_per_turn, None);
        assert_eq!(defaults.tool_error_threshold, None);
        assert!(!defaults.completion_check);
        let toml = "[loop]\ntechniques = [\"repeat_guard\", \"restate_check\"]\n";
        let engine = resolve_file("techniques", toml, &[]).engine;
        assert!(engine.techniques.repeat_guard && engine.techniques.restate_check);
        assert!(!engine.techniques.schema_check);
    }
}
