//! The executor of `shell` and `apply_patch` when the operator has the
//! gateway run them (`[hosted] shell = "server"`, `apply_patch = "server"`)
//! instead of handing `shell_call` / `apply_patch_call` to the client.
//!
//! Both work in one directory per tenant (under the operator's root), so a
//! patch the model applies is what its next command sees, and one tenant
//! never sees another's files. Commands run in the sandbox of the `shell`
//! built-in (no network unless the operator allows it, limits); patches
//! stay inside the directory (`PatchRoot`'s checks).

use std::path::{Path, PathBuf};
use std::time::Duration;

use windlass_engine::client_shapes::outputs::upstream_output;
use windlass_engine::client_shapes::typed::{typed_item, TypedKind};
use windlass_engine::{
    ServerRunType, ToolCall, ToolContext, ToolDefinition, ToolError, ToolExecutor, ToolKind,
    ToolOrigin, ToolResult,
};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{ApplyPatchOutputStatus, Item, ItemStatus, ToolOutput};

use super::apply_patch::{self, PatchRoot};
use super::shell::{self, ShellRunner};
use crate::builtins::ShellConfig;
use crate::sandbox::Sandbox;

/// Which types run here, and where.
#[derive(Debug, Clone)]
pub struct ServerRunConfig {
    pub shell: bool,
    pub apply_patch: bool,
    /// Per-tenant work directories are made under it.
    pub work_root: PathBuf,
    /// The sandbox and limits of the commands (`[builtins.shell]`).
    pub sandbox: ShellConfig,
}

pub struct ServerRunExecutor {
    config: ServerRunConfig,
    sandbox: Sandbox,
}

impl ServerRunExecutor {
    /// Makes the work root and probes the sandbox (when `shell` runs here).
    pub async fn start(config: ServerRunConfig) -> std::io::Result<ServerRunExecutor> {
        std::fs::create_dir_all(&config.work_root)?;
        let sandbox = Sandbox::start(config.sandbox.limits(), &config.work_root).await;
        Ok(ServerRunExecutor { config, sandbox })
    }

    /// Why `shell` cannot run here, if it is enabled and cannot.
    pub fn unavailable(&self) -> Option<&str> {
        if self.config.shell {
            self.sandbox.unavailable()
        } else {
            None
        }
    }

    /// The tenant's work directory (made on first use). The name is the
    /// tenant's bytes in hex: no tenant id can name a path outside.
    fn work_dir(&self, tenant: &str) -> Result<PathBuf, ToolError> {
        let name: String = tenant.bytes().map(|b| format!("{b:02x}")).collect();
        let dir = self.config.work_root.join(format!("t-{name}"));
        std::fs::create_dir_all(&dir)
            .map_err(|e| ToolError::Failed(format!("cannot make the work directory: {e}")))?;
        Ok(dir)
    }

    async fn run_shell(
        &self,
        ctx: &ToolContext,
        call: Item,
        dir: &Path,
    ) -> Result<Item, ToolError> {
        let Item::ShellCall(call) = call else {
            return Err(ToolError::Failed("not a shell call".into()));
        };
        let runner = ShellRunner::new(
            self.sandbox.clone(),
            dir,
            Duration::from_millis(self.config.sandbox.timeout_ms),
            self.config.sandbox.max_output_bytes,
        );
        let chunks = runner
            .run(&call.action, &ctx.cancel)
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let id = new_id(prefix::SHELL_CALL_OUTPUT);
        Ok(Item::ShellCallOutput(shell::call_output(&call, id, chunks)))
    }

    async fn run_patch(&self, call: Item, dir: &Path) -> Result<Item, ToolError> {
        let Item::ApplyPatchCall(call) = call else {
            return Err(ToolError::Failed("not an apply_patch call".into()));
        };
        let root = PatchRoot::new(dir).map_err(|e| ToolError::Failed(e.to_string()))?;
        let applied = root.apply_operation(&call.operation).await;
        let id = new_id(prefix::APPLY_PATCH_CALL_OUTPUT);
        Ok(Item::ApplyPatchCallOutput(apply_patch::call_output(
            &call, id, &applied,
        )))
    }
}

fn served(config: &ServerRunConfig, kind: ServerRunType) -> bool {
    match kind {
        ServerRunType::Shell => config.shell,
        ServerRunType::ApplyPatch => config.apply_patch,
        _ => false,
    }
}

#[async_trait::async_trait]
impl ToolExecutor for ServerRunExecutor {
    fn kind(&self) -> ToolKind {
        ToolKind::Sandbox
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        matches!(tool.origin, ToolOrigin::ServerRun(kind) if served(&self.config, kind))
    }

    async fn execute(&self, ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError> {
        let kind = match call.name.as_str() {
            "shell" if self.config.shell => TypedKind::Shell,
            "apply_patch" if self.config.apply_patch => TypedKind::ApplyPatch,
            other => return Err(ToolError::Failed(format!("'{other}' is not run here"))),
        };
        // The same item the loop showed the client, rebuilt from the same
        // arguments.
        let item = typed_item(
            kind,
            call.call_id.clone(),
            &call.arguments,
            ItemStatus::Completed,
        )
        .map_err(ToolError::InvalidArguments)?;
        let dir = self.work_dir(&ctx.tenant)?;
        let output = match kind {
            TypedKind::Shell => self.run_shell(ctx, item, &dir).await?,
            _ => self.run_patch(item, &dir).await?,
        };
        let is_error = matches!(
            &output,
            Item::ApplyPatchCallOutput(o) if o.status == ApplyPatchOutputStatus::Failed
        );
        // What the model reads is what a replay of the item renders.
        let text = upstream_output(&output)
            .map(|o| o.output)
            .unwrap_or_else(|| ToolOutput::Text(String::new()));
        Ok(ToolResult {
            output: text,
            is_error,
            item: Some(Box::new(output)),
        })
    }
}
