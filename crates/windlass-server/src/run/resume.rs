//! `GET /v1/responses/{id}?stream=true&starting_after=N`: the stream of a
//! response from event N+1 on, then live until its terminal event.
//!
//! Where the events come from: the run's in-memory log when it runs in this
//! process; otherwise the stored events (a finished response, or one running
//! on another replica, whose log is flushed every lease tick and which is
//! polled until its terminal event).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use windlass_engine::{RunStore, StoredEvent};

use super::log::EventLog;
use crate::error::ApiError;
use crate::sse::{frame_json, DONE};
use crate::state::AppState;

/// How often a stream followed through the store is polled.
const POLL: Duration = Duration::from_millis(200);

const TERMINAL: [&str; 5] = [
    "response.completed",
    "response.failed",
    "response.incomplete",
    "response.cancelled",
    "response.requires_action",
];

pub async fn resume_stream(
    app: &AppState,
    tenant: &str,
    id: &str,
    after: Option<u64>,
) -> Result<Response, ApiError> {
    if let Some(log) = app.inflight.log(tenant, id) {
        return Ok(sse(
            follow_log(log, after).boxed(),
            app.config.sse_keepalive,
        ));
    }
    let Some(runs) = app.runs.clone() else {
        return Err(not_resumable(id));
    };
    let finished = app.engine.store().get(tenant, id).await?.is_some();
    let live = match finished {
        true => false,
        false => runs.get_live(tenant, id).await?.is_some(),
    };
    if !finished && !live {
        return Err(ApiError::not_found("Response", id));
    }
    if runs.events_after(tenant, id, None).await?.is_empty() && finished {
        return Err(not_resumable(id));
    }
    let stream = follow_store(runs, tenant.to_owned(), id.to_owned(), after);
    Ok(sse(stream.boxed(), app.config.sse_keepalive))
}

fn not_resumable(id: &str) -> ApiError {
    ApiError::invalid(format!(
        "Response '{id}' has no stored stream: only background responses and streams whose \
         client disconnected can be streamed again."
    ))
    .param("stream")
    .code("stream_not_resumable")
}

/// An SSE response of already framed bytes, with `: keep-alive` comments
/// after each `keep_alive` of silence (as a live stream has).
pub fn sse(
    body: futures::stream::BoxStream<'static, Bytes>,
    keep_alive: Option<Duration>,
) -> Response {
    let body = crate::sse::keepalive::keep_alive(body, keep_alive);
    crate::sse::event_stream_response(Body::from_stream(
        body.map(Ok::<_, std::convert::Infallible>),
    ))
}

/// The type of a stored event, for its `event:` line.
fn kind(json: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: String,
    }
    serde_json::from_str::<Kind>(json)
        .map(|k| k.kind)
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// Frames `events`; returns the bytes, the last number and whether the
/// terminal event was among them.
fn frame(events: &[StoredEvent]) -> (Bytes, Option<u64>, bool) {
    let mut buf = BytesMut::new();
    let mut terminal = false;
    for e in events {
        let kind = kind(&e.json);
        terminal |= TERMINAL.contains(&kind.as_str());
        frame_json(&mut buf, &kind, &e.json);
    }
    (
        buf.freeze(),
        events.last().map(|e| e.sequence_number),
        terminal,
    )
}

/// Follows an in-process log from `after` to the run's end.
pub fn follow_log(log: Arc<EventLog>, after: Option<u64>) -> impl Stream<Item = Bytes> + Send {
    let rx = log.subscribe();
    futures::stream::unfold(
        (log, rx, after, false),
        |(log, mut rx, after, done)| async move {
            if done {
                return None;
            }
            loop {
                rx.borrow_and_update();
                let (events, ended) = log.after(after);
                if !events.is_empty() {
                    let (bytes, last, _) = frame(&events);
                    return Some((bytes, (log, rx, last.or(after), false)));
                }
                if ended {
                    return Some((Bytes::from_static(DONE), (log, rx, after, true)));
                }
                if rx.changed().await.is_err() {
                    return Some((Bytes::from_static(DONE), (log, rx, after, true)));
                }
            }
        },
    )
}

/// Replays stored events after `after`, polling for more until the terminal
/// event (a run on another replica flushes its events every lease tick).
fn follow_store(
    runs: Arc<dyn RunStore>,
    tenant: String,
    id: String,
    after: Option<u64>,
) -> impl Stream<Item = Bytes> + Send {
    futures::stream::unfold((after, false), move |(after, done)| {
        let (runs, tenant, id) = (runs.clone(), tenant.clone(), id.clone());
        async move {
            if done {
                return None;
            }
            loop {
                let events = match runs.events_after(&tenant, &id, after).await {
                    Ok(e) => e,
                    Err(e) => {
                        tracing::warn!(%id, error = %e, "cannot read stored stream events");
                        return Some((Bytes::from_static(DONE), (after, true)));
                    }
                };
                if !events.is_empty() {
                    let (mut bytes, last, terminal) = frame(&events);
                    if terminal {
                        let mut all = BytesMut::from(&bytes[..]);
                        all.extend_from_slice(DONE);
                        bytes = all.freeze();
                    }
                    return Some((bytes, (last.or(after), terminal)));
                }
                // Nothing new: a run that is gone without a terminal event
                // (it ended before its events were kept) ends the stream.
                match runs.get_live(&tenant, &id).await {
                    Ok(Some(_)) => tokio::time::sleep(POLL).await,
                    _ => return Some((Bytes::from_static(DONE), (after, true))),
                }
            }
        }
    })
}
