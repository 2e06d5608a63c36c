//! The executors of the hosted tools `serve` offers: `file_search` over the
//! store's vector stores (always: keyword search, hybrid when an embedder
//! is given), `web_search` when `[web_search]` names a backend, and which
//! unserved tool types a request may carry anyway (`[hosted]`).
//!
//! ```toml
//! [hosted]
//! # A request naming a tool type nothing serves here:
//! unserved = "refuse"     # 400 unsupported_tool_type (default), or "drop":
//!                         # left out, named in x-windlass-dropped-tools
//! drop = ["web_search"]   # with "refuse": types dropped anyway (default:
//!                         # web_search, which Codex CLI sends every time)
//! shell = "client"        # or "server": shell_calls run in the sandbox here
//! apply_patch = "client"  # or "server": patches applied here
//! work_root = "/var/lib/windlass/workspaces"  # their per-tenant directories
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use windlass_engine::{Embedder, ToolExecutor, VectorStoreStore};
use windlass_retrieval::{FileSearchExecutor, Searcher};
use windlass_tools::builtins::ShellConfig;
use windlass_tools::hosted::server_run::ServerRunConfig;
use windlass_tools::hosted::web_search::{WebSearchConfig, WebSearchConfigError};

/// `[hosted]`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostedFile {
    /// `refuse` (default) or `drop`: what happens to a request's hosted
    /// tool type that nothing here serves.
    pub unserved: Option<Unserved>,
    /// With `refuse`: hosted types dropped anyway (default `["web_search"]`,
    /// covering the preview type and dated aliases).
    pub drop: Option<Vec<String>>,
    /// Who runs `shell` calls: `client` (default) or `server` (the
    /// sandbox of `[builtins.shell]`, in a per-tenant directory).
    pub shell: Option<RunSide>,
    /// Who applies `apply_patch` calls: `client` (default) or `server`.
    pub apply_patch: Option<RunSide>,
    /// Where the per-tenant work directories of server-run `shell` and
    /// `apply_patch` are made (default: `windlass-workspaces` in the
    /// system temp directory).
    pub work_root: Option<PathBuf>,
}

/// Who runs one of OpenAI's client-executed tool types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunSide {
    Client,
    Server,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unserved {
    Refuse,
    Drop,
}

impl HostedFile {
    /// The engine's `drop_unserved_hosted`.
    pub fn drop_list(&self) -> Vec<String> {
        match self.unserved {
            Some(Unserved::Drop) => vec!["*".to_owned()],
            _ => self
                .drop
                .clone()
                .unwrap_or_else(|| vec!["web_search".to_owned()]),
        }
    }
}

impl HostedFile {
    /// The server-run `shell` / `apply_patch` settings, if either runs here.
    pub fn server_run(&self, sandbox: &ShellConfig) -> Option<ServerRunConfig> {
        let shell = self.shell == Some(RunSide::Server);
        let apply_patch = self.apply_patch == Some(RunSide::Server);
        (shell || apply_patch).then(|| ServerRunConfig {
            shell,
            apply_patch,
            work_root: self
                .work_root
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("windlass-workspaces")),
            sandbox: sandbox.clone(),
        })
    }
}

/// `file_search` over `store`'s vector stores; the query is embedded when
/// `embedder` is given (hybrid search), else the search is by keyword.
pub fn retrieval_executor(
    store: Arc<dyn VectorStoreStore>,
    embedder: Option<Arc<dyn Embedder>>,
) -> Arc<dyn ToolExecutor> {
    Arc::new(FileSearchExecutor::new(Searcher::new(store, embedder)))
}

/// `web_search` over the configured backend, if `[web_search]` is set.
pub fn web_search_executor(
    config: Option<&WebSearchConfig>,
) -> Result<Option<Arc<dyn ToolExecutor>>, WebSearchConfigError> {
    let Some(config) = config else {
        return Ok(None);
    };
    let search = config.build()?;
    tracing::info!(backend = search.backend_name(), "web_search served");
    Ok(Some(Arc::new(search)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_and_apply_patch_stay_the_clients_unless_the_operator_says_server() {
        let sandbox = ShellConfig::default();
        let none: HostedFile = toml::from_str("").unwrap();
        assert!(none.server_run(&sandbox).is_none());
        let client: HostedFile = toml::from_str("shell = \"client\"").unwrap();
        assert!(client.server_run(&sandbox).is_none());
        let file: HostedFile =
            toml::from_str("apply_patch = \"server\"\nwork_root = \"/srv/ws\"").unwrap();
        let run = file.server_run(&sandbox).unwrap();
        assert!(run.apply_patch && !run.shell);
        assert_eq!(run.work_root, PathBuf::from("/srv/ws"));
        assert!(toml::from_str::<HostedFile>("shell = \"both\"").is_err());
    }
}
