//! What differs between upstream kinds: the request body, the response
//! decoding and the headers. Everything else (POST, retries, timeouts, the
//! SSE framing, error mapping) is shared by [`crate::HttpProvider`].

use std::collections::VecDeque;

use reqwest::header::HeaderMap;
use windlass_engine::{ModelEvent, ModelRequest, ProviderError};

/// Decodes one streamed turn from the `data` payloads of its SSE events.
///
/// Every kind's events carry their type inside the JSON, so the SSE
/// `event:` line is not needed.
pub trait EventDecoder: Send {
    /// Decodes one SSE `data` payload, appending its events to `out`.
    fn data(&mut self, data: &str, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError>;

    /// Reading stopped with `error` (end of body, idle timeout, broken
    /// connection). A turn whose end was already announced completes
    /// instead of failing.
    fn cut(
        &mut self,
        error: ProviderError,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ProviderError>;

    /// Whether the turn is over; later data is ignored.
    fn is_done(&self) -> bool;

    /// The body ended without the kind's end marker.
    fn end_of_body(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ProviderError> {
        self.cut(
            ProviderError::Interrupted("the stream ended before the turn's end event".into()),
            out,
        )
    }
}

/// One upstream wire format.
pub trait WireCodec: Send + Sync + 'static {
    /// Appended to the base URL for a model turn, e.g. `/chat/completions`.
    const TURN_PATH: &'static str;

    /// Whether the kind's reasoning is plain text (chat completions'
    /// `reasoning_content`, Anthropic's thinking), given as the reasoning
    /// summary when the client asks for one (`reasoning.summary`); a kind
    /// with real summaries sends them itself.
    const REASONING_IS_TEXT: bool = true;

    /// The kind's own token-counting endpoint: the path after the base URL
    /// and the body counting `request`, if the kind has one.
    fn count_request(
        &self,
        _request: &ModelRequest,
    ) -> Option<Result<(&'static str, Vec<u8>), ProviderError>> {
        None
    }

    /// Headers sent with every request: authentication and versions.
    fn headers(&self, api_key: Option<&str>) -> Result<HeaderMap, ProviderError>;

    /// The JSON body of one model turn.
    fn encode(&self, request: &ModelRequest) -> Result<Vec<u8>, ProviderError>;

    /// Checks, without encoding everything, that `request` can be sent.
    fn check(&self, request: &ModelRequest) -> Result<(), ProviderError> {
        self.encode(request).map(|_| ())
    }

    /// A complete (non-streamed) response body as the events a stream of
    /// the same answer would have produced.
    fn decode_body(&self, body: &[u8]) -> Result<Vec<ModelEvent>, ProviderError>;

    /// A decoder for one streamed turn.
    fn stream_decoder(&self) -> Box<dyn EventDecoder>;
}
