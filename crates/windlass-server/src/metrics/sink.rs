//! The metrics adapter on the engine's seams: a sink around the surface's
//! own that records model turns, tool calls and the first streamed token,
//! then passes everything on unchanged.

use std::sync::Arc;
use std::time::Instant;

use windlass_engine::{EventSink, RunEvent, SinkClosed};
use windlass_protocol::{EventData, StreamEvent};

use super::Metrics;

pub(crate) struct ObservedSink<'s> {
    inner: &'s mut dyn EventSink,
    metrics: Metrics,
    model: Arc<str>,
    key: Arc<str>,
    /// When the request arrived (time to first token counts from there).
    started: Instant,
    first_token_seen: bool,
}

impl<'s> ObservedSink<'s> {
    pub(crate) fn new(
        inner: &'s mut dyn EventSink,
        metrics: Metrics,
        model: Arc<str>,
        key: Arc<str>,
        started: Instant,
    ) -> Self {
        ObservedSink {
            inner,
            metrics,
            model,
            key,
            started,
            first_token_seen: false,
        }
    }
}

/// Events that carry generated tokens.
fn is_token(data: &EventData) -> bool {
    matches!(
        data,
        EventData::OutputTextDelta { .. }
            | EventData::RefusalDelta { .. }
            | EventData::ReasoningDelta { .. }
            | EventData::ReasoningSummaryTextDelta { .. }
            | EventData::FunctionCallArgumentsDelta { .. }
            | EventData::CustomToolCallInputDelta { .. }
    )
}

#[async_trait::async_trait]
impl EventSink for ObservedSink<'_> {
    fn wants_events(&self) -> bool {
        self.inner.wants_events()
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        if !self.first_token_seen && is_token(&event.data) {
            self.first_token_seen = true;
            let after = self.started.elapsed();
            self.metrics.first_token(&self.model, &self.key, after);
        }
        self.inner.send(event).await
    }

    fn wants_run_events(&self) -> bool {
        self.metrics.is_enabled() || self.inner.wants_run_events()
    }

    async fn run_event(&mut self, event: RunEvent) {
        match &event {
            RunEvent::TurnFinished(turn) => self.metrics.turn_finished(&self.model, turn),
            RunEvent::CallFinished(call) => self.metrics.tool_finished(call),
            _ => {}
        }
        if self.inner.wants_run_events() {
            self.inner.run_event(event).await;
        }
    }
}
