//! The end of one response, as operators see it: the metrics of the
//! response and one completion log line (key name, tenant, model, status,
//! counts, tokens, duration; never secrets or user text).
//!
//! Every surface (JSON, SSE, WebSocket, background worker) starts its
//! responses through the launcher (`launch.rs`), which runs the engine
//! through [`Completion::run`], so each counts and logs its responses alike.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use windlass_engine::{Engine, EventSink, PreparedRun, RunOutcome};
use windlass_protocol::ResponseStatus;

use crate::metrics::sink::ObservedSink;
use crate::metrics::{Finished, Metrics, Surface};

/// Key label and log value when authentication is off.
const NO_KEY: &str = "none";

pub(crate) struct Completion {
    metrics: Metrics,
    /// The model as the metrics label it (bounded).
    model_label: Arc<str>,
    key: Arc<str>,
    tenant: Arc<str>,
    /// The front door the request came through (the `surface` label).
    surface: Surface,
    started: Instant,
}

impl Completion {
    /// For `prepared`, counted from `started`; its principal (the API key's
    /// name) is the key label.
    pub(crate) fn of(metrics: &Metrics, prepared: &PreparedRun, started: Instant) -> Self {
        Completion::start(
            metrics,
            &prepared.response().model,
            prepared.principal(),
            prepared.tenant(),
            started,
        )
    }

    /// Runs `prepared` to its end with the metrics around `sink`, then
    /// records the end (metrics and the completion line).
    pub(crate) async fn run(
        self,
        engine: &Engine,
        prepared: PreparedRun,
        sink: &mut dyn EventSink,
        cancel: CancellationToken,
    ) -> RunOutcome {
        let outcome = {
            let mut observed = self.sink(sink);
            engine.run(prepared, &mut observed, cancel).await
        };
        self.finish(&outcome);
        outcome
    }

    fn start(
        metrics: &Metrics,
        model: &str,
        key: Option<&str>,
        tenant: &str,
        started: Instant,
    ) -> Self {
        Completion {
            tenant: Arc::from(tenant),
            model_label: metrics.model_label(model),
            metrics: metrics.clone(),
            key: Arc::from(key.unwrap_or(NO_KEY)),
            surface: Surface::default(),
            started,
        }
    }

    /// Counts the response under `surface` (the Responses API by default).
    pub(crate) fn set_surface(&mut self, surface: Surface) {
        self.surface = surface;
    }

    /// The surface's sink with the metrics adapter around it.
    fn sink<'s>(&self, inner: &'s mut dyn EventSink) -> ObservedSink<'s> {
        ObservedSink::new(
            inner,
            self.metrics.clone(),
            self.model_label.clone(),
            self.key.clone(),
            self.started,
        )
    }

    /// Records the response's end: metrics, then the completion line.
    fn finish(&self, outcome: &RunOutcome) {
        let r = &outcome.response;
        let status = status_str(r.status);
        let duration = self.started.elapsed();
        self.metrics.response_finished(&Finished {
            model: &self.model_label,
            key: &self.key,
            status,
            surface: self.surface,
            duration,
            turns: outcome.stats.turns,
        });
        let (input_tokens, output_tokens) = r
            .usage
            .as_ref()
            .map_or((0, 0), |u| (u.input_tokens, u.output_tokens));
        tracing::info!(
            target: "windlass::access",
            response_id = %r.id,
            key = %self.key,
            tenant = %self.tenant,
            model = %r.model,
            status,
            surface = self.surface.as_str(),
            turns = outcome.stats.turns,
            tool_calls = outcome.stats.tool_calls,
            input_tokens,
            output_tokens,
            duration_ms = duration.as_secs_f64() * 1000.0,
            "response finished"
        );
    }
}

fn status_str(status: ResponseStatus) -> &'static str {
    match status {
        ResponseStatus::Queued => "queued",
        ResponseStatus::InProgress => "in_progress",
        ResponseStatus::Completed => "completed",
        ResponseStatus::Incomplete => "incomplete",
        ResponseStatus::Failed => "failed",
        ResponseStatus::Cancelled => "cancelled",
        ResponseStatus::RequiresAction => "requires_action",
    }
}
