//! The embeddings port: texts in, vectors out, from one configured model.
//! Used only when an operator configured an embedding model; without one,
//! retrieval is keyword-only.

use crate::ports::agent::provider::ProviderError;

/// An embedding model (see the module doc).
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// The model's id, recorded with what it embedded: vectors of different
    /// models are never compared.
    fn model(&self) -> &str;

    /// One vector per text, in order. Implementations batch and retry as
    /// they see fit; an error means no vector for any text.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError>;
}
