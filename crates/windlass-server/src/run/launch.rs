//! The launcher: one response run by this process, start to end, the same
//! way for every surface (JSON, SSE, WebSocket, the background worker).
//!
//! [`Launch::register`] makes the response visible as running (cancel,
//! `GET` while running, stream resume, shutdown); [`Launch::run`] runs it
//! through [`Completion::run`] (metrics and the completion line), closes its
//! event log as the surface asked ([`Keep`]), reports the final response to
//! whoever waits on a cancel, and charges its tokens to the quotas, in that
//! order and once. A surface brings its sink and what it keeps; nothing
//! else differs.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use windlass_engine::{Engine, EventSink, PreparedRun, RunOutcome, RunStore};
use windlass_protocol::ResponseResource;

use super::completion::Completion;
use super::inflight::Registration;
use super::log::EventLog;
use crate::guard::quota_gate::Charge;
use crate::state::AppState;

/// What a run keeps of its stream besides what its sink sends.
pub(crate) enum Keep {
    /// Nothing: a JSON answer, or a WebSocket (its client has the stream).
    Nothing,
    /// A stored SSE stream: its events stay in the log while it runs, so a
    /// client can re-attach, and reach the run store at the end only if its
    /// client left early.
    Stream(Arc<EventLog>),
    /// A background run: its log always reaches the store, and its live row
    /// is dropped once it has ended.
    Background {
        log: Arc<EventLog>,
        runs: Arc<dyn RunStore>,
    },
}

/// What happens to the stream once the run has ended.
enum Ending {
    Nothing,
    Stream {
        log: Arc<EventLog>,
        runs: Option<Arc<dyn RunStore>>,
    },
    Background {
        log: Arc<EventLog>,
        runs: Arc<dyn RunStore>,
        tenant: String,
    },
}

/// A response registered as running, not started yet.
pub(crate) struct Launch {
    engine: Engine,
    prepared: PreparedRun,
    completion: Completion,
    ending: Ending,
    registration: Registration,
    cancel: CancellationToken,
    /// `None` for a run admitted before (a background run restarted).
    charge: Option<Charge>,
}

impl Launch {
    /// Registers `prepared` as running (with its log, when it keeps one);
    /// its duration counts from `started`.
    pub(crate) fn register(
        app: &AppState,
        prepared: PreparedRun,
        started: Instant,
        keep: Keep,
        charge: Option<Charge>,
    ) -> Launch {
        let cancel = CancellationToken::new();
        let ending = match keep {
            Keep::Nothing => Ending::Nothing,
            Keep::Stream(log) => Ending::Stream {
                log,
                runs: app.runs.clone(),
            },
            Keep::Background { log, runs } => Ending::Background {
                log,
                runs,
                tenant: prepared.tenant().to_owned(),
            },
        };
        let registration = app.inflight.register_logged(
            prepared.tenant(),
            prepared.response(),
            cancel.clone(),
            ending.log().cloned(),
        );
        Launch {
            engine: app.engine.clone(),
            completion: Completion::of(&app.metrics, &prepared, started),
            prepared,
            ending,
            registration,
            cancel,
            charge,
        }
    }

    /// Counts the response under `surface` in the metrics and the
    /// completion line (the Responses API unless a surface says otherwise).
    pub(crate) fn surface(mut self, surface: crate::metrics::Surface) -> Launch {
        self.completion.set_surface(surface);
        self
    }

    /// The run's token: firing it (a client that left, a cancel) makes the
    /// run end `cancelled`.
    pub(crate) fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The response as it starts.
    pub(crate) fn response(&self) -> &ResponseResource {
        self.prepared.response()
    }

    /// Runs the response to its end with `sink`, then closes its log,
    /// reports its end and charges its tokens.
    pub(crate) async fn run(self, sink: &mut dyn EventSink) -> RunOutcome {
        let Launch {
            engine,
            prepared,
            completion,
            ending,
            registration,
            cancel,
            charge,
        } = self;
        let outcome = completion.run(&engine, prepared, sink, cancel).await;
        ending.close(&outcome.response).await;
        registration.finish(&outcome.response);
        if let Some(charge) = charge {
            charge.usage(&outcome.response).await;
        }
        outcome
    }
}

impl Ending {
    fn log(&self) -> Option<&Arc<EventLog>> {
        match self {
            Ending::Nothing => None,
            Ending::Stream { log, .. } | Ending::Background { log, .. } => Some(log),
        }
    }

    /// Ends the log (followers see the end) and stores what must outlive
    /// the process.
    async fn close(self, response: &ResponseResource) {
        match self {
            Ending::Nothing => {}
            Ending::Stream { log, runs } => {
                log.end();
                if let Some(runs) = runs {
                    log.flush(runs.as_ref()).await;
                }
            }
            Ending::Background { log, runs, tenant } => {
                log.end();
                log.flush(runs.as_ref()).await;
                // The final save replaced the live row; if it could not be
                // stored, the row goes too, or this process would renew it
                // `in_progress` for as long as it lives.
                if let Err(e) = runs.drop_live(&tenant, &response.id).await {
                    tracing::warn!(id = %response.id, error = %e, "could not drop a live row");
                }
            }
        }
    }
}
