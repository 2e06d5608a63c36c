//! The chat completions wire format (`/v1/chat/completions`): vLLM,
//! llama.cpp, Ollama, LiteLLM, OpenAI.

use reqwest::header::{HeaderMap, AUTHORIZATION};
use windlass_engine::{ModelEvent, ModelRequest, ProviderError};

use crate::codec::{EventDecoder, WireCodec};
use crate::config::MaxTokensField;
use crate::decode::{decode_completion, StreamDecoder};
use crate::encode::{encode_body, encode_request};
use crate::transport::secret_header;

#[derive(Debug, Clone, Copy, Default)]
pub struct ChatWire {
    max_tokens_field: MaxTokensField,
}

impl ChatWire {
    pub fn new(max_tokens_field: MaxTokensField) -> Self {
        ChatWire { max_tokens_field }
    }
}

/// `Authorization: Bearer <key>`, as OpenAI-style servers expect.
pub(crate) fn bearer(api_key: Option<&str>) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = api_key {
        headers.insert(
            AUTHORIZATION,
            secret_header(&format!("Bearer {key}"), "api_key")?,
        );
    }
    Ok(headers)
}

impl WireCodec for ChatWire {
    const TURN_PATH: &'static str = "/chat/completions";

    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ProviderError> {
        bearer(api_key)
    }

    fn encode(&self, request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
        encode_body(request, self.max_tokens_field)
    }

    fn check(&self, request: &ModelRequest) -> Result<(), ProviderError> {
        encode_request(request, self.max_tokens_field).map(|_| ())
    }

    fn decode_body(&self, body: &[u8]) -> Result<Vec<ModelEvent>, ProviderError> {
        decode_completion(body)
    }

    fn stream_decoder(&self) -> Box<dyn EventDecoder> {
        Box::new(StreamDecoder::new())
    }
}
