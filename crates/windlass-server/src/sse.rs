//! The SSE surface: each event serialized once and written in one piece.

use bytes::Bytes;
use tokio::sync::mpsc;
use windlass_engine::{EventSink, SinkClosed};
use windlass_protocol::StreamEvent;

/// Frames events as `event: X\ndata: {json}\n\n` into a channel the HTTP
/// body reads from. A dropped body (client gone) makes `send` fail.
pub struct SseSink {
    pub tx: mpsc::Sender<Bytes>,
}

pub fn frame(event: &StreamEvent) -> Bytes {
    let kind = event.event_type();
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(b"event: ");
    buf.extend_from_slice(kind.as_bytes());
    buf.extend_from_slice(b"\ndata: ");
    if serde_json::to_writer(&mut buf, event).is_err() {
        // Serializing our own types cannot fail; keep the stream well-formed regardless.
        buf.extend_from_slice(b"{}");
    }
    buf.extend_from_slice(b"\n\n");
    Bytes::from(buf)
}

pub const DONE: &[u8] = b"data: [DONE]\n\n";

#[async_trait::async_trait]
impl EventSink for SseSink {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        self.tx.send(frame(&event)).await.map_err(|_| SinkClosed)
    }
}
