//! Command line: `windlass serve`, `run`, `mcp` and `store prune`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "windlass",
    version,
    about = "An OpenResponses gateway with a server-side agent loop, in front of any OpenAI-compatible model server."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the Responses API over HTTP.
    Serve(ServeArgs),
    /// Run one prompt through the agent loop in-process and stream the answer.
    ///
    /// Only the answer goes to stdout; tool calls, results and the summary go
    /// to stderr (coloured on a terminal unless NO_COLOR is set).
    #[command(
        after_help = "Exit status: 0 completed, 1 failed, 2 bad arguments or settings, \
                      3 incomplete (turn limit or another limit), 130 interrupted."
    )]
    Run(RunArgs),
    /// Serve the built-in tools ([builtins] of the config) as an MCP server
    /// on stdin/stdout, for other agents; [governance] applies to each call.
    Mcp(McpArgs),
    /// Maintain the response store.
    #[command(subcommand)]
    Store(StoreCommand),
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Delete responses older than N days, with their traces and the items
    /// no newer response references (newer responses keep their history),
    /// and conversations idle for longer than N days.
    Prune(PruneArgs),
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Age in days past which responses are deleted [default: the config's
    /// `[store] retention_days`].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub older_than_days: Option<u32>,

    /// Idle days past which conversations (and their items) are deleted
    /// [default: the config's `[store] conversation_retention_days`].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub conversations_idle_days: Option<u32>,

    /// SQLite file [default: the config's `db`, else ./windlass.db].
    #[arg(long, env = "WINDLASS_DB")]
    pub db: Option<String>,

    /// TOML config file (for `db`, `[store] retention_days` and
    /// `conversation_retention_days`).
    #[arg(long, short = 'c', env = "WINDLASS_CONFIG")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// TOML config file with [builtins] (and optionally [governance]).
    #[arg(long, short = 'c', env = "WINDLASS_CONFIG")]
    pub config: PathBuf,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The prompt ("-" reads it from standard input).
    pub prompt: String,

    /// Model to use [default: the first one the upstream lists].
    #[arg(long, short = 'm', env = "WINDLASS_MODEL")]
    pub model: Option<String>,

    /// Base URL of the OpenAI-compatible upstream, e.g. http://127.0.0.1:8081/v1.
    #[arg(long = "upstream", env = "WINDLASS_UPSTREAM_URL")]
    pub upstream_url: Option<String>,

    /// API key sent to the upstream as a bearer token.
    #[arg(long, env = "WINDLASS_UPSTREAM_API_KEY", hide_env_values = true)]
    pub upstream_api_key: Option<String>,

    /// Model turns before the run stops (each may run a round of tools).
    #[arg(long, default_value_t = 10)]
    pub max_turns: u32,

    /// System prompt.
    #[arg(long)]
    pub system: Option<String>,

    /// Print only the final response object as JSON.
    #[arg(long)]
    pub json: bool,

    /// Attach an MCP server: a streamable HTTP URL or a stdio command line
    /// (split on whitespace, no shell quoting), optionally named
    /// `LABEL=...` (repeatable). Its tools run without approval.
    #[arg(long = "mcp", value_name = "[LABEL=]URL|COMMAND")]
    pub mcp: Vec<String>,

    /// TOML config file: its [builtins] are offered to the model (as the
    /// MCP server `windlass`) and its [governance] gates every call.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,

    /// Print the execution trace (a line per model turn and per tool call,
    /// secrets in arguments redacted) to stderr after the run.
    #[arg(long)]
    pub trace: bool,

    /// Ask the model once to verify its first text-only answer after it
    /// used tools (one more turn).
    #[arg(long)]
    pub completion_check: bool,

    /// The loop's task-success techniques, comma-separated:
    /// completion_check, restate_check, repeat_guard, schema_check,
    /// require_after_check, stall_stop, value_check (`all`, `none`, `-name`
    /// to turn one off).
    #[arg(long, value_name = "LIST")]
    pub techniques: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// TOML config file; flags and environment variables override it.
    #[arg(long, short = 'c', env = "WINDLASS_CONFIG")]
    pub config: Option<PathBuf>,

    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "WINDLASS_LISTEN")]
    pub listen: Option<String>,

    /// Where responses are stored: a SQLite file [default: ./windlass.db],
    /// or a Postgres URL (postgres://user@host:5432/db) shared by replicas.
    #[arg(long, env = "WINDLASS_DB")]
    pub db: Option<String>,

    /// Base URL of the OpenAI-compatible upstream, e.g. http://127.0.0.1:8081/v1.
    #[arg(long = "upstream", env = "WINDLASS_UPSTREAM_URL")]
    pub upstream_url: Option<String>,

    /// API key sent to the upstream as a bearer token.
    #[arg(long, env = "WINDLASS_UPSTREAM_API_KEY", hide_env_values = true)]
    pub upstream_api_key: Option<String>,

    /// Model used when a request names none.
    #[arg(long, env = "WINDLASS_DEFAULT_MODEL")]
    pub default_model: Option<String>,

    /// Model turns per response before it ends `incomplete` [default: 10].
    #[arg(long, env = "WINDLASS_MAX_AGENTIC_TURNS")]
    pub max_agentic_turns: Option<u32>,

    /// How responses that pause for the client (client function calls, MCP
    /// approval requests) end [default: completed, as OpenAI]. A request can
    /// choose with the `X-Windlass-Client-Tools-Status` header.
    #[arg(long, env = "WINDLASS_CLIENT_TOOLS_STATUS", value_enum)]
    pub client_tools_status: Option<ClientToolsArg>,

    /// Comma-separated API keys clients must present (none: no authentication).
    #[arg(
        long,
        env = "WINDLASS_API_KEYS",
        hide_env_values = true,
        value_delimiter = ','
    )]
    pub api_keys: Option<Vec<String>>,

    /// Log format [default: text].
    #[arg(long, env = "WINDLASS_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,

    /// Hosts, IPs or CIDRs that request-declared MCP servers may reach even
    /// though they are loopback or private (comma-separated; added to
    /// `[mcp] allow_hosts`).
    #[arg(
        long = "mcp-allow-host",
        env = "WINDLASS_MCP_ALLOW_HOSTS",
        value_delimiter = ','
    )]
    pub mcp_allow_hosts: Option<Vec<String>>,
}

#[derive(
    Debug, Clone, Copy, ValueEnum, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ClientToolsArg {
    /// Status `completed`, event `response.completed` (what OpenAI does).
    Completed,
    /// Status `requires_action`, event `response.requires_action` (opt-in).
    #[value(name = "requires-action", alias = "requires_action")]
    #[serde(alias = "requires-action")]
    RequiresAction,
}

#[derive(
    Debug, Clone, Copy, ValueEnum, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    Text,
    Json,
}
