//! Listing the tools of servers the chain has not listed yet, as
//! `mcp_list_tools` items with their events, before the first model turn.
//!
//! The servers are listed concurrently (a listing is a connection, an
//! `initialize` and a `tools/list`: one slow server should not add its time
//! to every other's); items are announced, completed and added to the tool
//! set in declaration order.

use tokio_util::sync::CancellationToken;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{EventData, Item, McpListTools};

use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::error::{FailureKind, RunFailure};
use crate::finish::Ending;
use crate::mcp::declare::add_tools;
use crate::ports::agent::mcp::McpError;
use crate::prepared::PreparedRun;

/// A listing announced as an output item: its server and the item.
struct Announced {
    server: usize,
    item_id: String,
    output_index: usize,
}

pub(crate) async fn list_new_servers(
    inner: &EngineInner,
    run: &mut PreparedRun,
    out: &mut Emitter<'_>,
    cancel: &CancellationToken,
) -> Result<(), Ending> {
    let Some(hub) = inner.mcp.as_deref() else {
        return Ok(());
    };
    let mut announced = Vec::new();
    for (server, decl) in run.mcp.servers.iter().enumerate() {
        if decl.listed.is_some() {
            continue;
        }
        let item_id = new_id(prefix::MCP_LIST_TOOLS);
        let output_index = out
            .add_item(Item::McpListTools(McpListTools {
                id: item_id.clone(),
                server_label: decl.server.label.clone(),
                tools: Vec::new(),
                error: None,
            }))
            .await;
        out.emit(EventData::McpListToolsInProgress {
            item_id: item_id.clone(),
            output_index,
        })
        .await;
        announced.push(Announced {
            server,
            item_id,
            output_index,
        });
    }
    if announced.is_empty() {
        return Ok(());
    }

    let listings = announced
        .iter()
        .map(|a| hub.list_tools(&run.mcp.servers[a.server].server, cancel));
    let results = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(Ending::Cancelled),
        r = futures::future::join_all(listings) => r,
    };

    // Every item is finished before a failure ends the response, so none is
    // left in progress.
    let mut failure = None;
    for (a, listed) in announced.into_iter().zip(results) {
        let label = run.mcp.servers[a.server].server.label.clone();
        match listed {
            Ok(tools) => {
                if let Item::McpListTools(l) = out.item_mut(a.output_index) {
                    l.tools = tools.clone();
                }
                out.emit(EventData::McpListToolsCompleted {
                    item_id: a.item_id,
                    output_index: a.output_index,
                })
                .await;
                out.item_done(a.output_index).await;
                let default = hub.default_approval(&label);
                let decl = &mut run.mcp.servers[a.server];
                add_tools(&mut run.tools, decl, default.as_ref(), &tools);
                decl.listed = Some(tools);
            }
            Err(McpError::Cancelled) => return Err(Ending::Cancelled),
            Err(e) => {
                let message = format!("Error retrieving tool list from MCP server '{label}': {e}");
                if let Item::McpListTools(l) = out.item_mut(a.output_index) {
                    l.error = Some(message.clone());
                }
                out.emit(EventData::McpListToolsFailed {
                    item_id: a.item_id,
                    output_index: a.output_index,
                })
                .await;
                out.item_done(a.output_index).await;
                // Like OpenAI: a request whose MCP server cannot list its
                // tools fails (424) rather than letting the model guess.
                failure.get_or_insert(RunFailure {
                    kind: FailureKind::McpListToolsFailed,
                    message,
                    param: Some(format!("tools[{}]", run.mcp.servers[a.server].index)),
                });
            }
        }
    }
    match failure {
        Some(f) => Err(Ending::Failed(f)),
        None => Ok(()),
    }
}
