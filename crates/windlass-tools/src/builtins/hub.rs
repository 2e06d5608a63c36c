//! [`WithBuiltins`]: the gateway's MCP hub with the built-in tools added as
//! the server labelled `windlass`. Every other label goes to the wrapped
//! hub. It also remembers each listed tool's `readOnlyHint`, for the
//! governance gate's autonomy level.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use windlass_engine::{McpError, McpHub, McpServerRef, ToolResult};
use windlass_protocol::{McpApprovalMode, McpRequireApproval, McpToolInfo};

use super::toolset::{Builtins, BUILTIN_LABEL};

pub struct WithBuiltins {
    builtins: Arc<Builtins>,
    inner: Option<Arc<dyn McpHub>>,
    /// (label, tool) -> read-only. A tool once listed as not read-only
    /// stays so (another server under the same label cannot relax it).
    hints: Mutex<HashMap<(String, String), bool>>,
}

impl WithBuiltins {
    pub fn new(builtins: Arc<Builtins>, inner: Option<Arc<dyn McpHub>>) -> WithBuiltins {
        WithBuiltins {
            builtins,
            inner,
            hints: Mutex::new(HashMap::new()),
        }
    }

    /// The `readOnlyHint` of a tool as last listed; the built-ins' are fixed.
    pub fn read_only_hint(&self, label: &str, tool: &str) -> Option<bool> {
        if label == BUILTIN_LABEL {
            return Some(Builtins::is_read_only(tool));
        }
        self.hints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(label.to_owned(), tool.to_owned()))
            .copied()
    }

    fn remember(&self, label: &str, tools: &[McpToolInfo]) {
        let mut hints = self.hints.lock().unwrap_or_else(|p| p.into_inner());
        for t in tools {
            let ro = t
                .annotations
                .as_ref()
                .and_then(|a| a.get("readOnlyHint"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let entry = hints
                .entry((label.to_owned(), t.name.clone()))
                .or_insert(ro);
            *entry = *entry && ro;
        }
    }

    fn inner(&self, label: &str) -> Result<&Arc<dyn McpHub>, McpError> {
        self.inner.as_ref().ok_or_else(|| {
            McpError::Refused(format!("no MCP server labelled '{label}' is configured"))
        })
    }

    fn is_builtin(server: &McpServerRef) -> bool {
        server.label == BUILTIN_LABEL
    }
}

#[async_trait::async_trait]
impl McpHub for WithBuiltins {
    async fn check(&self, server: &McpServerRef) -> Result<(), McpError> {
        if !Self::is_builtin(server) {
            return self.inner(&server.label)?.check(server).await;
        }
        if server.url.is_some() {
            return Err(McpError::Refused(format!(
                "the label '{BUILTIN_LABEL}' is reserved for the gateway's built-in tools; give another server_label"
            )));
        }
        if self.builtins.is_empty() {
            return Err(McpError::Refused(
                "no built-in tools are enabled on this gateway".to_owned(),
            ));
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        server: &McpServerRef,
        cancel: &CancellationToken,
    ) -> Result<Vec<McpToolInfo>, McpError> {
        if Self::is_builtin(server) {
            return Ok(self.builtins.tools());
        }
        let tools = self
            .inner(&server.label)?
            .list_tools(server, cancel)
            .await?;
        self.remember(&server.label, &tools);
        Ok(tools)
    }

    async fn call_tool(
        &self,
        server: &McpServerRef,
        tool: &str,
        arguments: &str,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, McpError> {
        if Self::is_builtin(server) {
            return self
                .builtins
                .call(tool, arguments, cancel)
                .await
                .map_err(McpError::Failed);
        }
        self.inner(&server.label)?
            .call_tool(server, tool, arguments, cancel)
            .await
    }

    fn default_approval(&self, label: &str) -> Option<McpRequireApproval> {
        if label == BUILTIN_LABEL {
            // Approvals for the built-ins come from governance (supervised).
            return Some(McpRequireApproval::Mode(McpApprovalMode::Never));
        }
        self.inner.as_ref().and_then(|h| h.default_approval(label))
    }
}
