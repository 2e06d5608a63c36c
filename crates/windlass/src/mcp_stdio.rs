//! `windlass mcp`: the built-in tools as an MCP server on stdio. Logs go to
//! stderr (stdout carries the protocol).

use std::sync::Arc;

use tracing_subscriber::EnvFilter;
use windlass_engine::Policy;
use windlass_governance::Governance;
use windlass_tools::builtins::{Builtins, StdioServer};

use crate::cli::McpArgs;
use crate::config::load_file;
use crate::serve::ServeError;

pub async fn run(args: McpArgs) -> Result<(), ServeError> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let file = load_file(&args.config)?;
    let builtins = Arc::new(
        Builtins::start(file.builtins)
            .await
            .map_err(crate::govern::GovernError::from)?,
    );
    let (work_dir, roots) = builtins.workspace();
    let gate = Governance::new(file.governance)
        .map_err(crate::govern::GovernError::from)?
        .with_workspace(work_dir, roots);
    let policy: Arc<dyn Policy> = Arc::new(gate);
    StdioServer::new(builtins, Some(policy))
        .serve_stdio()
        .await
        .map_err(|e| ServeError::Io(std::io::Error::other(e)))
}
