//! The lease keeper: renews this replica's leases, flushes the event logs of
//! running background responses, and recovers live rows whose lease expired
//! (their process died or restarted): a `queued` response is started again
//! from its stored request; one that had started is ended `failed` with the
//! reason, because its tools may already have run and running it twice could
//! repeat their effects.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use windlass_engine::{LiveRecord, NewResponse, RunStore, StoreError, StoredEvent};
use windlass_protocol::{EventData, ResponseError, ResponseStatus, StreamEvent};

use super::background::now_millis;
use super::worker::start_background;
use crate::intake::{self, ResumeBlob};
use crate::state::AppState;

/// Rows recovered per tick.
const CLAIM_BATCH: usize = 32;

const STOPPED: &str = "The server running this background response stopped before it finished \
                       (a restart or a crash); it was not run again because its tool calls may \
                       already have had effects.";

/// Runs until `stop` fires.
pub(crate) async fn keep_leases(app: AppState, runs: Arc<dyn RunStore>, stop: CancellationToken) {
    let tick = app.background.lease / 3;
    loop {
        recover_expired(&app, &runs).await;
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(tick) => {}
        }
        let renewed = runs
            .renew_leases(&app.background.replica, app.background.lease_until())
            .await;
        if let Err(e) = renewed {
            tracing::warn!(error = %e, "could not renew the leases of background responses");
        }
        for log in app.inflight.logs() {
            log.flush(runs.as_ref()).await;
        }
    }
}

/// Claims the expired rows and resumes or fails each.
pub(crate) async fn recover_expired(app: &AppState, runs: &Arc<dyn RunStore>) {
    let claimed = runs
        .claim_expired(
            &app.background.replica,
            now_millis(),
            app.background.lease_until(),
            CLAIM_BATCH,
        )
        .await;
    let claimed = match claimed {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "could not claim expired background responses");
            return;
        }
    };
    for record in claimed {
        let id = record.response.id.clone();
        let outcome = match record.response.status {
            ResponseStatus::Queued => resume(app, runs, record).await,
            _ => fail(app, runs.as_ref(), record, STOPPED).await,
        };
        match outcome {
            Ok(()) => tracing::info!(%id, "recovered a background response"),
            Err(e) => tracing::warn!(%id, error = %e, "could not recover a background response"),
        }
    }
}

/// Starts a queued response again, with its id, from its stored request.
async fn resume(
    app: &AppState,
    runs: &Arc<dyn RunStore>,
    record: LiveRecord,
) -> Result<(), StoreError> {
    let Some(blob) = record.resume.as_deref() else {
        let why = "The server holding this queued background response stopped, and the request \
                   carried credentials that are never stored, so it could not be started again.";
        return fail(app, runs.as_ref(), record, why).await;
    };
    let blob: ResumeBlob = match serde_json::from_str(blob) {
        Ok(b) => b,
        Err(e) => return Err(StoreError::Corrupt(format!("resume data: {e}"))),
    };
    let (id, created_at) = (record.response.id.clone(), record.response.created_at);
    let prepared = match intake::prepare_resumed(app, &record.tenant, blob, id, created_at).await {
        Ok(p) => p,
        Err(e) => {
            let why = format!("The queued background response could not be started again: {e}");
            return fail(app, runs.as_ref(), record, &why).await;
        }
    };
    let resume = record.resume.clone();
    start_background(app, runs.clone(), prepared, resume, None)
        .await
        .map(drop)
        .map_err(|e| StoreError::Backend(format!("{e:?}")))
}

/// Ends a live response `failed` with `why`: the terminal event is appended
/// to its stored stream (so resuming clients end too), then the final save
/// replaces the live row.
async fn fail(
    app: &AppState,
    runs: &dyn RunStore,
    record: LiveRecord,
    why: &str,
) -> Result<(), StoreError> {
    let mut response = record.response;
    response.status = ResponseStatus::Failed;
    response.completed_at = Some(now_millis() / 1000);
    response.error = Some(ResponseError {
        code: "server_error".to_owned(),
        message: why.to_owned(),
    });
    let stored = runs
        .events_after(&record.tenant, &response.id, None)
        .await?;
    let next = stored.last().map_or(0, |e| e.sequence_number + 1);
    let event = StreamEvent {
        data: EventData::Failed {
            response: Box::new(response.clone()),
        },
        sequence_number: next,
    };
    let json = serde_json::to_string(&event)
        .map_err(|e| StoreError::Backend(format!("cannot encode event: {e}")))?;
    runs.append_events(
        &record.tenant,
        &response.id,
        &[StoredEvent {
            sequence_number: next,
            json,
        }],
    )
    .await?;
    app.engine
        .store()
        .save(NewResponse {
            tenant: &record.tenant,
            response: &response,
            input: &[],
            trace: None,
        })
        .await
}
