//! Built-in tools and governance for `windlass serve`: the MCP hub with the
//! built-ins under the reserved label `windlass`, and the governance gate
//! as the engine's policy.

use std::sync::Arc;

use windlass_engine::{GovernanceCounters, McpHub, Policy};
use windlass_governance::{Governance, GovernanceConfig, GovernanceConfigError, ToolHints};
use windlass_tools::builtins::{Builtins, BuiltinsConfig, BuiltinsError, WithBuiltins};
use windlass_tools::McpServers;

#[derive(Debug, thiserror::Error)]
pub enum GovernError {
    #[error("[builtins]: {0}")]
    Builtins(#[from] BuiltinsError),
    #[error("[governance]: {0}")]
    Governance(#[from] GovernanceConfigError),
}

/// The hub and the policy the engine is built with.
pub struct Governed {
    pub hub: Arc<dyn McpHub>,
    pub policy: Arc<dyn Policy>,
    pub builtins: Arc<Builtins>,
}

/// Read-only hints for the gate, from what the hub listed.
struct Hints(Arc<WithBuiltins>);

impl ToolHints for Hints {
    fn read_only(&self, server_label: &str, tool: &str) -> Option<bool> {
        self.0.read_only_hint(server_label, tool)
    }
}

/// Starts the built-ins (probing the sandbox) and builds the gate around
/// `mcp`, counting rate limits and budgets in `counters` (shared by the
/// replicas on one Postgres) or, with `None`, in this process.
pub async fn govern(
    builtins: BuiltinsConfig,
    governance: GovernanceConfig,
    mcp: Arc<McpServers>,
    counters: Option<Arc<dyn GovernanceCounters>>,
) -> Result<Governed, GovernError> {
    let builtins = Arc::new(Builtins::start(builtins).await?);
    let hub = Arc::new(WithBuiltins::new(builtins.clone(), Some(mcp)));
    let (work_dir, roots) = builtins.workspace();
    let gate = match counters {
        Some(counters) => Governance::with_counters(governance, counters)?,
        None => Governance::new(governance)?,
    };
    let gate = gate
        .with_hints(Arc::new(Hints(hub.clone())))
        .with_workspace(work_dir, roots);
    Ok(Governed {
        hub,
        policy: Arc::new(gate),
        builtins,
    })
}

/// The built-ins and the gate of a config file's `[builtins]` and
/// `[governance]`, for `windlass run` and `windlass mcp` (no principal, no
/// operator MCP servers).
pub async fn from_file(
    path: &std::path::Path,
) -> Result<(Arc<Builtins>, Arc<dyn Policy>), crate::serve::ServeError> {
    let file = crate::config::load(Some(path), &crate::config::Environment::current())?;
    let builtins = Arc::new(
        Builtins::start(file.builtins)
            .await
            .map_err(GovernError::from)?,
    );
    let (work_dir, roots) = builtins.workspace();
    let gate = Governance::new(file.governance)
        .map_err(GovernError::from)?
        .with_workspace(work_dir, roots);
    Ok((builtins, Arc::new(gate)))
}
