//! Graceful shutdown: on the signal the server stops being ready, refuses
//! new work, gives running responses a grace period to finish, cancels what
//! is left (each ends `cancelled`, stored) and only then closes connections.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::run::inflight::Inflight;

/// How long cancelled runs get to store their final state once the grace
/// period is over (a cancelled run stops its upstream call and tools at once,
/// so this is only the final save).
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// Shared "is the server draining" flag, read by `/ready` and admission.
#[derive(Debug, Clone, Default)]
pub struct Lifecycle {
    draining: Arc<AtomicBool>,
    /// Ends the grace period early (a second signal from the operator).
    cut_short: CancellationToken,
}

impl Lifecycle {
    pub fn begin_drain(&self) {
        self.draining.store(true, Ordering::Release);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Cancels the running responses now instead of after the grace period.
    pub fn cut_short(&self) {
        self.cut_short.cancel();
    }
}

/// Waits for `shutdown`, then drains: not ready, running responses get
/// `grace` to end on their own, the rest are cancelled and stored.
pub async fn drain(
    shutdown: impl std::future::Future<Output = ()>,
    lifecycle: Lifecycle,
    inflight: Inflight,
    grace: Duration,
) {
    shutdown.await;
    lifecycle.begin_drain();
    tracing::info!(
        running = inflight.len(),
        grace_secs = grace.as_secs_f64(),
        "shutting down: not ready, refusing new requests, letting running responses finish"
    );
    tokio::select! {
        finished = tokio::time::timeout(grace, inflight.wait_empty()) => {
            if finished.is_ok() {
                tracing::info!("every running response finished");
                return;
            }
            tracing::warn!("grace period over");
        }
        _ = lifecycle.cut_short.cancelled() => tracing::warn!("grace period cut short"),
    }
    let n = inflight.cancel_all();
    tracing::warn!(cancelled = n, "cancelling the responses still running");
    if tokio::time::timeout(CANCEL_WAIT, inflight.wait_empty())
        .await
        .is_err()
    {
        tracing::warn!(
            running = inflight.len(),
            "cancelled responses did not finish storing in time"
        );
    }
}
