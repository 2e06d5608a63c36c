//! OpenAI's hosted tool types the gateway runs, built from their config
//! sections: `[code_interpreter]` (Python in the sandbox, in containers kept
//! in the store).

use std::sync::Arc;

use windlass_engine::{ContainerStore, FileStore, ToolExecutor};
use windlass_tools::hosted::code_interpreter::{
    CodeInterpreterConfig, CodeInterpreterExecutor, Runner,
};

#[derive(Debug, thiserror::Error)]
pub enum HostedToolsError {
    /// Enabled but unable to run: refused at start-up rather than failing
    /// every call.
    #[error("[code_interpreter] is enabled but cannot run: {0}")]
    CodeInterpreter(String),
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
