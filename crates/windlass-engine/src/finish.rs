//! The end of a run: final status, persistence, then the one terminal event.

use tracing::{error, warn};
use windlass_protocol::{
    EventData, IncompleteDetails, ResponseError, ResponseResource, ResponseStatus, Usage,
};

use crate::clock::now_secs;
use crate::config::ClientToolsStatus;
use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::error::{FailureKind, RunFailure};
use crate::outcome::{PauseReason, RunOutcome, StopReason, Termination};
use crate::ports::agent::store::NewResponse;
use crate::ports::agent::trace::Trace;
use crate::prepared::PreparedRun;
use crate::state::Finish;

pub(crate) enum Ending {
    Done(Finish),
    Paused(PauseReason),
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
    let mut termination = {
        let r = &mut out.response;
        r.usage = usage;
        r.completed_at = Some(now_secs());
        match ending {
            Ending::Done(Finish::Completed) => {
                r.status = ResponseStatus::Completed;
                Termination::Completed
            }
            Ending::Done(Finish::Stopped(reason)) => {
                // A spent tool-call budget still completes the response.
                r.status = match reason {
                    StopReason::MaxToolCalls => ResponseStatus::Completed,
                    _ => ResponseStatus::Incomplete,
                };
                r.incomplete_details = Some(IncompleteDetails {
                    reason: reason.as_str().to_owned(),
                });
                Termination::Stopped(reason)
            }
            Ending::Paused(reason) => {
                r.status = match run.client_tools_status {
                    ClientToolsStatus::RequiresAction => ResponseStatus::RequiresAction,
                    ClientToolsStatus::Completed => ResponseStatus::Completed,
                };
                Termination::Paused(reason)
            }
            Ending::Failed(f) => {
                r.status = ResponseStatus::Failed;
                r.error = Some(ResponseError {
                    code: f.code().to_owned(),
                    message: f.message.clone(),
                });
                failure = Some(f);
                Termination::Failed
            }
            Ending::Cancelled => {
                r.status = ResponseStatus::Cancelled;
                Termination::Cancelled
            }
        }
    };
    let trace = std::mem::take(&mut out.trace).finish();
    if run.store() {
        if let Err(f) = persist(inner, run, &out.response, &trace).await {
            out.response.status = ResponseStatus::Failed;
            out.response.error = Some(ResponseError {
                code: f.code().to_owned(),
                message: f.message.clone(),
            });
            failure = Some(f);
            termination = Termination::Failed;
        }
    }
    append_to_conversation(inner, run, &out.response).await;
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
    let stats = std::mem::take(&mut out.stats);
    RunOutcome {
        response: out.response,
        termination,
        failure,
        stats,
        trace,
        include: run.request.include.clone().unwrap_or_default(),
    }
}

/// Stores the response with its trace.
async fn persist(
    inner: &EngineInner,
    run: &PreparedRun,
    response: &ResponseResource,
    trace: &Trace,
) -> Result<(), RunFailure> {
    let saved = inner
        .store
        .save(NewResponse {
            tenant: &run.tenant,
            response,
            input: &run.input,
            trace: Some(trace),
        })
        .await;
    if let Err(e) = saved {
        error!(error = %e, "could not persist the response");
        return Err(RunFailure::new(
            FailureKind::Storage,
            format!("the response could not be stored: {e}"),
        ));
    }
    Ok(())
}

/// A response in a conversation adds its input and output to it, unless it
/// failed or was cancelled (then the conversation is as before).
async fn append_to_conversation(
    inner: &EngineInner,
    run: &PreparedRun,
    response: &ResponseResource,
) {
    let (Some(id), Some(store)) = (&run.conversation, &inner.conversations) else {
        return;
    };
    if matches!(
        response.status,
        ResponseStatus::Failed | ResponseStatus::Cancelled
    ) {
        return;
    }
    let items: Vec<_> = run.input.iter().chain(&response.output).cloned().collect();
    match store
        .append_conversation_items(&run.tenant, id, &items)
        .await
    {
        Ok(true) => {}
        Ok(false) => warn!(conversation = %id, "the conversation was deleted during the response"),
        Err(e) => error!(conversation = %id, error = %e, "could not append to the conversation"),
    }
}
