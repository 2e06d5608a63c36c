//! WebSocket mode: `GET /v1/responses` with `Upgrade: websocket`.
//!
//! Each text message is a `response.create` (the create body plus `type`);
//! the responses run one after another on the connection, through the same
//! preparation and engine run as HTTP, and every stream event goes out as
//! one message with the SSE `data` JSON. Failures before a run become a
//! `WebSocketErrorEvent` (`{"type":"error","status",...,"error":{...}}`).
//!
//! The connection remembers its latest unstored (`store: false`) response,
//! so the next message can continue it with `previous_response_id`; a
//! failed continuation forgets it. Closing the socket cancels the running
//! response, which still ends `cancelled` and stored.
//!
//! `generate: false` prepares a request without calling the model (Codex's
//! warm-up); the next message continuing it runs with its input (see
//! `run/warmup.rs`).
//!
//! Opened with a bearer JWT, the socket lives until the token expires: then
//! the running response is cancelled (and stored, as on a close), an error
//! message with code `token_expired` goes out, and the server closes the
//! socket (1008, "token expired").

use std::collections::VecDeque;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Extension;
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use serde_json::{Map, Value};
use tracing::Instrument;
use windlass_engine::{ClientToolsStatus, EventSink, RunOutcome, SinkClosed};
use windlass_protocol::{CreateResponseRequest, Item, ResponseStatus, StreamEvent};

use crate::client_tools_status;
use crate::error::ApiError;
use crate::guard::jwt::{self, TokenExpiry};
use crate::guard::keys::AuthedKey;
use crate::intake::{parse_json, parse_request, prepare, Admitted};
use crate::run::launch::{Keep, Launch};
use crate::run::warmup::{self, Warm};
use crate::state::AppState;

/// Fields of the HTTP create that a WebSocket `response.create` must not carry.
const HTTP_ONLY: [&str; 3] = ["stream", "stream_options", "background"];

/// Messages held while a response runs; past this the socket is not read
/// (TCP pushes back on the client) until the queue drains.
const MAX_QUEUED: usize = 8;

pub(crate) async fn upgrade(
    State(app): State<AppState>,
    key: Option<Extension<AuthedKey>>,
    expiry: Option<Extension<TokenExpiry>>,
    headers: HeaderMap,
    upgrade: Upgrade,
) -> Result<Response, ApiError> {
    let header_status = client_tools_status::from_headers(&headers)?;
    // The session's log lines keep the upgrade request's span (its id).
    let span = tracing::Span::current();
    let session = Session {
        app: app.clone(),
        key: key.map(|Extension(k)| k),
        header_status,
        kept: None,
        warm: None,
        deadline: expiry.map(|Extension(e)| e.deadline()),
    };
    Ok(upgrade
        .0
        .max_message_size(app.config.max_body_bytes)
        .on_upgrade(move |socket| session.serve(socket).instrument(span)))
}

/// The upgrade, or an OpenAI-shaped error for a plain `GET /v1/responses`.
pub(crate) struct Upgrade(WebSocketUpgrade);

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        WebSocketUpgrade::from_request_parts(parts, state)
            .await
            .map(Upgrade)
            .map_err(|e| {
                ApiError::new(
                    e.status(),
                    "invalid_request_error",
                    format!("GET /v1/responses opens WebSocket mode: {}", e.body_text()),
                )
                .code("websocket_upgrade_required")
            })
    }
}

/// The latest unstored response of this connection, ready to continue.
struct Kept {
    id: String,
    context: Vec<Item>,
}

struct Session {
    app: AppState,
    key: Option<AuthedKey>,
    header_status: Option<ClientToolsStatus>,
    kept: Option<Kept>,
    /// The latest `generate: false` request (see `run/warmup.rs`).
    warm: Option<Warm>,
    /// When the bearer JWT the socket was opened with expires.
    deadline: Option<tokio::time::Instant>,
}

type Tx = SplitSink<WebSocket, Message>;
type Rx = SplitStream<WebSocket>;

/// What the client sent, as far as the session cares.
enum Incoming {
    Create(Vec<u8>),
    Closed,
    Other,
}

async fn next_incoming(rx: &mut Rx) -> Incoming {
    match rx.next().await {
        None | Some(Err(_)) | Some(Ok(Message::Close(_))) => Incoming::Closed,
        Some(Ok(Message::Text(t))) => Incoming::Create(t.as_bytes().to_vec()),
        Some(Ok(Message::Binary(b))) => Incoming::Create(b.to_vec()),
        // Pings are answered by the library.
        Some(Ok(_)) => Incoming::Other,
    }
}

impl Session {
    async fn serve(mut self, socket: WebSocket) {
        let (mut tx, mut rx) = socket.split();
        // Messages that arrived while a response was running wait their turn.
        let mut queued: VecDeque<Vec<u8>> = VecDeque::new();
        loop {
            let bytes = match queued.pop_front() {
                Some(b) => b,
                None => tokio::select! {
                    incoming = next_incoming(&mut rx) => match incoming {
                        Incoming::Create(b) => b,
                        Incoming::Other => continue,
                        Incoming::Closed => break,
                    },
                    _ = jwt::expired(self.deadline) => {
                        send_expired(&mut tx).await;
                        return;
                    }
                },
            };
            let open = self.turn(&bytes, &mut tx, &mut rx, &mut queued).await;
            if !open {
                break;
            }
        }
        let _ = tx.close().await;
    }

    /// Handles one `response.create`; false once the client is gone.
    async fn turn(
        &mut self,
        bytes: &[u8],
        tx: &mut Tx,
        rx: &mut Rx,
        queued: &mut VecDeque<Vec<u8>>,
    ) -> bool {
        let started = std::time::Instant::now();
        let (mut req, generate) = match self.admit(bytes) {
            Ok(admitted) => admitted,
            Err(e) => return send_error(tx, e).await,
        };
        if let Some(warm) = self.warm.take() {
            if req.previous_response_id.as_deref() == Some(warm.id.as_str()) {
                warm.apply(&mut req);
            }
        }
        let warm_input = (!generate).then(|| (req.previous_response_id.clone(), req.input.clone()));
        let previous = req.previous_response_id.clone();
        let known = self.known_context(previous.as_deref());
        let admitted = prepare(&self.app, self.key.as_ref(), self.header_status, req, known);
        let Admitted {
            prepared, charge, ..
        } = match admitted.await {
            Ok(a) => a,
            Err(e) => {
                self.forget(previous.as_deref());
                return send_error(tx, e).await;
            }
        };
        if let Some((previous, input)) = warm_input {
            // The charge is dropped: no model call, nothing to count.
            drop(charge);
            let sink = &mut WsSink { tx };
            self.warm = warmup::warm(&self.app, prepared, previous, input, sink).await;
            return true;
        }
        let context = (!prepared.store()).then(|| prepared.context());
        let launch = Launch::register(&self.app, prepared, started, Keep::Nothing, Some(charge))
            .surface(crate::metrics::Surface::WebSocket);
        let (outcome, open) = run_reading(launch, tx, rx, queued, self.deadline).await;
        self.remember(&outcome, context, previous.as_deref());
        match open {
            Open::Yes => true,
            Open::Closed => false,
            Open::Expired => {
                send_expired(tx).await;
                false
            }
        }
    }

    /// Keeps a finished unstored response (`context`: what it started
    /// from) for the next message; a failed continuation forgets its parent.
    fn remember(
        &mut self,
        outcome: &RunOutcome,
        context: Option<Vec<Item>>,
        previous: Option<&str>,
    ) {
        let ended_well = outcome.failure.is_none()
            && matches!(
                outcome.response.status,
                ResponseStatus::Completed | ResponseStatus::Incomplete
            );
        match context {
            Some(mut context) if ended_well => {
                context.extend(outcome.response.output.iter().cloned());
                self.kept = Some(Kept {
                    id: outcome.response.id.clone(),
                    context,
                });
            }
            _ if !ended_well => self.forget(previous),
            _ => {}
        }
    }

    /// Parses and checks one message; nothing runs when it is refused.
    /// The flag is `generate` (false: prepare only, see `run/warmup.rs`).
    fn admit(&self, bytes: &[u8]) -> Result<(CreateResponseRequest, bool), ApiError> {
        if let Err(v) = crate::guard::limits::check(bytes, &self.app.config.limits) {
            return Err(ApiError::invalid(v.message).param(v.param).code(v.code));
        }
        let mut map: Map<String, Value> = parse_json(bytes)?;
        match map.remove("type") {
            Some(Value::String(t)) if t == "response.create" => {}
            other => {
                let got = other.map_or("nothing".to_owned(), |v| v.to_string());
                return Err(ApiError::invalid(format!(
                    "WebSocket messages must have type 'response.create', got {got}."
                ))
                .param("type")
                .code("invalid_event_type"));
            }
        }
        if let Some(field) = HTTP_ONLY.iter().find(|f| map.contains_key(**f)) {
            return Err(ApiError::invalid(format!(
                "'{field}' is not allowed in WebSocket mode: every response streams over the socket."
            ))
            .param(*field)
            .code("unsupported_parameter"));
        }
        let limit = self.app.config.connections.max_inflight_responses;
        if self.app.inflight.len() >= limit {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "Too many responses are being generated; retry shortly.",
            )
            .code("server_overloaded"));
        }
        let generate = match map.remove("generate") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => b,
            Some(_) => {
                return Err(ApiError::invalid("'generate' must be a boolean.")
                    .param("generate")
                    .code("invalid_type"))
            }
        };
        let body = serde_json::to_vec(&map).map_err(|e| ApiError::internal(e.to_string()))?;
        let mut req = parse_request(&body)?;
        // Every WebSocket response streams: the upstream call streams too.
        req.stream = Some(true);
        Ok((req, generate))
    }

    /// The kept context when `previous` names this connection's unstored response.
    fn known_context(&self, previous: Option<&str>) -> Option<Vec<Item>> {
        let kept = self.kept.as_ref()?;
        (Some(kept.id.as_str()) == previous).then(|| kept.context.clone())
    }

    fn forget(&mut self, previous: Option<&str>) {
        if self.kept.as_ref().map(|k| k.id.as_str()) == previous {
            self.kept = None;
        }
    }
}

/// Whether the socket goes on after a run.
enum Open {
    Yes,
    /// The client closed it (or the run was cancelled).
    Closed,
    /// The bearer token expired during the run.
    Expired,
}

/// Runs `launch` with the socket as its sink while reading the socket:
/// messages that arrive meanwhile wait in `queued`, and a client that
/// closes, or a `deadline` (token expiry) that passes, cancels the run
/// (which still ends `cancelled`, stored, before this returns).
async fn run_reading(
    launch: Launch,
    tx: &mut Tx,
    rx: &mut Rx,
    queued: &mut VecDeque<Vec<u8>>,
    deadline: Option<tokio::time::Instant>,
) -> (RunOutcome, Open) {
    let cancel = launch.cancel_token().clone();
    let mut sink = WsSink { tx };
    let run = launch.run(&mut sink);
    tokio::pin!(run);
    let mut open = true;
    let mut expired = false;
    let outcome = loop {
        tokio::select! {
            outcome = &mut run => break outcome,
            incoming = next_incoming(rx), if open && queued.len() < MAX_QUEUED => match incoming {
                Incoming::Create(b) => queued.push_back(b),
                Incoming::Other => {}
                Incoming::Closed => {
                    cancel.cancel();
                    open = false;
                }
            },
            _ = jwt::expired(deadline), if !expired => {
                tracing::debug!("bearer token expired: cancelling the WebSocket's response");
                cancel.cancel();
                expired = true;
            }
        }
    };
    let open = match (open, expired) {
        (false, _) => Open::Closed,
        (true, true) => Open::Expired,
        (true, false) if cancel.is_cancelled() => Open::Closed,
        (true, false) => Open::Yes,
    };
    (outcome, open)
}

/// The `token_expired` error, then a close frame (1008: policy).
async fn send_expired(tx: &mut Tx) {
    let event = serde_json::json!({
        "type": "error",
        "status": 401,
        "error": {
            "type": "invalid_request_error",
            "code": jwt::EXPIRED_CODE,
            "message": jwt::EXPIRED_MESSAGE,
            "param": null,
        },
    });
    let _ = tx.send(Message::Text(event.to_string().into())).await;
    let close = CloseFrame {
        code: 1008,
        reason: "token expired".into(),
    };
    let _ = tx.send(Message::Close(Some(close))).await;
}

/// Sends a `WebSocketErrorEvent`; false once the client is gone.
async fn send_error(tx: &mut Tx, e: ApiError) -> bool {
    let error = &e.body.error;
    let event = serde_json::json!({
        "type": "error",
        "status": e.status.as_u16(),
        "error": {
            "type": error.kind,
            // The contract requires a code; the error type stands in.
            "code": error.code.clone().unwrap_or_else(|| error.kind.clone()),
            "message": error.message,
            "param": error.param,
        },
    });
    tx.send(Message::Text(event.to_string().into()))
        .await
        .is_ok()
}

/// One message per stream event: the JSON an SSE `data:` line carries.
struct WsSink<'a> {
    tx: &'a mut Tx,
}

#[async_trait::async_trait]
impl EventSink for WsSink<'_> {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        let text = serde_json::to_string(&event).map_err(|e| {
            tracing::error!(error = %e, "cannot serialize a stream event");
            SinkClosed
        })?;
        self.tx
            .send(Message::Text(text.into()))
            .await
            .map_err(|_| SinkClosed)
    }
}
