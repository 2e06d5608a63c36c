//! The SSE surface: each event serialized once and written in one piece;
//! events that are ready together are handed to the HTTP body together.

use std::task::Poll;

use bytes::{Bytes, BytesMut};
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
    if let Err(e) = serde_json::to_writer(&mut buf, event) {
        // Serializing our own types cannot fail; if it ever does, say so and
        // keep the stream well-formed.
        tracing::error!(event = kind, error = %e, "cannot serialize a stream event");
        buf.truncate(b"event: \ndata: ".len() + kind.len());
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

/// A coalesced body chunk stops growing past this size (a bound on the
/// copy, not a wait: nothing ever waits for more events).
const MAX_CHUNK: usize = 64 * 1024;

/// The SSE body: the frames from `rx`, where every frame already queued when
/// the body is polled goes out in the same chunk.
///
/// When the engine outruns the connection (a burst of upstream tokens, a
/// busy runtime), this turns N queued frames into one body chunk: one pass
/// through hyper's chunked encoder and one buffer in its `writev` instead
/// of N. A frame is never held back: the first one is returned as soon as
/// it is there, with whatever else is there already.
pub fn body_stream(mut rx: mpsc::Receiver<Bytes>) -> impl futures::Stream<Item = Bytes> {
    futures::stream::poll_fn(move |cx| {
        let first = match rx.poll_recv(cx) {
            Poll::Ready(Some(first)) => first,
            other => return other,
        };
        let Ok(second) = rx.try_recv() else {
            return Poll::Ready(Some(first));
        };
        let mut chunk = BytesMut::with_capacity((first.len() + second.len()) * 4);
        chunk.extend_from_slice(&first);
        chunk.extend_from_slice(&second);
        while chunk.len() < MAX_CHUNK {
            match rx.try_recv() {
                Ok(next) => chunk.extend_from_slice(&next),
                Err(_) => break,
            }
        }
        Poll::Ready(Some(chunk.freeze()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn queued_frames_share_a_chunk_and_none_waits() {
        let (tx, rx) = mpsc::channel(16);
        let mut body = Box::pin(body_stream(rx));
        for part in ["a", "b", "c"] {
            tx.send(Bytes::from(part)).await.expect("send");
        }
        assert_eq!(body.next().await, Some(Bytes::from("abc")));

        // A lone frame is delivered alone, at once.
        tx.send(Bytes::from("d")).await.expect("send");
        assert_eq!(body.next().await, Some(Bytes::from("d")));

        drop(tx);
        assert_eq!(body.next().await, None);
    }
}
