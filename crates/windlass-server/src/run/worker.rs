//! Starting a background response: its live row, its event log, and the
//! worker task that waits for a slot and then runs the engine loop.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use windlass_engine::{ClientToolsStatus, EventSink, LiveRun, PreparedRun, RunStore, SinkClosed};
use windlass_protocol::{
    CreateResponseRequest, ResponseResource, ResponseStatus, StreamEvent, Tool,
};

use super::log::EventLog;
use crate::error::ApiError;
use crate::guard::quota_gate::Charge;
use crate::run::completion::Completion;
use crate::run::inflight::Registration;
use crate::state::AppState;

/// What a live row keeps to start a queued response again after a restart.
/// Never holds secrets: a request that carries any (MCP headers or
/// authorization) is not resumable.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ResumeBlob {
    pub request: CreateResponseRequest,
    pub principal: Option<String>,
    pub requires_action: bool,
}

/// The resume blob of a background request, or `None` when it holds secrets.
pub fn resume_blob(
    req: &CreateResponseRequest,
    principal: Option<&str>,
    status: ClientToolsStatus,
) -> Option<String> {
    let secret = req.tools.iter().flatten().any(|t| match t {
        Tool::Mcp(m) => m.headers.is_some() || m.authorization.is_some(),
        _ => false,
    });
    if secret {
        return None;
    }
    let blob = ResumeBlob {
        request: req.clone(),
        principal: principal.map(str::to_owned),
        requires_action: status == ClientToolsStatus::RequiresAction,
    };
    serde_json::to_string(&blob).ok()
}

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
    let cancel = CancellationToken::new();
    let registration =
        app.inflight
            .register_logged(tenant, &response, cancel.clone(), Some(log.clone()));
    let job = Job {
        app: app.clone(),
        runs,
        tenant: tenant.to_owned(),
        resume,
        log: log.clone(),
        charge,
        started,
    };
    // The run's log lines keep the request's span (its request id).
    let run = job.run(prepared, cancel, registration);
    tokio::spawn(run.instrument(tracing::Span::current()));
    Ok((response, log))
}

struct Job {
    app: AppState,
    runs: Arc<dyn RunStore>,
    tenant: String,
    resume: Option<String>,
    log: Arc<EventLog>,
    /// Token usage is charged to the request's quotas when the run ends.
    charge: Option<Charge>,
    /// When the response was accepted (its duration counts from there).
    started: std::time::Instant,
}

impl Job {
    async fn run(mut self, prepared: PreparedRun, cancel: CancellationToken, reg: Registration) {
        let workers = self.app.background.workers.clone();
        // A response cancelled while queued never takes a slot; the engine
        // then ends it `cancelled` at once (its token is already fired).
        let permit = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            p = workers.acquire_owned() => p.ok(),
        };
        if permit.is_some() {
            self.mark_running(prepared.response()).await;
        }
        let mut sink = LogSink(self.log.clone());
        let completion = Completion::of(&self.app.metrics, &prepared, self.started);
        let engine = &self.app.engine;
        let outcome = completion.run(engine, prepared, &mut sink, cancel).await;
        self.log.end();
        self.log.flush(self.runs.as_ref()).await;
        // The final save replaced the live row; if it could not be stored,
        // the row goes too, or this process would renew it `in_progress`
        // for as long as it lives.
        if let Err(e) = self
            .runs
            .drop_live(&self.tenant, &outcome.response.id)
            .await
        {
            tracing::warn!(id = %outcome.response.id, error = %e, "could not drop a live row");
        }
        reg.finish(&outcome.response);
        if let Some(charge) = self.charge.take() {
            charge.usage(&outcome.response).await;
        }
        drop(permit);
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
struct LogSink(Arc<EventLog>);

#[async_trait::async_trait]
impl EventSink for LogSink {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        match serde_json::to_string(&event) {
            Ok(json) => self.0.push(event.sequence_number, json),
            Err(e) => tracing::error!(error = %e, "cannot serialize a stream event"),
        }
        Ok(())
    }
}
