//! The HTTP side shared by every upstream kind: one pooled client, POST
//! with retries before the first byte, timeouts and error bodies.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Client, RequestBuilder, Response, Url};
use thread_local::ThreadLocal;
use tokio::time::{timeout, timeout_at, Instant};
use windlass_engine::{ModelEvent, ModelInfo, ModelStream, ProviderError, TimeoutPhase};

use crate::codec::EventDecoder;
use crate::config::ChatProviderConfig;
use crate::http_error::{describe, send_error, status_error};
use crate::pump::{Body, Pump};
use crate::retry::{backoff, retry_after, retryable_error, retryable_status, RetryAfter};
use crate::wire::ModelList;

/// Most of an error body read for its message; the rest is not needed.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// How long an error body may take; the status alone is already known.
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(5);
/// Keep idle pooled connections a while: turns of one conversation follow
/// each other within seconds, and a fresh TCP handshake costs latency.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);

#[derive(Debug, Clone)]
pub(crate) struct Transport {
    clients: Clients,
    pub(crate) cfg: ChatProviderConfig,
}

/// One pooled client per thread that calls the upstream. A pooled
/// connection is driven by a task on the runtime that opened it; shared
/// between threads, a request made on one thread would wake another to
/// write it and again to read the answer. With a client per thread, a
/// server that keeps each connection on one thread (`windlass-server`'s
/// connection threads) never hands a request between threads.
#[derive(Debug, Clone)]
struct Clients {
    /// The first client, built at start-up so a bad configuration fails
    /// there; the others are built like it.
    first: Client,
    settings: Arc<ClientSettings>,
    per_thread: Arc<ThreadLocal<Client>>,
}

#[derive(Debug)]
struct ClientSettings {
    connect_timeout: Duration,
    headers: HeaderMap,
    ca: Option<Vec<reqwest::Certificate>>,
}

impl ClientSettings {
    fn build(&self) -> Result<Client, reqwest::Error> {
        let mut builder = Client::builder()
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .default_headers(self.headers.clone());
        if let Some(ca) = &self.ca {
            builder = builder.tls_certs_merge(ca.clone());
        }
        builder.build()
    }
}

impl Clients {
    /// This thread's client; the first one where another cannot be built
    /// (it was built from the same settings, so this should not happen).
    fn get(&self) -> &Client {
        self.per_thread
            .get_or_try(|| self.settings.build())
            .unwrap_or_else(|e| {
                tracing::warn!(error = %describe(&e), "cannot build this thread's HTTP client; sharing the first");
                &self.first
            })
    }
}

/// A successful response and the first-byte deadline of its attempt.
pub(crate) struct Answer {
    response: Response,
    deadline: Instant,
}

impl Transport {
    /// `headers` are the kind's own (authentication, versions); the
    /// configured extra headers are added to them.
    pub(crate) fn new(cfg: ChatProviderConfig, headers: HeaderMap) -> Result<Self, ProviderError> {
        crate::tls::install_crypto_provider();
        let ca = match &cfg.ca_file {
            Some(path) => Some(crate::tls::load_ca_file(path)?),
            None => None,
        };
        let settings = ClientSettings {
            connect_timeout: cfg.connect_timeout,
            headers: with_extra_headers(headers, &cfg.extra_headers)?,
            ca,
        };
        let first = settings
            .build()
            .map_err(|e| config_error(format!("cannot build the HTTP client: {}", describe(&e))))?;
        let per_thread = ThreadLocal::new();
        per_thread.get_or(|| first.clone());
        let clients = Clients {
            first,
            settings: Arc::new(settings),
            per_thread: Arc::new(per_thread),
        };
        Ok(Transport { clients, cfg })
    }

    /// `base_url` + `path`, checked.
    pub(crate) fn endpoint(&self, path: &str) -> Result<Url, ProviderError> {
        let base = self.cfg.base_url.trim().trim_end_matches('/');
        let url = Url::parse(&format!("{base}{path}"))
            .map_err(|e| config_error(format!("invalid base_url `{base}`: {e}")))?;
        match url.scheme() {
            "http" | "https" => Ok(url),
            other => Err(config_error(format!(
                "invalid base_url `{base}`: scheme `{other}` is not http or https"
            ))),
        }
    }

    /// POSTs a JSON body, asking for SSE when `stream`.
    pub(crate) async fn post(
        &self,
        url: &Url,
        body: Bytes,
        stream: bool,
    ) -> Result<Answer, ProviderError> {
        let accept = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        // Taken here, in the model turn's span, so the upstream's spans
        // join the response's trace.
        let trace = windlass_engine::trace_headers();
        self.send(url, || {
            let mut request = self
                .clients
                .get()
                .post(url.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, accept);
            for (name, value) in &trace {
                request = request.header(name.as_str(), value.as_str());
            }
            request.body(body.clone())
        })
        .await
    }

    /// Sends the request built by `build`, retrying connect failures and
    /// 429/502/503/504/529 before any response was accepted.
    async fn send(
        &self,
        url: &Url,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Answer, ProviderError> {
        let mut attempt = 0;
        loop {
            let deadline = Instant::now() + self.cfg.first_byte_timeout;
            let (error, wait) = match timeout_at(deadline, build().send()).await {
                Err(_) => return Err(ProviderError::Timeout(TimeoutPhase::FirstByte)),
                Ok(Ok(response)) if response.status().is_success() => {
                    return Ok(Answer { response, deadline })
                }
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    let wait = if retryable_status(status) {
                        match retry_after(response.headers()) {
                            RetryAfter::Absent => Some(backoff(attempt)),
                            RetryAfter::Wait(d) => Some(d),
                            RetryAfter::TooLong => None,
                        }
                    } else {
                        None
                    };
                    (read_error(response).await, wait)
                }
                Ok(Err(e)) => {
                    let error = send_error(&e);
                    let wait = retryable_error(&error).then(|| backoff(attempt));
                    (error, wait)
                }
            };
            match wait {
                Some(wait) if attempt < self.cfg.max_retries => {
                    attempt += 1;
                    tracing::warn!(
                        %url, attempt, ?wait, %error,
                        "upstream not ready, retrying"
                    );
                    tokio::time::sleep(wait).await;
                }
                _ => return Err(error),
            }
        }
    }

    /// The answer as model events: an SSE body through `decoder`, or one
    /// JSON body through `decode_body` (also when a server ignored
    /// `stream: true` or answered it with a JSON error).
    pub(crate) async fn events(
        &self,
        answer: Answer,
        stream: bool,
        decoder: impl FnOnce() -> Box<dyn EventDecoder>,
        decode_body: impl FnOnce(&[u8]) -> Result<Vec<ModelEvent>, ProviderError>,
    ) -> Result<ModelStream, ProviderError> {
        if stream && !is_json(&answer.response) {
            return self.stream(answer, decoder()).await;
        }
        let body = read_body(answer.response, self.cfg.idle_timeout).await?;
        let events = decode_body(&body)?;
        Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
    }

    /// The whole body of a non-streamed answer (a JSON endpoint such as
    /// `/embeddings`), failing if it stalls.
    pub(crate) async fn body(&self, answer: Answer) -> Result<Vec<u8>, ProviderError> {
        read_body(answer.response, self.cfg.idle_timeout).await
    }

    /// Streams an SSE response. The first chunk is awaited here so a silent
    /// upstream fails `start` with a first-byte timeout, as the port asks.
    async fn stream(
        &self,
        answer: Answer,
        decoder: Box<dyn EventDecoder>,
    ) -> Result<ModelStream, ProviderError> {
        let mut body: Body = answer
            .response
            .bytes_stream()
            .map_err(|e| ProviderError::Interrupted(describe(&e)))
            .boxed();
        let first = match timeout_at(answer.deadline, body.next()).await {
            Err(_) => return Err(ProviderError::Timeout(TimeoutPhase::FirstByte)),
            Ok(Some(Err(e))) => return Err(e),
            Ok(Some(Ok(chunk))) => Some(chunk),
            Ok(None) => None,
        };
        Ok(Box::pin(Pump::new(
            body,
            first,
            self.cfg.idle_timeout,
            decoder,
        )))
    }

    /// The server's root: `base_url` without a trailing `/v1`, where
    /// llama.cpp and vLLM serve `/tokenize`, `/props` and `/version`.
    pub(crate) fn root_endpoint(&self, path: &str) -> Result<Url, ProviderError> {
        let base = self.cfg.base_url.trim().trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let url = Url::parse(&format!("{root}{path}"))
            .map_err(|e| config_error(format!("invalid base_url `{base}`: {e}")))?;
        Ok(url)
    }

    /// POSTs a JSON body and reads the whole JSON answer (with the usual
    /// retries before the first byte).
    pub(crate) async fn post_json(
        &self,
        url: &Url,
        body: Vec<u8>,
    ) -> Result<serde_json::Value, ProviderError> {
        let body = Bytes::from(body);
        let answer = self
            .send(url, || {
                self.clients
                    .get()
                    .post(url.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, "application/json")
                    .body(body.clone())
            })
            .await?;
        json_body(answer, self.cfg.idle_timeout).await
    }

    /// GETs a JSON answer.
    pub(crate) async fn get_json(&self, url: &Url) -> Result<serde_json::Value, ProviderError> {
        let answer = self
            .send(url, || self.clients.get().get(url.clone()))
            .await?;
        json_body(answer, self.cfg.idle_timeout).await
    }

    /// `GET base_url/models` in the OpenAI list shape (Anthropic's list has
    /// the same `data[].id`).
    pub(crate) async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        let url = self.endpoint("/models")?;
        let answer = self
            .send(&url, || self.clients.get().get(url.clone()))
            .await?;
        let body = read_body(answer.response, self.cfg.idle_timeout).await?;
        let list: ModelList = serde_json::from_slice(&body)
            .map_err(|e| ProviderError::Protocol(format!("invalid model list: {e}")))?;
        Ok(list
            .data
            .into_iter()
            .map(|m| ModelInfo {
                id: m.id,
                owned_by: m.owned_by,
                created: m.created.as_ref().and_then(serde_json::Value::as_u64),
            })
            .collect())
    }
}

async fn json_body(answer: Answer, idle: Duration) -> Result<serde_json::Value, ProviderError> {
    let body = read_body(answer.response, idle).await?;
    serde_json::from_slice(&body)
        .map_err(|e| ProviderError::Protocol(format!("invalid JSON answer: {e}")))
}

fn with_extra_headers(
    mut headers: HeaderMap,
    extra: &[(String, String)],
) -> Result<HeaderMap, ProviderError> {
    for (name, value) in extra {
        let name = HeaderName::try_from(name.as_str())
            .map_err(|_| config_error(format!("invalid header name `{name}`")))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| config_error(format!("invalid value for header `{name}`")))?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// A header carrying a secret: marked sensitive so it is never logged.
pub(crate) fn secret_header(value: &str, what: &str) -> Result<HeaderValue, ProviderError> {
    let mut value = HeaderValue::try_from(value)
        .map_err(|_| config_error(format!("{what} is not a valid header value")))?;
    value.set_sensitive(true);
    Ok(value)
}

/// The port has no configuration error; an unusable configuration means the
/// upstream cannot be reached.
pub(crate) fn config_error(message: String) -> ProviderError {
    ProviderError::Connect(format!("invalid provider configuration: {message}"))
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// Reads a whole (non-streamed) body, failing if it stalls.
async fn read_body(mut response: Response, idle: Duration) -> Result<Vec<u8>, ProviderError> {
    let mut body = Vec::new();
    loop {
        match timeout(idle, response.chunk()).await {
            Err(_) => return Err(ProviderError::Timeout(TimeoutPhase::Idle)),
            Ok(Err(e)) => return Err(ProviderError::Interrupted(describe(&e))),
            Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
            Ok(Ok(None)) => return Ok(body),
        }
    }
}

/// The error for a non-success response, with as much of its body as
/// arrives quickly (the message is a nicety; the status is what matters).
async fn read_error(mut response: Response) -> ProviderError {
    let status = response.status();
    let mut body = Vec::new();
    let _ = timeout(ERROR_BODY_TIMEOUT, async {
        while body.len() < MAX_ERROR_BODY {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
    })
    .await;
    status_error(status.as_u16(), status.canonical_reason(), &body)
}
