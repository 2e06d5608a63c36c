//! `windlass mcp`: the built-in tools as an MCP server on stdio. Logs go to
//! stderr (stdout carries the protocol).

use tracing_subscriber::EnvFilter;
use windlass_tools::builtins::StdioServer;

use crate::cli::McpArgs;
use crate::serve::ServeError;

pub async fn run(args: McpArgs) -> Result<(), ServeError> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let (builtins, policy) = crate::govern::from_file(&args.config).await?;
    StdioServer::new(builtins, Some(policy))
        .serve_stdio()
        .await
        .map_err(|e| ServeError::Io(std::io::Error::other(e)))
}
