//! Anthropic's Messages API as an upstream (`/v1/messages`): text, images,
//! tool use and results, thinking blocks as reasoning items (replayed with
//! their signature), streaming events and usage with cache tokens.

mod decode;
mod encode;
mod wire;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use windlass_engine::{ModelEvent, ModelRequest, ProviderError};

use crate::codec::{EventDecoder, WireCodec};
use crate::transport::secret_header;

pub use decode::{decode_message, AnthropicDecoder};
pub use encode::{encode_count, encode_messages_request};

/// The API version every request names (the one Anthropic documents for
/// the Messages API; newer features come as beta headers, not versions).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone, Copy, Default)]
pub struct AnthropicWire;

impl WireCodec for AnthropicWire {
    const TURN_PATH: &'static str = "/messages";

    fn count_request(
        &self,
        request: &ModelRequest,
    ) -> Option<Result<(&'static str, Vec<u8>), ProviderError>> {
        Some(encode_count(request).map(|body| ("/messages/count_tokens", body)))
    }

    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = api_key {
            headers.insert(
                HeaderName::from_static("x-api-key"),
                secret_header(key, "api_key")?,
            );
        }
        Ok(headers)
    }

    fn encode(&self, request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
        encode_messages_request(request)
    }

    fn decode_body(&self, body: &[u8]) -> Result<Vec<ModelEvent>, ProviderError> {
        decode_message(body)
    }

    fn stream_decoder(&self) -> Box<dyn EventDecoder> {
        Box::new(AnthropicDecoder::default())
    }
}

#[cfg(test)]
mod tests;
