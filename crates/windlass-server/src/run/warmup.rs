//! WebSocket `generate: false` (Codex's warm-up): the request is checked
//! and prepared (its chain loaded, its tools resolved, its MCP servers
//! listed; see `Engine::warm_up`) but the model is not called. The client
//! gets `response.created`, the listings, and `response.completed`; the
//! connection keeps the request's input, the listings and its
//! `previous_response_id` under the response's id: a `response.create`
//! that continues that id runs with them (reusing the listings), as if the
//! two were one request. Nothing is stored for the warm-up itself.

use tokio_util::sync::CancellationToken;
use windlass_engine::{EventSink, PreparedRun};
use windlass_protocol::{CreateResponseRequest, Input, Item, ResponseStatus};

use crate::state::AppState;

/// A warm-up the connection keeps for the next `response.create`.
#[derive(Debug, Clone)]
pub(crate) struct Warm {
    pub id: String,
    previous: Option<String>,
    /// The warm-up's input, then its MCP listings.
    input: Vec<Item>,
}

impl Warm {
    /// `req` continues this warm-up: it continues what the warm-up
    /// continued, with the warm-up's input (and listings) before its own.
    pub(crate) fn apply(self, req: &mut CreateResponseRequest) {
        req.previous_response_id = self.previous;
        let mut input = self.input;
        input.extend(req.input.take().map(Input::into_items).unwrap_or_default());
        req.input = Some(Input::Items(input));
    }
}

/// Runs the warm-up of `prepared` (events to `sink`); what the connection
/// keeps, unless it failed (an MCP server that cannot list its tools).
pub(crate) async fn warm(
    app: &AppState,
    prepared: PreparedRun,
    previous: Option<String>,
    input: Option<Input>,
    sink: &mut dyn EventSink,
) -> Option<Warm> {
    let id = prepared.id().to_owned();
    let response = app
        .engine
        .warm_up(prepared, sink, CancellationToken::new())
        .await;
    if response.status != ResponseStatus::Completed {
        return None;
    }
    let mut items = input.map(Input::into_items).unwrap_or_default();
    items.extend(
        response
            .output
            .into_iter()
            .filter(|i| matches!(i, Item::McpListTools(_))),
    );
    Some(Warm {
        id,
        previous,
        input: items,
    })
}
