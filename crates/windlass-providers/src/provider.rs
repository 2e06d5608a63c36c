//! [`HttpProvider`]: one upstream of any kind behind the engine's port.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::StreamExt;
use tokio::sync::OnceCell;
use windlass_engine::{
    ModelEvent, ModelInfo, ModelProvider, ModelRequest, ModelStream, ProviderError, TokenCount,
};

use crate::chat::ChatWire;
use crate::codec::WireCodec;
use crate::config::{ChatProviderConfig, Tokenizer};
use crate::transport::Transport;

/// A model server reached over HTTP, speaking the wire format `C`.
#[derive(Debug, Clone)]
pub struct HttpProvider<C> {
    pub(crate) transport: Transport,
    turn_url: reqwest::Url,
    pub(crate) codec: C,
    /// What an `auto` tokenizer turned out to be.
    pub(crate) detected: Arc<OnceCell<Tokenizer>>,
    /// Context lengths learnt, by model.
    pub(crate) contexts: Arc<Mutex<HashMap<String, u64>>>,
}

/// A model server speaking OpenAI's `/v1/chat/completions`.
pub type ChatCompletionsProvider = HttpProvider<ChatWire>;

impl ChatCompletionsProvider {
    /// Validates the configuration and builds the HTTP client. Nothing is
    /// sent until the first call.
    pub fn new(cfg: ChatProviderConfig) -> Result<Self, ProviderError> {
        let codec = ChatWire::new(cfg.max_tokens_field);
        HttpProvider::with_codec(cfg, codec)
    }
}

impl<C: WireCodec> HttpProvider<C> {
    /// An upstream of the kind `codec` speaks.
    pub fn with_codec(cfg: ChatProviderConfig, codec: C) -> Result<Self, ProviderError> {
        let headers = codec.headers(cfg.api_key.as_deref())?;
        let transport = Transport::new(cfg, headers)?;
        let turn_url = transport.endpoint(C::TURN_PATH)?;
        transport.endpoint("/models")?;
        Ok(HttpProvider {
            transport,
            turn_url,
            codec,
            detected: Arc::default(),
            contexts: Arc::default(),
        })
    }

    /// The configuration this provider was built with.
    pub fn config(&self) -> &ChatProviderConfig {
        &self.transport.cfg
    }
}

#[async_trait::async_trait]
impl<C: WireCodec> ModelProvider for HttpProvider<C> {
    fn check(&self, request: &ModelRequest) -> Result<(), ProviderError> {
        self.codec.check(request)
    }

    async fn start(&self, request: ModelRequest) -> Result<ModelStream, ProviderError> {
        let body = Bytes::from(self.codec.encode(&request)?);
        tracing::debug!(url = %self.turn_url, model = %request.model, stream = request.stream, "upstream turn");
        let answer = self
            .transport
            .post(&self.turn_url, body, request.stream)
            .await?;
        let events = self
            .transport
            .events(
                answer,
                request.stream,
                || self.codec.stream_decoder(),
                |body| self.codec.decode_body(body),
            )
            .await?;
        let summary = C::REASONING_IS_TEXT && request.reasoning_summary.is_some();
        if !summary && request.logprobs {
            return Ok(events);
        }
        let logprobs = request.logprobs;
        Ok(Box::pin(
            events.map(move |e| e.map(|e| as_asked(e, summary, logprobs))),
        ))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        self.transport.list_models().await
    }

    async fn count_tokens(&self, request: &ModelRequest) -> Result<TokenCount, ProviderError> {
        self.codec.check(request)?;
        self.count(request).await
    }

    async fn context_length(&self, model: &str) -> Result<Option<u64>, ProviderError> {
        self.context(model).await
    }
}

/// An event as the request asked for it. `summary`: the kind's only
/// reasoning is its text, so the client asking for a summary gets that text
/// as the summary (one part), as the upstream wrote it. Log probabilities
/// an upstream sends unasked are not passed on (OpenAI shows them only when
/// `include` asks).
fn as_asked(event: ModelEvent, summary: bool, logprobs: bool) -> ModelEvent {
    match event {
        ModelEvent::ReasoningDelta(delta) if summary => ModelEvent::ReasoningSummaryDelta {
            summary_index: 0,
            delta,
        },
        ModelEvent::TextDeltaLogprobs { delta, .. } if !logprobs => ModelEvent::TextDelta(delta),
        other => other,
    }
}
