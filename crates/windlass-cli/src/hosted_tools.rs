//! OpenAI's hosted tool types the gateway runs, built from their config
//! sections: `[code_interpreter]` (Python in the sandbox, in containers kept
//! in the store), and `shell` / `apply_patch` when `[hosted]` has the
//! gateway run them.

use std::sync::Arc;

use windlass_engine::{ContainerStore, FileStore, ToolExecutor};
use windlass_tools::hosted::code_interpreter::{
    CodeInterpreterConfig, CodeInterpreterExecutor, Runner,
};
use windlass_tools::hosted::server_run::{ServerRunConfig, ServerRunExecutor};

#[derive(Debug, thiserror::Error)]
pub enum HostedToolsError {
    /// Enabled but unable to run: refused at start-up rather than failing
    /// every call.
    #[error("[code_interpreter] is enabled but cannot run: {0}")]
    CodeInterpreter(String),
    #[error("[hosted] shell = \"server\" cannot run: {0}")]
    ServerRun(String),
}

/// The executor of `shell` / `apply_patch` when `[hosted]` has the gateway
/// run them; its sandbox is probed now (when `shell` runs here).
pub async fn server_run(
    config: Option<&ServerRunConfig>,
) -> Result<Option<Arc<dyn ToolExecutor>>, HostedToolsError> {
    let Some(config) = config else {
        return Ok(None);
    };
    let executor = ServerRunExecutor::start(config.clone())
        .await
        .map_err(|e| HostedToolsError::ServerRun(format!("{}: {e}", config.work_root.display())))?;
    if let Some(why) = executor.unavailable() {
        return Err(HostedToolsError::ServerRun(why.to_owned()));
    }
    tracing::info!(
        shell = config.shell,
        apply_patch = config.apply_patch,
        work_root = %config.work_root.display(),
        "shell / apply_patch run by the gateway"
    );
    Ok(Some(Arc::new(executor)))
}

/// The `code_interpreter` executor when `[code_interpreter] enabled`; its
/// sandbox is probed now.
pub async fn code_interpreter(
    config: &CodeInterpreterConfig,
    containers: Arc<dyn ContainerStore>,
    files: Arc<dyn FileStore>,
) -> Result<Option<Arc<dyn ToolExecutor>>, HostedToolsError> {
    if !config.enabled {
        return Ok(None);
    }
    if !config.python.is_file() {
        return Err(HostedToolsError::CodeInterpreter(format!(
            "no Python at {}",
            config.python.display()
        )));
    }
    let runner = Runner::start(config.clone()).await;
    if let Some(why) = runner.unavailable() {
        return Err(HostedToolsError::CodeInterpreter(why.to_owned()));
    }
    tracing::info!(python = %config.python.display(), "code_interpreter enabled");
    Ok(Some(Arc::new(CodeInterpreterExecutor::new(
        runner,
        containers,
        Some(files),
    ))))
}
