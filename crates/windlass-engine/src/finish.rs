//! The end of a run: final status, persistence, then the one terminal event.

use tracing::error;
use windlass_protocol::{EventData, IncompleteDetails, ResponseError, ResponseStatus, Usage};

use crate::driver::RunOutcome;
use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::error::RunFailure;
use crate::ports::store::NewResponse;
use crate::prepare::{now_secs, PreparedRun};
use crate::state::Finish;

pub(crate) enum Ending {
    Done(Finish),
    Failed(RunFailure),
    Cancelled,
}

pub(crate) async fn finalize(
    inner: &EngineInner,
    run: &PreparedRun,
    mut out: Emitter<'_>,
    ending: Ending,
    usage: Option<Usage>,
) -> RunOutcome {
    let mut failure = None;
    {
        let r = &mut out.response;
        r.usage = usage;
        r.completed_at = Some(now_secs());
        match ending {
            Ending::Done(f) => {
                r.status = f.status;
                r.incomplete_details = f
                    .incomplete_reason
                    .map(|reason| IncompleteDetails { reason });
            }
            Ending::Failed(f) => {
                r.status = ResponseStatus::Failed;
                r.error = Some(ResponseError {
                    code: f.code.clone(),
                    message: f.message.clone(),
                });
                failure = Some(f);
            }
            Ending::Cancelled => r.status = ResponseStatus::Cancelled,
        }
    }
    if run.store() {
        let saved = inner
            .store
            .save(NewResponse {
                response: &out.response,
                input: &run.input,
            })
            .await;
        if let Err(e) = saved {
            error!(error = %e, "could not persist the response");
            let f = RunFailure::internal(
                "storage_error",
                format!("the response could not be stored: {e}"),
            );
            out.response.status = ResponseStatus::Failed;
            out.response.error = Some(ResponseError {
                code: f.code.clone(),
                message: f.message.clone(),
            });
            failure = Some(f);
        }
    }
    let make: fn(Box<windlass_protocol::ResponseResource>) -> EventData = match out.response.status
    {
        ResponseStatus::Completed => |response| EventData::Completed { response },
        ResponseStatus::Incomplete => |response| EventData::Incomplete { response },
        ResponseStatus::Failed => |response| EventData::Failed { response },
        ResponseStatus::Cancelled => |response| EventData::Cancelled { response },
        ResponseStatus::RequiresAction => |response| EventData::RequiresAction { response },
        ResponseStatus::Queued | ResponseStatus::InProgress => {
            |response| EventData::Completed { response }
        }
    };
    out.emit_snapshot(make).await;
    RunOutcome {
        response: out.response,
        failure,
    }
}
