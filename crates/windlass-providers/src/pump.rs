//! The streamed response body as a [`ModelStream`].
//!
//! A hand-written `Stream` rather than a spawned task: the body is polled
//! only when the consumer polls, and dropping the stream drops the body,
//! which closes the connection and aborts the generation upstream.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use tokio::time::{Instant, Sleep};
use windlass_engine::{ModelEvent, ProviderError, TimeoutPhase};

use crate::codec::EventDecoder;
use crate::sse::{InvalidUtf8, SseParser};

/// Body chunks, transport errors already mapped.
pub(crate) type Body = BoxStream<'static, Result<Bytes, ProviderError>>;

impl From<InvalidUtf8> for ProviderError {
    fn from(e: InvalidUtf8) -> Self {
        ProviderError::Protocol(e.to_string())
    }
}

pub(crate) struct Pump {
    /// `None` once the body ended or the turn is over.
    body: Option<Body>,
    parser: SseParser,
    decoder: Box<dyn EventDecoder>,
    events: VecDeque<ModelEvent>,
    /// Delivered after the events decoded before it.
    failure: Option<ProviderError>,
    idle: Duration,
    /// When the last chunk arrived. The timer is only re-armed when it
    /// fires early, so a chunk costs a clock read, not a timer update.
    last_chunk: Instant,
    timer: Pin<Box<Sleep>>,
}

impl Pump {
    /// `first` is the chunk already read while waiting for the first byte;
    /// `None` means the body was already over.
    pub(crate) fn new(
        body: Body,
        first: Option<Bytes>,
        idle: Duration,
        decoder: Box<dyn EventDecoder>,
    ) -> Self {
        let now = Instant::now();
        let mut pump = Pump {
            body: Some(body),
            parser: SseParser::new(),
            decoder,
            events: VecDeque::new(),
            failure: None,
            idle,
            last_chunk: now,
            timer: Box::pin(tokio::time::sleep_until(now + idle)),
        };
        match first {
            Some(chunk) => pump.feed(&chunk),
            None => pump.end_of_body(),
        }
        pump
    }

    fn feed(&mut self, chunk: &[u8]) {
        let Pump {
            parser,
            decoder,
            events,
            ..
        } = self;
        let fed = parser.feed(chunk, |data| decoder.data(data, events));
        self.settle(fed);
    }

    fn end_of_body(&mut self) {
        let Pump {
            parser,
            decoder,
            events,
            ..
        } = self;
        let ended = parser
            .finish(|data| decoder.data(data, events))
            .and_then(|()| decoder.end_of_body(events));
        self.settle(ended);
        self.body = None;
    }

    fn cut(&mut self, error: ProviderError) {
        let cut = self.decoder.cut(error, &mut self.events);
        self.settle(cut);
        self.body = None;
    }

    fn settle(&mut self, result: Result<(), ProviderError>) {
        if let Err(e) = result {
            self.failure = Some(e);
            self.body = None;
        } else if self.decoder.is_done() {
            self.release();
        }
    }

    /// Drops the body once the turn is over: data after the end event is not
    /// wanted, and hyper returns the connection to the pool by itself when
    /// the body's end was already received.
    fn release(&mut self) {
        self.body = None;
    }

    /// Polls the idle timer; true when the upstream has been silent too long.
    fn idle_expired(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            if self.timer.as_mut().poll(cx).is_pending() {
                return false;
            }
            let deadline = self.last_chunk + self.idle;
            if Instant::now() >= deadline {
                return true;
            }
            self.timer.as_mut().reset(deadline);
        }
    }
}

impl Stream for Pump {
    type Item = Result<ModelEvent, ProviderError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(event) = this.events.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            if let Some(error) = this.failure.take() {
                return Poll::Ready(Some(Err(error)));
            }
            let Some(body) = this.body.as_mut() else {
                return Poll::Ready(None);
            };
            match body.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.last_chunk = Instant::now();
                    this.feed(&chunk);
                }
                Poll::Ready(Some(Err(error))) => this.cut(error),
                Poll::Ready(None) => this.end_of_body(),
                Poll::Pending => {
                    if !this.idle_expired(cx) {
                        return Poll::Pending;
                    }
                    this.cut(ProviderError::Timeout(TimeoutPhase::Idle));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use windlass_engine::FinishReason;

    use crate::decode::StreamDecoder;

    fn chat() -> Box<dyn EventDecoder> {
        Box::new(StreamDecoder::new())
    }

    fn body(chunks: Vec<Result<&'static str, ProviderError>>, then_stall: bool) -> Body {
        let items = futures::stream::iter(
            chunks
                .into_iter()
                .map(|c| c.map(|s| Bytes::from_static(s.as_bytes()))),
        );
        if then_stall {
            items.chain(futures::stream::pending()).boxed()
        } else {
            items.boxed()
        }
    }

    async fn collect(pump: Pump) -> Vec<Result<ModelEvent, ProviderError>> {
        pump.collect().await
    }

    const TEXT: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
    const STOP: &str =
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";

    #[tokio::test(start_paused = true)]
    async fn idle_timeout_without_finish_is_an_error() {
        let pump = Pump::new(
            body(vec![], true),
            Some(Bytes::from_static(TEXT.as_bytes())),
            Duration::from_secs(3),
            chat(),
        );
        let out = collect(pump).await;
        assert_eq!(
            out,
            vec![
                Ok(ModelEvent::TextDelta("hi".into())),
                Err(ProviderError::Timeout(TimeoutPhase::Idle))
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn idle_timeout_after_finish_completes_the_turn() {
        let pump = Pump::new(
            body(vec![Ok(STOP)], true),
            Some(Bytes::from_static(TEXT.as_bytes())),
            Duration::from_secs(3),
            chat(),
        );
        let out = collect(pump).await;
        assert_eq!(
            out,
            vec![
                Ok(ModelEvent::TextDelta("hi".into())),
                Ok(ModelEvent::Finished(FinishReason::Stop))
            ]
        );
    }

    #[tokio::test]
    async fn transport_error_mid_stream_is_interrupted() {
        let cut = ProviderError::Interrupted("reset".into());
        let pump = Pump::new(
            body(vec![Err(cut.clone())], false),
            Some(Bytes::from_static(TEXT.as_bytes())),
            Duration::from_secs(3),
            chat(),
        );
        let out = collect(pump).await;
        assert_eq!(out, vec![Ok(ModelEvent::TextDelta("hi".into())), Err(cut)]);
    }

    #[tokio::test]
    async fn empty_body_is_interrupted() {
        let pump = Pump::new(body(vec![], false), None, Duration::from_secs(3), chat());
        let out = collect(pump).await;
        assert!(
            matches!(out.as_slice(), [Err(ProviderError::Interrupted(_))]),
            "{out:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn done_ends_the_stream_without_waiting_for_the_body() {
        // The body never ends after [DONE]; the stream must end anyway.
        let pump = Pump::new(
            body(vec![Ok(STOP), Ok("data: [DONE]\n\n")], true),
            Some(Bytes::from_static(TEXT.as_bytes())),
            Duration::from_secs(3600),
            chat(),
        );
        let started = Instant::now();
        let out = collect(pump).await;
        assert_eq!(out.len(), 2);
        assert_eq!(started.elapsed(), Duration::ZERO);
    }
}
