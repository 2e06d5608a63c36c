//! The OpenAI error shape: `{"error": {"message", "type", "param", "code"}}`.

use serde::{Deserialize, Serialize};

/// The body of every 4xx/5xx answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them.
#[allow(missing_docs)]
pub struct ErrorBody {
    pub error: ErrorObject,
}

/// The `error` object: message, `type`, the offending `param` and a `code`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them (`kind` is
// `type`).
#[allow(missing_docs)]
pub struct ErrorObject {
    pub message: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub param: Option<String>,
    pub code: Option<String>,
}

/// The payload of a streamed `error` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror the OpenResponses contract (openapi.json), named as it names them (`kind` is
// `type`).
#[allow(missing_docs)]
pub struct ErrorPayload {
    #[serde(rename = "type")]
    pub kind: String,
    pub code: Option<String>,
    pub message: String,
    pub param: Option<String>,
}
