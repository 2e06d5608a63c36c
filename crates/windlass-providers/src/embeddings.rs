//! An OpenAI-compatible `/v1/embeddings` upstream (llama.cpp `--embeddings`,
//! vLLM, Ollama, TEI, OpenAI): the [`Embedder`] of retrieval, and the client
//! a `/v1/embeddings` route forwards requests through. Same transport as
//! the model upstreams: pooled client, timeouts, retries before the first
//! byte on connect failures and 429/5xx.

use bytes::Bytes;
use windlass_engine::{Embedder, ProviderError};
use windlass_protocol::{
    EmbeddingInput, EmbeddingRequest, EmbeddingResponse, EmbeddingVector, EncodingFormat,
};

use crate::chat::bearer;
use crate::config::ChatProviderConfig;
use crate::transport::Transport;

/// Texts per upstream request when embedding many (servers cap their batch:
/// TEI's default is 32, llama.cpp's the slot's context).
pub const DEFAULT_BATCH: usize = 32;

/// One embedding model on one upstream.
#[derive(Debug, Clone)]
pub struct EmbeddingsClient {
    transport: Transport,
    url: reqwest::Url,
    model: String,
    batch: usize,
}

impl EmbeddingsClient {
    /// Validates the configuration and builds the HTTP client; nothing is
    /// sent until the first call. `model` is sent upstream as the model id.
    pub fn new(cfg: ChatProviderConfig, model: impl Into<String>) -> Result<Self, ProviderError> {
        let headers = bearer(cfg.api_key.as_deref())?;
        let transport = Transport::new(cfg, headers)?;
        let url = transport.endpoint("/embeddings")?;
        Ok(EmbeddingsClient {
            transport,
            url,
            model: model.into(),
            batch: DEFAULT_BATCH,
        })
    }

    /// Texts per upstream request (at least 1).
    pub fn with_batch_size(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// Sends `request` as it is (its `model` included) and returns the
    /// upstream's answer: what a `/v1/embeddings` route forwards.
    pub async fn create(
        &self,
        request: &EmbeddingRequest,
    ) -> Result<EmbeddingResponse, ProviderError> {
        let body = serde_json::to_vec(request)
            .map_err(|e| ProviderError::Protocol(format!("cannot encode the request: {e}")))?;
        let answer = self
            .transport
            .post(&self.url, Bytes::from(body), false)
            .await?;
        let body = self.transport.body(answer).await?;
        serde_json::from_slice(&body)
            .map_err(|e| ProviderError::Protocol(format!("invalid embeddings answer: {e}")))
    }

    /// One batch: float vectors in input order, checked.
    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        let request = EmbeddingRequest {
            model: self.model.clone(),
            input: EmbeddingInput::Texts(texts.to_vec()),
            encoding_format: Some(EncodingFormat::Float),
            dimensions: None,
            user: None,
        };
        let response = self.create(&request).await?;
        vectors(response, texts.len())
    }
}

/// The vectors of `response`, placed by `index`; every input exactly once.
fn vectors(response: EmbeddingResponse, expected: usize) -> Result<Vec<Vec<f32>>, ProviderError> {
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for e in response.data {
        let EmbeddingVector::Float(v) = e.embedding else {
            return Err(ProviderError::Protocol(
                "embedding is not a float array".into(),
            ));
        };
        match out.get_mut(e.index) {
            Some(slot @ None) => *slot = Some(v),
            Some(Some(_)) => {
                return Err(ProviderError::Protocol(format!(
                    "embedding {} sent twice",
                    e.index
                )))
            }
            None => {
                return Err(ProviderError::Protocol(format!(
                    "embedding index {} out of range ({expected} inputs)",
                    e.index
                )))
            }
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.ok_or_else(|| ProviderError::Protocol(format!("no embedding for input {i}")))
        })
        .collect()
}

#[async_trait::async_trait]
impl Embedder for EmbeddingsClient {
    fn model(&self) -> &str {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch) {
            out.extend(self.embed_batch(batch).await?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(v: serde_json::Value) -> EmbeddingResponse {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn vectors_follow_index_not_position() {
        let r = response(json!({"object": "list", "model": "m", "data": [
            {"object": "embedding", "index": 1, "embedding": [2.0]},
            {"object": "embedding", "index": 0, "embedding": [1.0]}
        ]}));
        assert_eq!(vectors(r, 2).unwrap(), vec![vec![1.0], vec![2.0]]);
    }

    #[test]
    fn missing_duplicate_or_stray_vectors_are_errors() {
        let one = |i: usize| json!({"object": "embedding", "index": i, "embedding": [0.5]});
        let r = |data: Vec<serde_json::Value>| {
            response(json!({"object": "list", "model": "m", "data": data}))
        };
        assert!(vectors(r(vec![one(0)]), 2)
            .unwrap_err()
            .to_string()
            .contains("input 1"));
        assert!(vectors(r(vec![one(0), one(0)]), 2)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        assert!(vectors(r(vec![one(5)]), 1)
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        let b64 = response(json!({"object": "list", "model": "m",
            "data": [{"object": "embedding", "index": 0, "embedding": "AAAAPw=="}]}));
        assert!(vectors(b64, 1).is_err());
    }
}
