//! The SSE surface: the engine runs inside the response body.
//!
//! The run is polled by the HTTP connection's own task whenever the body is
//! polled, and writes framed events into an outbox the body drains. A
//! streamed token thus costs one task wake-up (upstream bytes in, SSE bytes
//! out), not three (upstream reader, engine task, channel to the connection
//! task). Everything the run framed since the last poll leaves as one chunk.
//!
//! A client that hangs up makes hyper drop the body: the run is then
//! cancelled and moved to a task of its own (see `run/in_place.rs`).
//!
//! While the run sends nothing (a long tool, a slow upstream), the body
//! writes SSE comment keep-alives (see `keepalive.rs`).

pub(crate) mod keepalive;
pub(crate) mod obfuscate;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::sync::CancellationToken;
use windlass_engine::{EventSink, SinkClosed};
use windlass_protocol::StreamEvent;

use keepalive::{keep_alive, KeepAlive};

use crate::run::in_place::InPlace;
use crate::run::log::EventLog;

pub use keepalive::KEEP_ALIVE;

pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// A `text/event-stream` response over `body`, with the headers every
/// streaming route sends: no caching, and no buffering in a proxy (nginx
/// honours `x-accel-buffering`), so each event leaves as it is written.
pub(crate) fn event_stream_response(body: axum::body::Body) -> axum::response::Response {
    use axum::http::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
    let mut response = axum::response::Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// Framed bytes written by the run, not yet taken by the body.
#[derive(Default)]
struct Outbox {
    buf: BytesMut,
    /// The body is gone: nobody will read again.
    closed: bool,
    /// A send waiting for the body to drain a full outbox.
    waiting: Option<Waker>,
}

type Shared = Arc<Mutex<Outbox>>;

/// The run and the body share one task, so this lock is never contended;
/// it exists because the body must be `Send`.
fn lock(outbox: &Shared) -> MutexGuard<'_, Outbox> {
    outbox.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Frames events as `event: X\ndata: {json}\n\n` straight into the outbox.
pub struct SseSink {
    outbox: Shared,
    /// Past this many unread bytes, `send` waits for the client.
    limit: usize,
    /// Keeps a copy of each event's JSON for stream resume.
    log: Option<Arc<EventLog>>,
    /// Pads delta events (`stream_options.include_obfuscation`, see
    /// `obfuscate.rs`).
    obfuscate: bool,
}

impl SseSink {
    /// Turns the padding of delta events on or off (on by default, as
    /// OpenAI's streams).
    pub fn obfuscation(&mut self, on: bool) {
        self.obfuscate = on;
    }

    /// Appends the `[DONE]` sentinel that ends an OpenAI-style stream.
    pub fn done(&self) {
        lock(&self.outbox).buf.extend_from_slice(DONE);
    }

    /// Writes one frame of another surface's grammar (`event: kind`, `data:
    /// json`), waiting like [`EventSink::send`] while the client is behind.
    /// Such frames are not kept for resume.
    pub async fn send_frame(&mut self, kind: &str, json: &[u8]) -> Result<(), SinkClosed> {
        std::future::poll_fn(|cx| {
            let mut outbox = lock(&self.outbox);
            if outbox.closed {
                return Poll::Ready(Err(SinkClosed));
            }
            if outbox.buf.len() >= self.limit {
                outbox.waiting = Some(cx.waker().clone());
                return Poll::Pending;
            }
            frame_json_bytes(&mut outbox.buf, kind, json);
            Poll::Ready(Ok(()))
        })
        .await
    }
}

/// Writes one frame at the end of `buf`; returns where its JSON starts.
fn frame_into(buf: &mut BytesMut, event: &StreamEvent, obfuscate: bool) -> Option<usize> {
    let kind = event.event_type();
    let start = buf.len();
    buf.extend_from_slice(b"event: ");
    buf.extend_from_slice(kind.as_bytes());
    buf.extend_from_slice(b"\ndata: ");
    let json = buf.len();
    if let Err(e) = serde_json::to_writer(buf.writer(), event) {
        // Serializing our own types cannot fail; if it ever does, say so and
        // drop the partial frame rather than break the stream's framing.
        tracing::error!(event = kind, error = %e, "cannot serialize a stream event");
        buf.truncate(start);
        return None;
    }
    if obfuscate {
        obfuscate::pad(buf, json, kind);
    }
    buf.extend_from_slice(b"\n\n");
    Some(json)
}

/// Frames an already serialized event (a replayed one).
pub fn frame_json(buf: &mut BytesMut, kind: &str, json: &str) {
    frame_json_bytes(buf, kind, json.as_bytes());
}

fn frame_json_bytes(buf: &mut BytesMut, kind: &str, json: &[u8]) {
    buf.extend_from_slice(b"event: ");
    buf.extend_from_slice(kind.as_bytes());
    buf.extend_from_slice(b"\ndata: ");
    buf.extend_from_slice(json);
    buf.extend_from_slice(b"\n\n");
}

#[async_trait::async_trait]
impl EventSink for SseSink {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        let mut event = Some(event);
        std::future::poll_fn(|cx| {
            let mut outbox = lock(&self.outbox);
            if outbox.closed {
                // A resumable stream keeps its events to the end (the run
                // is cancelled by the body's drop, not by this error).
                if let (Some(log), Some(event)) = (&self.log, event.take()) {
                    if let Ok(json) = serde_json::to_string(&event) {
                        log.push(event.sequence_number, json);
                    }
                    return Poll::Ready(Ok(()));
                }
                return Poll::Ready(Err(SinkClosed));
            }
            if outbox.buf.len() >= self.limit {
                outbox.waiting = Some(cx.waker().clone());
                return Poll::Pending;
            }
            if let Some(event) = event.take() {
                let json = frame_into(&mut outbox.buf, &event, self.obfuscate);
                if let (Some(log), Some(at)) = (&self.log, json) {
                    // The JSON just framed, without the closing blank line.
                    let bytes = &outbox.buf[at..outbox.buf.len() - 2];
                    log.push(
                        event.sequence_number,
                        String::from_utf8_lossy(bytes).into_owned(),
                    );
                }
            }
            Poll::Ready(Ok(()))
        })
        .await
    }
}

/// The SSE response body: drives the run and hands out what it framed.
pub struct SseBody {
    run: InPlace<()>,
    outbox: Shared,
    log: Option<Arc<EventLog>>,
}

impl SseBody {
    /// A body whose run is `start(sink)`; `cancel` is the run's token, fired
    /// if the client leaves before the run ends.
    pub fn new<F, Fut>(limit: usize, cancel: CancellationToken, start: F) -> SseBody
    where
        F: FnOnce(SseSink) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        SseBody::recording(limit, cancel, None, start)
    }

    /// [`new`](Self::new), keeping every event in `log` too; a client that
    /// leaves before the end makes the log persist, so the stream can be
    /// resumed from the store.
    pub fn recording<F, Fut>(
        limit: usize,
        cancel: CancellationToken,
        log: Option<Arc<EventLog>>,
        start: F,
    ) -> SseBody
    where
        F: FnOnce(SseSink) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let outbox = Shared::default();
        let sink = SseSink {
            outbox: outbox.clone(),
            limit: limit.max(1),
            log: log.clone(),
            obfuscate: true,
        };
        SseBody {
            run: InPlace::new(start(sink), cancel),
            outbox,
            log,
        }
    }

    /// Sends `: keep-alive` after each `every` without other output
    /// (`None`: never).
    pub fn keep_alive(self, every: Option<Duration>) -> KeepAlive<SseBody> {
        keep_alive(self, every)
    }

    /// [`keep_alive`](Self::keep_alive) with another surface's keep-alive
    /// frame (the Messages stream's `ping` event).
    pub fn keep_alive_with(
        self,
        every: Option<Duration>,
        frame: &'static [u8],
    ) -> KeepAlive<SseBody> {
        keep_alive(self, every).frame(frame)
    }
}

impl futures::Stream for SseBody {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = self.get_mut();
        if !this.run.is_finished() {
            let _ = Pin::new(&mut this.run).poll(cx);
        }
        let mut outbox = lock(&this.outbox);
        if !outbox.buf.is_empty() {
            let chunk = outbox.buf.split().freeze();
            if let Some(waker) = outbox.waiting.take() {
                waker.wake();
            }
            return Poll::Ready(Some(chunk));
        }
        if this.run.is_finished() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

impl Drop for SseBody {
    /// Sends fail from now on; an unfinished run is moved off by `InPlace`.
    fn drop(&mut self) {
        lock(&self.outbox).closed = true;
        if let Some(log) = &self.log {
            if !self.run.is_finished() {
                log.persist();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use tokio::time::Instant;
    use windlass_protocol::EventData;

    fn event(n: u64) -> StreamEvent {
        StreamEvent {
            data: EventData::OutputTextDelta {
                item_id: "msg_1".into(),
                output_index: 0,
                content_index: 0,
                delta: format!("t{n}"),
                logprobs: Vec::new(),
            },
            sequence_number: n,
        }
    }

    #[tokio::test]
    async fn frames_ready_together_share_a_chunk_and_the_run_ends_the_body() {
        let (step_tx, mut step_rx) = tokio::sync::mpsc::channel::<()>(1);
        let mut body = SseBody::new(1 << 16, CancellationToken::new(), |mut sink| async move {
            sink.send(event(0)).await.expect("open");
            sink.send(event(1)).await.expect("open");
            step_rx.recv().await;
            sink.send(event(2)).await.expect("open");
            sink.done();
        });
        let first = body.next().await.expect("chunk");
        let text = std::str::from_utf8(&first).expect("utf-8");
        assert!(text.starts_with("event: response.output_text.delta\ndata: {"));
        assert_eq!(text.matches("\n\n").count(), 2, "{text}");
        step_tx.send(()).await.expect("run waiting");
        let second = body.next().await.expect("chunk");
        assert!(second.ends_with(DONE));
        assert!(std::str::from_utf8(&second)
            .expect("utf-8")
            .contains("\"t2\""));
        assert_eq!(body.next().await, None);
    }

    #[tokio::test]
    async fn a_full_outbox_waits_for_the_client() {
        let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = sent.clone();
        let mut body = SseBody::new(1, CancellationToken::new(), |mut sink| async move {
            for n in 0..3 {
                sink.send(event(n)).await.expect("open");
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        // Limit 1 byte: each poll lets exactly one more frame in.
        for n in 0..3u64 {
            let chunk = body.next().await.expect("chunk");
            assert!(std::str::from_utf8(&chunk)
                .expect("utf-8")
                .contains(&format!("\"t{n}\"")));
            assert_eq!(
                chunk.iter().filter(|&&b| b == b'\n').count(),
                3,
                "one frame per chunk"
            );
        }
        assert_eq!(body.next().await, None);
        assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn silence_gets_keep_alive_comments_and_output_resets_the_timer() {
        let (step_tx, mut step_rx) = tokio::sync::mpsc::channel::<()>(1);
        let every = Duration::from_secs(15);
        let mut body = SseBody::new(1 << 16, CancellationToken::new(), |mut sink| async move {
            step_rx.recv().await;
            tokio::time::sleep(Duration::from_secs(5)).await;
            sink.send(event(0)).await.expect("open");
            step_rx.recv().await;
            sink.done();
        })
        .keep_alive(Some(every));
        // Paused clock: the runtime jumps to the timer when all is idle.
        assert_eq!(body.next().await.as_deref(), Some(KEEP_ALIVE));
        assert_eq!(body.next().await.as_deref(), Some(KEEP_ALIVE));
        step_tx.send(()).await.expect("run waiting");
        let event_chunk = body.next().await.expect("chunk");
        assert!(event_chunk.starts_with(b"event: "));
        let sent_at = Instant::now();
        assert_eq!(body.next().await.as_deref(), Some(KEEP_ALIVE));
        // A full interval after the event, not after the last comment.
        assert_eq!(Instant::now() - sent_at, every);
        step_tx.send(()).await.expect("run waiting");
        assert_eq!(body.next().await.as_deref(), Some(DONE));
        assert_eq!(body.next().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn no_keep_alive_unless_asked() {
        let mut body = SseBody::new(1 << 16, CancellationToken::new(), |mut sink| async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            sink.send(event(0)).await.expect("open");
        });
        let first = body.next().await.expect("chunk");
        assert!(first.starts_with(b"event: "), "no comment before the event");
    }

    #[tokio::test]
    async fn a_dropped_body_cancels_the_run_and_lets_it_finish() {
        let cancel = CancellationToken::new();
        let (end_tx, end_rx) = tokio::sync::oneshot::channel();
        let token = cancel.clone();
        let mut body = SseBody::new(1 << 16, cancel.clone(), |mut sink| async move {
            sink.send(event(0)).await.expect("open");
            token.cancelled().await;
            // The client is gone: further sends fail, the run still ends.
            let after = sink.send(event(1)).await;
            let _ = end_tx.send(after);
        });
        assert!(body.next().await.is_some());
        drop(body);
        assert!(cancel.is_cancelled());
        let after = end_rx.await.expect("run finished in its own task");
        assert_eq!(after, Err(SinkClosed));
    }
}
