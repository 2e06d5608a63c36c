//! Listing the tools of servers the chain has not listed yet, as
//! `mcp_list_tools` items with their events, before the first model turn.

use tokio_util::sync::CancellationToken;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{EventData, Item, McpListTools};

use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::error::RunFailure;
use crate::finish::Ending;
use crate::mcp::declare::add_tools;
use crate::ports::mcp::McpError;
use crate::prepare::PreparedRun;

pub(crate) async fn list_new_servers(
    inner: &EngineInner,
    run: &mut PreparedRun,
    out: &mut Emitter<'_>,
    cancel: &CancellationToken,
) -> Result<(), Ending> {
    let Some(hub) = inner.mcp.as_deref() else {
        return Ok(());
    };
    for i in 0..run.mcp.servers.len() {
        if run.mcp.servers[i].listed.is_some() {
            continue;
        }
        let label = run.mcp.servers[i].server.label.clone();
        let item_id = new_id(prefix::MCP_LIST_TOOLS);
        let idx = out
            .add_item(Item::McpListTools(McpListTools {
                id: item_id.clone(),
                server_label: label.clone(),
                tools: Vec::new(),
                error: None,
            }))
            .await;
        out.emit(EventData::McpListToolsInProgress {
            item_id: item_id.clone(),
            output_index: idx,
        })
        .await;
        let listed = tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(McpError::Cancelled),
            r = hub.list_tools(&run.mcp.servers[i].server, cancel) => r,
        };
        match listed {
            Ok(tools) => {
                if let Item::McpListTools(l) = out.item_mut(idx) {
                    l.tools = tools.clone();
                }
                out.emit(EventData::McpListToolsCompleted {
                    item_id,
                    output_index: idx,
                })
                .await;
                out.item_done(idx).await;
                let default = hub.default_approval(&label);
                let decl = &mut run.mcp.servers[i];
                add_tools(&mut run.tools, decl, default.as_ref(), &tools);
                decl.listed = Some(tools);
            }
            Err(McpError::Cancelled) => return Err(Ending::Cancelled),
            Err(e) => {
                let message = format!("Error retrieving tool list from MCP server '{label}': {e}");
                if let Item::McpListTools(l) = out.item_mut(idx) {
                    l.error = Some(message.clone());
                }
                out.emit(EventData::McpListToolsFailed {
                    item_id,
                    output_index: idx,
                })
                .await;
                out.item_done(idx).await;
                // Like OpenAI: a request whose MCP server cannot list its
                // tools fails (424) rather than letting the model guess.
                return Err(Ending::Failed(RunFailure {
                    http_status: 424,
                    kind: "server_error",
                    code: "mcp_list_tools_failed".to_owned(),
                    message,
                    param: Some(format!("tools[{}]", run.mcp.servers[i].index)),
                }));
            }
        }
    }
    Ok(())
}
