//! `Engine::warm_up`: a prepared request made ready without calling the
//! model (WebSocket `generate: false`, as Codex sends it). The MCP servers
//! the request declares are listed (their `mcp_list_tools` items are the
//! response's output, as a run would show them), so a request that
//! continues it reuses those listings; nothing is stored.

use tokio_util::sync::CancellationToken;
use windlass_protocol::{EventData, ResponseError, ResponseResource, ResponseStatus};

use crate::emitter::Emitter;
use crate::engine::Engine;
use crate::finish::Ending;
use crate::ports::agent::sink::EventSink;
use crate::prepared::PreparedRun;

impl Engine {
    /// Announces `run` (`response.created`), lists its new MCP servers, and
    /// ends it `completed` (or `failed` when a server cannot list its tools)
    /// without a model turn. The returned response holds the listings.
    pub async fn warm_up(
        &self,
        mut run: PreparedRun,
        sink: &mut dyn EventSink,
        cancel: CancellationToken,
    ) -> ResponseResource {
        let mut out = Emitter::new(run.response.clone(), sink, cancel.clone());
        out.response.status = ResponseStatus::InProgress;
        out.emit_snapshot(|response| EventData::Created { response })
            .await;
        let listed =
            crate::mcp::listing::list_new_servers(&self.inner, &mut run, &mut out, &cancel).await;
        for idx in out.open_items() {
            out.item_done(idx).await;
        }
        out.response.completed_at = Some(crate::clock::now_secs());
        match listed {
            Ok(()) => {
                out.response.status = ResponseStatus::Completed;
                out.emit_snapshot(|response| EventData::Completed { response })
                    .await;
            }
            Err(ending) => {
                let (code, message) = match ending {
                    Ending::Failed(f) => (f.code().to_owned(), f.message),
                    _ => (
                        "cancelled".to_owned(),
                        "the warm-up was cancelled".to_owned(),
                    ),
                };
                out.response.status = ResponseStatus::Failed;
                out.response.error = Some(ResponseError { code, message });
                out.emit_snapshot(|response| EventData::Failed { response })
                    .await;
            }
        }
        out.response
    }
}
