//! Responses running in another replica (several `windlass serve`
//! processes sharing one Postgres): a cancel or delete that arrives here
//! goes out on the cancel bus, and the caller gets the final state once the
//! running replica has stored it.

use std::time::Duration;

use windlass_protocol::ResponseResource;

use crate::error::ApiError;
use crate::AppState;

/// How often the store is read while waiting for the other replica's save.
const POLL: Duration = Duration::from_millis(50);

/// Asks the replica running `tenant`'s response `id` to stop it. `Ok(None)` when no replica
/// claims it; otherwise the final state once it is stored, waiting at most
/// `wait`. (A run with `store: false` is stopped but never stored, so its
/// caller gets the timeout error.)
pub(crate) async fn stop_elsewhere(
    app: &AppState,
    tenant: &str,
    id: &str,
    wait: Duration,
) -> Result<Option<ResponseResource>, ApiError> {
    if !app.cancel_bus.publish(tenant, id).await? {
        return Ok(None);
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
        Ok(Ok(r)) => Ok(Some(r)),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(ApiError::internal("the response did not stop in time")),
    }
}
