//! Starting a background response: its live row, its event log, and the
//! worker task that waits for a slot and then runs the engine loop.

use std::sync::Arc;

use tracing::Instrument;
use windlass_engine::{EventSink, LiveRun, PreparedRun, RunStore, SinkClosed};
use windlass_protocol::{ResponseResource, ResponseStatus, StreamEvent};

use super::launch::{Keep, Launch};
use super::log::EventLog;
use crate::error::ApiError;
use crate::guard::quota_gate::Charge;
use crate::state::AppState;

/// Records `prepared` (a background response, `queued`) as live and hands it
/// to a worker. Returns the queued resource and the run's event log.
pub(crate) async fn start_background(
    app: &AppState,
    runs: Arc<dyn RunStore>,
    prepared: PreparedRun,
    resume: Option<String>,
    charge: Option<Charge>,
) -> Result<(ResponseResource, Arc<EventLog>), ApiError> {
    let started = std::time::Instant::now();
    let tenant = prepared.tenant().to_owned();
    let tenant = tenant.as_str();
    let response = prepared.response().clone();
    runs.put_live(LiveRun {
        tenant,
        response: &response,
        replica: &app.background.replica,
        lease_until: app.background.lease_until(),
        resume: resume.as_deref(),
    })
    .await?;
    let log = EventLog::new(tenant, &response.id, true);
    let obfuscate = prepared.obfuscation();
    let keep = Keep::Background {
        log: log.clone(),
        runs: runs.clone(),
    };
    let launch = Launch::register(app, prepared, started, keep, charge);
    let job = Job {
        app: app.clone(),
        runs,
        tenant: tenant.to_owned(),
        resume,
        log: log.clone(),
        obfuscate,
    };
    // The run's log lines keep the request's span (its request id).
    tokio::spawn(job.run(launch).instrument(tracing::Span::current()));
    Ok((response, log))
}

struct Job {
    app: AppState,
    runs: Arc<dyn RunStore>,
    tenant: String,
    resume: Option<String>,
    log: Arc<EventLog>,
    /// `stream_options.include_obfuscation` (see `sse/obfuscate.rs`).
    obfuscate: bool,
}

impl Job {
    /// Waits for a worker slot, then runs to the end in it.
    async fn run(self, launch: Launch) {
        let workers = self.app.background.workers.clone();
        // A response cancelled while queued never takes a slot; the engine
        // then ends it `cancelled` at once (its token is already fired).
        let permit = tokio::select! {
            biased;
            _ = launch.cancel_token().cancelled() => None,
            p = workers.acquire_owned() => p.ok(),
        };
        if permit.is_some() {
            self.mark_running(launch.response()).await;
        }
        let mut sink = LogSink(self.log.clone(), self.obfuscate);
        let outcome = launch.run(&mut sink).await;
        drop(permit);
        super::notify::ended(self.app.notifier.as_ref(), &self.tenant, outcome.response);
    }

    /// `queued` -> `in_progress`, in this process and in the live row.
    async fn mark_running(&self, queued: &ResponseResource) {
        self.app
            .inflight
            .set_status(&queued.id, ResponseStatus::InProgress);
        let mut running = queued.clone();
        running.status = ResponseStatus::InProgress;
        let put = self.runs.put_live(LiveRun {
            tenant: &self.tenant,
            response: &running,
            replica: &self.app.background.replica,
            lease_until: self.app.background.lease_until(),
            resume: self.resume.as_deref(),
        });
        if let Err(e) = put.await {
            tracing::warn!(id = %queued.id, error = %e, "could not mark the background response running");
        }
    }
}

/// The sink of a background run: every event goes to its log (and from
/// there to resuming clients and the store); nobody can "leave".
/// The flag pads delta events as a live SSE stream does.
struct LogSink(Arc<EventLog>, bool);

#[async_trait::async_trait]
impl EventSink for LogSink {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        match serde_json::to_string(&event) {
            Ok(mut json) => {
                if self.1 {
                    crate::sse::obfuscate::pad_json(&mut json, event.event_type());
                }
                self.0.push(event.sequence_number, json)
            }
            Err(e) => tracing::error!(error = %e, "cannot serialize a stream event"),
        }
        Ok(())
    }
}
