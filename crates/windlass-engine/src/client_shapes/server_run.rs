//! `shell` and `apply_patch` run by the gateway (the operator's choice):
//! the model sees the same function as for a client-run tool, the call is
//! still OpenAI's item (`shell_call`, `apply_patch_call`), but an executor
//! owns it and its answer (`shell_call_output`, `apply_patch_call_output`)
//! is produced here rather than by the client.

use std::sync::Arc;

use windlass_protocol::Tool;

use super::typed::typed_definition;
use super::ClientShape;
use crate::error::EngineError;
use crate::ports::agent::tools::{ServerRunType, ToolDefinition, ToolExecutor, ToolOrigin};

/// The definition of `tools[i]` when an executor runs that type here;
/// `None` leaves it to the client.
pub fn served_definition(
    tool: &Tool,
    i: usize,
    executors: &[Arc<dyn ToolExecutor>],
) -> Result<Option<(ToolDefinition, ClientShape)>, EngineError> {
    let (kind, plain) = match tool {
        // Where the commands run is the gateway's business: a container
        // environment is as good as a local one.
        Tool::Shell(t) => {
            let mut t = t.clone();
            t.environment = None;
            (ServerRunType::Shell, Tool::Shell(t))
        }
        Tool::ApplyPatch(_) => (ServerRunType::ApplyPatch, tool.clone()),
        _ => return Ok(None),
    };
    let Some((mut def, shape)) = typed_definition(&plain, i)? else {
        return Ok(None);
    };
    def.origin = ToolOrigin::ServerRun(kind);
    Ok(executors
        .iter()
        .any(|e| e.can_execute(&def))
        .then_some((def, shape)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::agent::tools::{ToolCall, ToolContext, ToolError, ToolKind, ToolResult};
    use serde_json::json;

    struct Shell;

    #[async_trait::async_trait]
    impl ToolExecutor for Shell {
        fn kind(&self) -> ToolKind {
            ToolKind::Sandbox
        }
        fn can_execute(&self, def: &ToolDefinition) -> bool {
            def.origin == ToolOrigin::ServerRun(ServerRunType::Shell)
        }
        async fn execute(&self, _: &ToolContext, _: &ToolCall) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::ok(""))
        }
    }

    #[test]
    fn a_type_is_served_only_when_an_executor_runs_it() {
        let executors: Vec<Arc<dyn ToolExecutor>> = vec![Arc::new(Shell)];
        let shell: Tool = serde_json::from_value(
            json!({"type": "shell", "environment": {"type": "container_auto"}}),
        )
        .unwrap();
        let (def, shape) = served_definition(&shell, 0, &executors).unwrap().unwrap();
        assert_eq!(def.name, "shell");
        assert_eq!(def.origin, ToolOrigin::ServerRun(ServerRunType::Shell));
        assert!(matches!(shape, ClientShape::Typed(_)));
        let patch: Tool = serde_json::from_value(json!({"type": "apply_patch"})).unwrap();
        assert!(served_definition(&patch, 1, &executors).unwrap().is_none());
        assert!(served_definition(&shell, 0, &[]).unwrap().is_none());
    }
}
