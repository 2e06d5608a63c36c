//! [`ChatCompletionsProvider`]: the HTTP side of an OpenAI-compatible upstream.

use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Client, RequestBuilder, Response, Url};
use tokio::time::{timeout, timeout_at, Instant};
use windlass_engine::{
    ModelInfo, ModelProvider, ModelRequest, ModelStream, ProviderError, TimeoutPhase,
};

use crate::config::ChatProviderConfig;
use crate::decode::decode_completion;
use crate::encode::encode_body;
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

/// A model server speaking OpenAI's `/v1/chat/completions`.
#[derive(Debug, Clone)]
pub struct ChatCompletionsProvider {
    /// One pooled client: connections are kept alive across turns.
    client: Client,
    chat_url: Url,
    models_url: Url,
    cfg: ChatProviderConfig,
}

impl ChatCompletionsProvider {
    /// Validates the configuration and builds the HTTP client. Nothing is
    /// sent until the first call.
    pub fn new(cfg: ChatProviderConfig) -> Result<Self, ProviderError> {
        let base = cfg.base_url.trim().trim_end_matches('/');
        let chat_url = endpoint(base, "/chat/completions")?;
        let models_url = endpoint(base, "/models")?;
        let client = Client::builder()
            .connect_timeout(cfg.connect_timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .default_headers(default_headers(&cfg)?)
            .build()
            .map_err(|e| config_error(format!("cannot build the HTTP client: {}", describe(&e))))?;
        Ok(ChatCompletionsProvider {
            client,
            chat_url,
            models_url,
            cfg,
        })
    }

    /// The configuration this provider was built with.
    pub fn config(&self) -> &ChatProviderConfig {
        &self.cfg
    }

    /// Sends the request built by `build`, retrying connect failures and
    /// 429/502/503/504 before any response was accepted. Returns the
    /// successful response and the first-byte deadline of its attempt.
    async fn send(
        &self,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<(Response, Instant), ProviderError> {
        let mut attempt = 0;
        loop {
            let deadline = Instant::now() + self.cfg.first_byte_timeout;
            let (error, wait) = match timeout_at(deadline, build().send()).await {
                Err(_) => return Err(ProviderError::Timeout(TimeoutPhase::FirstByte)),
                Ok(Ok(response)) if response.status().is_success() => {
                    return Ok((response, deadline))
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
                        url = %self.chat_url, attempt, ?wait, %error,
                        "upstream not ready, retrying"
                    );
                    tokio::time::sleep(wait).await;
                }
                _ => return Err(error),
            }
        }
    }

    /// Streams an SSE response. The first chunk is awaited here so a silent
    /// upstream fails `start` with a first-byte timeout, as the port asks.
    async fn stream(
        &self,
        response: Response,
        deadline: Instant,
    ) -> Result<ModelStream, ProviderError> {
        let mut body: Body = response
            .bytes_stream()
            .map_err(|e| ProviderError::Interrupted(describe(&e)))
            .boxed();
        let first = match timeout_at(deadline, body.next()).await {
            Err(_) => return Err(ProviderError::Timeout(TimeoutPhase::FirstByte)),
            Ok(Some(Err(e))) => return Err(e),
            Ok(Some(Ok(chunk))) => Some(chunk),
            Ok(None) => None,
        };
        Ok(Box::pin(Pump::new(body, first, self.cfg.idle_timeout)))
    }
}

#[async_trait::async_trait]
impl ModelProvider for ChatCompletionsProvider {
    fn check(&self, request: &ModelRequest) -> Result<(), ProviderError> {
        crate::encode::encode_request(request, self.config().max_tokens_field).map(|_| ())
    }

    async fn start(&self, request: ModelRequest) -> Result<ModelStream, ProviderError> {
        let body = Bytes::from(encode_body(&request, self.cfg.max_tokens_field)?);
        let accept = if request.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        tracing::debug!(url = %self.chat_url, model = %request.model, stream = request.stream, "upstream turn");
        let (response, deadline) = self
            .send(|| {
                self.client
                    .post(self.chat_url.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, accept)
                    .body(body.clone())
            })
            .await?;
        // A server that ignores `stream: true` (or answers it with a JSON
        // error) sends one JSON body; decode it as such.
        if request.stream && !is_json(&response) {
            return self.stream(response, deadline).await;
        }
        let body = read_body(response, self.cfg.idle_timeout).await?;
        let events = decode_completion(&body)?;
        Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        let (response, _) = self
            .send(|| self.client.get(self.models_url.clone()))
            .await?;
        let body = read_body(response, self.cfg.idle_timeout).await?;
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

fn endpoint(base: &str, path: &str) -> Result<Url, ProviderError> {
    let url = Url::parse(&format!("{base}{path}"))
        .map_err(|e| config_error(format!("invalid base_url `{base}`: {e}")))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(config_error(format!(
            "invalid base_url `{base}`: scheme `{other}` is not http or https"
        ))),
    }
}

fn default_headers(cfg: &ChatProviderConfig) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = &cfg.api_key {
        let mut value = HeaderValue::try_from(format!("Bearer {key}"))
            .map_err(|_| config_error("api_key is not a valid header value".into()))?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in &cfg.extra_headers {
        let name = HeaderName::try_from(name.as_str())
            .map_err(|_| config_error(format!("invalid header name `{name}`")))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| config_error(format!("invalid value for header `{name}`")))?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// The port has no configuration error; an unusable configuration means the
/// upstream cannot be reached.
fn config_error(message: String) -> ProviderError {
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
