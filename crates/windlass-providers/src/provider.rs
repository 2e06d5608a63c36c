//! [`HttpProvider`]: one upstream of any kind behind the engine's port.

use bytes::Bytes;
use windlass_engine::{ModelInfo, ModelProvider, ModelRequest, ModelStream, ProviderError};

use crate::chat::ChatWire;
use crate::codec::WireCodec;
use crate::config::ChatProviderConfig;
use crate::transport::Transport;

/// A model server reached over HTTP, speaking the wire format `C`.
#[derive(Debug, Clone)]
pub struct HttpProvider<C> {
    transport: Transport,
    turn_url: reqwest::Url,
    codec: C,
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
        self.transport
            .events(
                answer,
                request.stream,
                || self.codec.stream_decoder(),
                |body| self.codec.decode_body(body),
            )
            .await
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        self.transport.list_models().await
    }
}
