//! The Messages stream's sink: engine events through the grammar
//! (`grammar.rs`) into SSE frames, with the SSE surface's back-pressure.

use windlass_engine::{EventSink, SinkClosed};
use windlass_protocol::StreamEvent;

use super::answer::Thinking;
use super::grammar::Grammar;
use crate::sse::SseSink;

/// Sent after each silence instead of the Responses stream's comment:
/// Anthropic's streams keep alive with `ping` events.
pub(crate) const PING: &[u8] = b"event: ping\ndata: {\"type\":\"ping\"}\n\n";

pub(crate) struct MessagesSink {
    sse: SseSink,
    grammar: Grammar,
}

impl MessagesSink {
    pub(super) fn new(sse: SseSink, thinking: Thinking) -> Self {
        MessagesSink {
            sse,
            grammar: Grammar::new(thinking),
        }
    }
}

#[async_trait::async_trait]
impl EventSink for MessagesSink {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        for out in self.grammar.on(&event.data) {
            match serde_json::to_vec(&out) {
                Ok(json) => self.sse.send_frame(out.event_type(), &json).await?,
                // Our own types always serialize; never break the framing.
                Err(e) => tracing::error!(error = %e, "cannot serialize a Messages event"),
            }
        }
        Ok(())
    }
}
