//! The streamed response body: hands out encoded SSE frames with the
//! scripted pacing, then finishes, aborts (cut) or hangs (stall). Tracks
//! whether the client abandoned the body before its end.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::reply::StreamEnd;
use crate::sse::Frames;
use crate::state::DisconnectGuard;

/// What happens once every frame has been sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// End the body normally.
    Finish,
    /// Abort the connection (body error: no terminating chunk).
    Cut,
    /// Never produce anything again (until server shutdown).
    Stall,
}

impl Tail {
    pub(crate) fn of(end: &StreamEnd) -> Tail {
        match end {
            StreamEnd::Done | StreamEnd::ErrorEvent(..) => Tail::Finish,
            StreamEnd::Cut(_) => Tail::Cut,
            StreamEnd::Stall(_) => Tail::Stall,
        }
    }
}

/// Sleeps for `d`; returns `false` if the server shut down meanwhile.
pub(crate) async fn sleep_or_cancel(d: Duration, cancel: &CancellationToken) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = cancel.cancelled() => false,
    }
}

struct Pump {
    frames: Frames,
    /// Index of the next frame to send.
    next: usize,
    delay: Option<Duration>,
    tail: Tail,
    guard: DisconnectGuard,
    cancel: CancellationToken,
    finished: bool,
}

impl Pump {
    /// Ends the body on purpose with an I/O error, which makes the HTTP
    /// server drop the connection without terminating the body.
    fn abort(mut self, why: &'static str) -> Option<(io::Result<Bytes>, Pump)> {
        self.guard.disarm();
        self.finished = true;
        Some((
            Err(io::Error::new(io::ErrorKind::ConnectionAborted, why)),
            self,
        ))
    }
}

/// The body stream for `frames`. Without a delay, all frames go out as one
/// zero-copy slice; with a delay, one frame per `delay`.
pub(crate) fn body_stream(
    frames: Frames,
    delay: Option<Duration>,
    tail: Tail,
    guard: DisconnectGuard,
    cancel: CancellationToken,
) -> impl Stream<Item = io::Result<Bytes>> + Send + 'static {
    let pump = Pump {
        frames,
        next: 0,
        delay: delay.filter(|d| !d.is_zero()),
        tail,
        guard,
        cancel,
        finished: false,
    };
    futures::stream::unfold(pump, |mut p| async move {
        if p.finished {
            return None;
        }
        let total = p.frames.len();
        if p.next < total {
            let upto = match p.delay {
                Some(d) => {
                    if p.next > 0 && !sleep_or_cancel(d, &p.cancel).await {
                        return p.abort("fake upstream shut down");
                    }
                    p.next + 1
                }
                None => total,
            };
            let chunk = p
                .frames
                .buf
                .slice(p.frames.start(p.next)..p.frames.ends[upto - 1]);
            p.next = upto;
            if upto == total && p.tail == Tail::Finish {
                // The last frame is handed over: the reply was delivered.
                p.guard.disarm();
                p.finished = true;
            }
            return Some((Ok(chunk), p));
        }
        match p.tail {
            Tail::Finish => {
                p.guard.disarm();
                None
            }
            Tail::Cut => {
                // Return Pending once so the server flushes the frames already
                // handed over before the connection is torn down.
                tokio::task::yield_now().await;
                p.abort("scripted cut")
            }
            Tail::Stall => {
                p.cancel.cancelled().await;
                p.abort("fake upstream shut down")
            }
        }
    })
}
