//! Called by the loop with each stream event; a port so every surface delivers events its own way.
//!
//! Where stream events go: an SSE writer, a WebSocket, an SDK channel, or nowhere.

use windlass_protocol::StreamEvent;

use super::events::RunEvent;

/// The receiver is gone (client disconnected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("event receiver closed")]
pub struct SinkClosed;

/// Where a run's stream events and run events go; each surface implements it (SSE, WebSocket, SDK channel, a buffer for JSON).
#[async_trait::async_trait]
pub trait EventSink: Send {
    /// False for surfaces that only want the final response (JSON): the engine
    /// then builds no events at all.
    fn wants_events(&self) -> bool;

    /// Delivers one event. An error means the client is gone; the engine
    /// cancels the response.
    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed>;

    /// Whether [`run_event`](Self::run_event) wants the loop's run events
    /// (the engine builds none otherwise).
    fn wants_run_events(&self) -> bool {
        false
    }

    /// Receives one run event, in loop order with the stream events.
    async fn run_event(&mut self, _event: RunEvent) {}
}

/// A sink for the JSON surface: no events.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoEvents;

#[async_trait::async_trait]
impl EventSink for NoEvents {
    fn wants_events(&self) -> bool {
        false
    }

    async fn send(&mut self, _event: StreamEvent) -> Result<(), SinkClosed> {
        Ok(())
    }
}

/// Sends events into a bounded tokio channel (SSE, WebSocket, SDK).
pub struct ChannelSink(pub tokio::sync::mpsc::Sender<StreamEvent>);

#[async_trait::async_trait]
impl EventSink for ChannelSink {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        self.0.send(event).await.map_err(|_| SinkClosed)
    }
}
