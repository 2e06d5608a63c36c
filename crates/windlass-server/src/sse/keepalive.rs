//! SSE keep-alives for every stream the server sends (a live run, a
//! background run's stream, a resumed one): while the stream sends nothing
//! (a long tool, a slow upstream, a run followed from another replica), an
//! SSE comment, `: keep-alive`, goes out after each interval of silence, so
//! proxies and load balancers do not close an idle stream. Clients ignore
//! comment lines.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use tokio::time::{Instant, Sleep};

/// An SSE comment line: ignored by clients, keeps the connection busy.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// `inner`, with a `: keep-alive` chunk after each `every` without output
/// (`None` or zero: never).
pub(crate) fn keep_alive<S>(inner: S, every: Option<Duration>) -> KeepAlive<S> {
    KeepAlive {
        inner,
        timer: every.filter(|d| !d.is_zero()).map(Timer::new),
        frame: KEEP_ALIVE,
    }
}

pub struct KeepAlive<S> {
    inner: S,
    timer: Option<Timer>,
    /// What goes out after a silence: [`KEEP_ALIVE`] unless a surface's
    /// grammar has its own (the Messages stream's `ping` event).
    frame: &'static [u8],
}

impl<S> KeepAlive<S> {
    /// Sends `frame` (one whole SSE frame) instead of the comment.
    pub fn frame(mut self, frame: &'static [u8]) -> Self {
        self.frame = frame;
        self
    }
}

/// The silence timer. Its deadline moves only when it fires (a chunk just
/// records the time), so a busy stream pays no timer update per chunk.
struct Timer {
    every: Duration,
    sleep: Pin<Box<Sleep>>,
    last_sent: Instant,
}

impl Timer {
    fn new(every: Duration) -> Self {
        let now = Instant::now();
        Timer {
            every,
            sleep: Box::pin(tokio::time::sleep_until(now + every)),
            last_sent: now,
        }
    }

    /// True when `every` has passed since the last chunk; re-arms itself.
    fn due(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            if self.sleep.as_mut().poll(cx).is_pending() {
                return false;
            }
            let quiet_until = self.last_sent + self.every;
            let now = Instant::now();
            if now >= quiet_until {
                self.last_sent = now;
                self.sleep.as_mut().reset(now + self.every);
                return true;
            }
            // Something was sent since the timer was set: wait out the rest.
            self.sleep.as_mut().reset(quiet_until);
        }
    }
}

impl<S: Stream<Item = Bytes> + Unpin> Stream for KeepAlive<S> {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(chunk)) => {
                if let Some(t) = this.timer.as_mut() {
                    t.last_sent = Instant::now();
                }
                Poll::Ready(Some(chunk))
            }
            Poll::Ready(None) => Poll::Ready(None),
            // A chunk of its own: one write, never inside an event.
            Poll::Pending if this.timer.as_mut().is_some_and(|t| t.due(cx)) => {
                Poll::Ready(Some(Bytes::from_static(this.frame)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
