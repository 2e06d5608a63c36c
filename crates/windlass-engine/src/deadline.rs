//! The response's wall-clock limit: the one mechanism is a timer that
//! cancels the run's token, which stops whatever is running (model call,
//! tools, listings); the run then ends `incomplete` / `max_response_time`.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub(crate) struct Deadline {
    /// Fires when the caller cancels or the limit passes.
    pub token: CancellationToken,
    outer: CancellationToken,
    timer: Option<JoinHandle<()>>,
}

impl Deadline {
    pub(crate) fn start(limit: Option<Duration>, outer: CancellationToken) -> Deadline {
        let token = outer.child_token();
        let timer = limit.map(|limit| {
            let token = token.clone();
            tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                token.cancel();
            })
        });
        Deadline {
            token,
            outer,
            timer,
        }
    }

    /// The limit passed (rather than the caller cancelling).
    pub(crate) fn expired(&self) -> bool {
        self.token.is_cancelled() && !self.outer.is_cancelled()
    }

    /// The caller's token (a closed client cancels this one).
    pub(crate) fn outer(&self) -> &CancellationToken {
        &self.outer
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
    }
}
