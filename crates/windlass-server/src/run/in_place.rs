//! A run polled by the connection's own task instead of a spawned one.
//!
//! Spawning each run and awaiting its handle costs a task and a cross-task
//! wake-up per response. Polling it in place saves both; what a spawned task
//! gave for free, surviving a client that hangs up, is kept by `Drop`: an
//! unfinished run is cancelled and handed to a task of its own, so it still
//! ends in a defined, stored status.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio_util::sync::CancellationToken;

type Run<T> = Pin<Box<dyn Future<Output = T> + Send>>;

pub(crate) struct InPlace<T: Send + 'static> {
    /// `None` once finished.
    run: Option<Run<T>>,
    /// The run's token, fired if it is dropped unfinished.
    cancel: CancellationToken,
}

impl<T: Send + 'static> InPlace<T> {
    pub(crate) fn new(
        run: impl Future<Output = T> + Send + 'static,
        cancel: CancellationToken,
    ) -> Self {
        InPlace {
            run: Some(Box::pin(run)),
            cancel,
        }
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.run.is_none()
    }
}

impl<T: Send + 'static> Future for InPlace<T> {
    type Output = T;

    /// Polling again after completion stays pending (callers check
    /// `is_finished` first).
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let Some(run) = self.run.as_mut() else {
            return Poll::Pending;
        };
        let out = std::task::ready!(run.as_mut().poll(cx));
        self.run = None;
        Poll::Ready(out)
    }
}

impl<T: Send + 'static> Drop for InPlace<T> {
    fn drop(&mut self) {
        let Some(run) = self.run.take() else {
            return;
        };
        self.cancel.cancel();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    run.await;
                });
            }
            // Only when the runtime itself is going away.
            Err(_) => tracing::warn!("a run dropped outside a runtime is abandoned"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_finished_run_returns_its_output() {
        let run = InPlace::new(async { 7 }, CancellationToken::new());
        assert_eq!(run.await, 7);
    }

    #[tokio::test]
    async fn a_dropped_run_is_cancelled_and_still_finishes() {
        let cancel = CancellationToken::new();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let token = cancel.clone();
        let mut run = InPlace::new(
            async move {
                token.cancelled().await;
                let _ = tx.send("ended");
            },
            cancel.clone(),
        );
        // Started, waiting on the token.
        assert!(futures::poll!(&mut run).is_pending());
        drop(run);
        assert!(cancel.is_cancelled());
        assert_eq!(rx.await, Ok("ended"));
    }
}
