//! `Engine::count_input_tokens`: how many input tokens a create request
//! would send on its first model turn (instructions, the continued chain or
//! conversation, the input, the tools), counted by the upstream's own
//! tokenizer where it has one, else estimated and marked as such.

use windlass_protocol::{CreateResponseRequest, Input, Truncation};

use crate::engine::Engine;
use crate::error::{EngineError, RunFailure};
use crate::ports::agent::provider::{
    CountMethod, ModelProvider, ModelRequest, ProviderError, TokenCount,
};
use crate::prepared::PreparedRun;
use crate::run_context::RunContext;

/// Characters per token the estimate assumes (about right for English and
/// code with today's BPE vocabularies; it may be off by a third).
const CHARS_PER_TOKEN: usize = 4;

/// Why a count did not come back.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    /// Refused before anything was asked of the upstream (4xx).
    #[error(transparent)]
    Refused(#[from] EngineError),
    /// The upstream's tokenizer failed.
    #[error("{}", .0.message)]
    Failed(RunFailure),
}

impl Engine {
    /// Counts `req` as the loop would send it first. Nothing is stored and
    /// nothing runs; the request is checked as a create is.
    pub async fn count_input_tokens(
        &self,
        ctx: RunContext,
        mut req: CreateResponseRequest,
    ) -> Result<TokenCount, CountError> {
        // Counting neither streams nor runs in the background, and a
        // conversation alone (no input) is fine to count.
        req.stream = None;
        req.stream_options = None;
        req.background = None;
        if req.input.is_none() {
            req.input = Some(Input::Items(Vec::new()));
        }
        let truncate = req.truncation == Some(Truncation::Auto);
        let prepared = self.prepare(ctx, req).await?;
        let provider = self.inner.provider.as_ref();
        let mut request =
            crate::upstream::model_request(&prepared, &[], 0, false, &[], Default::default());
        // Counted as it would be sent: after the oldest-first cut.
        if truncate {
            request = crate::context_fit::truncated(provider, request)
                .await
                .map_err(CountError::Failed)?;
        }
        count_or_estimate(provider, &request)
            .await
            .map_err(|e| CountError::Failed(RunFailure::from_provider(&e)))
    }
}

/// The upstream's count, or Windlass's estimate when it cannot count.
pub(crate) async fn count_or_estimate(
    provider: &dyn ModelProvider,
    request: &ModelRequest,
) -> Result<TokenCount, ProviderError> {
    match provider.count_tokens(request).await {
        Err(ProviderError::Unsupported { .. }) => Ok(estimate(request)),
        other => other,
    }
}

/// A quarter of the characters of the instructions, transcript and tools
/// as JSON.
pub(crate) fn estimate(request: &ModelRequest) -> TokenCount {
    let mut chars = request.instructions.as_deref().map_or(0, str::len);
    for item in &request.transcript {
        chars += serde_json::to_string(item).map_or(0, |s| s.len());
    }
    for tool in request.tools.iter() {
        chars += tool.name.len()
            + tool.description.as_deref().map_or(0, str::len)
            + tool.parameters.to_string().len();
    }
    TokenCount {
        input_tokens: chars.div_ceil(CHARS_PER_TOKEN) as u64,
        method: CountMethod::Estimate,
    }
}

impl Engine {
    /// The input tokens of `prepared`'s first model turn (the Messages
    /// API's `count_tokens` calls it after `prepare`), estimated where the
    /// upstream cannot count. MCP servers not listed yet in the chain
    /// contribute no tools (listing happens when the run starts).
    pub async fn count_tokens(&self, prepared: &PreparedRun) -> Result<TokenCount, ProviderError> {
        let request =
            crate::upstream::model_request(prepared, &[], 0, false, &[], Default::default());
        count_or_estimate(self.inner.provider.as_ref(), &request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use windlass_protocol::Item;

    #[test]
    fn the_estimate_grows_with_the_transcript() {
        let short = ModelRequest {
            transcript: vec![Item::user_text("hi")].into(),
            ..ModelRequest::default()
        };
        let long = ModelRequest {
            transcript: vec![Item::user_text("hi".repeat(400))].into(),
            ..ModelRequest::default()
        };
        let (a, b) = (estimate(&short), estimate(&long));
        assert_eq!(a.method, CountMethod::Estimate);
        assert!(b.input_tokens >= a.input_tokens + 200, "{a:?} {b:?}");
    }
}
