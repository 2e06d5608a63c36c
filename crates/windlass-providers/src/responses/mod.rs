//! The OpenAI Responses API as an upstream (`/v1/responses`: OpenAI, vLLM,
//! llama.cpp's server). Windlass keeps the loop, the store and the tools:
//! each model turn is one stateless call (`store: false`) carrying the
//! whole transcript, with encrypted reasoning asked for and replayed.

mod decode;
mod encode;

use reqwest::header::HeaderMap;
use windlass_engine::{ModelEvent, ModelRequest, ProviderError};

use crate::chat::bearer;
use crate::codec::{EventDecoder, WireCodec};

pub use decode::{decode_response, ResponsesDecoder};
pub use encode::{encode_count, encode_responses};

#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesWire;

impl WireCodec for ResponsesWire {
    const TURN_PATH: &'static str = "/responses";
    const REASONING_IS_TEXT: bool = false;

    fn count_request(
        &self,
        request: &ModelRequest,
    ) -> Option<Result<(&'static str, Vec<u8>), ProviderError>> {
        Some(encode_count(request).map(|body| ("/responses/input_tokens", body)))
    }

    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ProviderError> {
        bearer(api_key)
    }

    fn encode(&self, request: &ModelRequest) -> Result<Vec<u8>, ProviderError> {
        encode_responses(request)
    }

    fn decode_body(&self, body: &[u8]) -> Result<Vec<ModelEvent>, ProviderError> {
        decode_response(body)
    }

    fn stream_decoder(&self) -> Box<dyn EventDecoder> {
        Box::new(ResponsesDecoder::default())
    }
}

#[cfg(test)]
mod tests;
