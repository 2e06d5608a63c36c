//! Token counting for a prepared request: the first turn's upstream request
//! (instructions, history and input, the tools known at prepare), counted
//! by the provider that would serve it. Surfaces that count input tokens
//! (the Messages API's `count_tokens`) call this after `prepare`, so the
//! count covers exactly what the first turn would send.

use crate::engine::Engine;
use crate::ports::agent::provider::{ProviderError, TokenCount};
use crate::prepared::PreparedRun;
use crate::upstream::model_request;

impl Engine {
    /// The input tokens of `prepared`'s first model turn. MCP servers not
    /// listed yet in the chain contribute no tools (listing happens when
    /// the run starts).
    pub async fn count_tokens(&self, prepared: &PreparedRun) -> Result<TokenCount, ProviderError> {
        let request = model_request(prepared, &[], 0, false, None);
        self.provider().count_tokens(&request).await
    }
}
