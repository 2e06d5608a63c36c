//! Responses running in another replica (several `windlass serve`
//! processes sharing one Postgres): a cancel or delete that arrives here
//! goes out on the cancel bus, and the caller gets the final state once the
//! running replica has stored it.

use std::time::Duration;

use windlass_engine::CancelAck;
use windlass_protocol::ResponseResource;

use crate::error::ApiError;
use crate::state::AppState;

/// How often the store is read while waiting for the other replica's save.
const POLL: Duration = Duration::from_millis(50);

/// What became of a response asked to stop in another replica.
#[derive(Debug)]
pub(crate) enum Stopped {
    /// No replica runs it.
    NotRunning,
    /// Its final state, as stored by the replica that ran it.
    Stored(Box<ResponseResource>),
    /// A replica stopped it, but it was created with `store: false`: its
    /// final state exists nowhere this replica can read.
    Unstored,
}

/// Asks the replica running `tenant`'s response `id` to stop it; waits at
/// most `wait` for the final state to be stored (when it will be).
pub(crate) async fn stop_elsewhere(
    app: &AppState,
    tenant: &str,
    id: &str,
    wait: Duration,
) -> Result<Stopped, ApiError> {
    match app.cancel_bus.publish(tenant, id).await? {
        CancelAck::Unclaimed => return Ok(Stopped::NotRunning),
        CancelAck::Unstored => return Ok(Stopped::Unstored),
        CancelAck::Stored => {}
    }
    let store = app.engine.store();
    let stored = tokio::time::timeout(wait, async {
        loop {
            match store.get(tenant, id).await {
                Ok(Some(r)) if r.status.is_terminal() => return Ok(r),
                Ok(_) => tokio::time::sleep(POLL).await,
                Err(e) => return Err(e),
            }
        }
    })
    .await;
    match stored {
        Ok(Ok(r)) => Ok(Stopped::Stored(Box::new(r))),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(ApiError::internal("the response did not stop in time")),
    }
}
