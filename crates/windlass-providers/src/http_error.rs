//! Upstream failures -> [`ProviderError`]: HTTP error bodies, error objects
//! inside a 200 body, and transport errors.

use std::error::Error as _;

use serde_json::Value;
use windlass_engine::{ProviderError, TimeoutPhase};

/// Longest upstream error text passed on; bodies can be whole HTML pages.
const MAX_MESSAGE_CHARS: usize = 500;

/// The error for an HTTP error status, with the upstream's own message:
/// `error.message` (or the other shapes servers use) when the body is JSON,
/// else the body text, truncated.
pub(crate) fn status_error(status: u16, reason: Option<&str>, body: &[u8]) -> ProviderError {
    // The upstream's text about a refused key can quote part of the key,
    // and is about the operator's setup: never passed on.
    if matches!(status, 401 | 403) {
        return ProviderError::Status {
            status,
            message: "the upstream refused the gateway's credentials; the operator should check the upstream API key".to_owned(),
            code: Some("upstream_auth_failed".to_owned()),
        };
    }
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        if let Some(err) = value.get("error") {
            return with_status(error_from_value(err, status), status);
        }
        if let Some(message) = ["message", "detail"]
            .iter()
            .find_map(|k| value.get(*k))
            .map(value_text)
        {
            return ProviderError::Status {
                status,
                message: truncate(message.trim()),
                code: None,
            };
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let message = if text.is_empty() {
        reason.unwrap_or("no error message").to_owned()
    } else {
        truncate(text)
    };
    ProviderError::Status {
        status,
        message,
        code: None,
    }
}

fn with_status(error: ProviderError, status: u16) -> ProviderError {
    match error {
        ProviderError::Status { message, code, .. } => ProviderError::Status {
            status,
            message,
            code,
        },
        other => other,
    }
}

/// An `error` value: `{"message", "code", "type"}` (OpenAI, vLLM, LiteLLM)
/// or a bare string (Ollama). A numeric `code` that is an HTTP error status
/// (vLLM puts the status there) becomes the status; otherwise `status`.
pub(crate) fn error_from_value(err: &Value, status: u16) -> ProviderError {
    let Value::Object(obj) = err else {
        return ProviderError::Status {
            status,
            message: truncate(&value_text(err)),
            code: None,
        };
    };
    let message = obj
        .get("message")
        .or_else(|| obj.get("detail"))
        .map(value_text)
        .unwrap_or_else(|| err.to_string());
    let numeric = obj.get("code").and_then(Value::as_u64);
    let status = match numeric {
        Some(n @ 400..=599) => n as u16,
        _ => status,
    };
    let code = match obj.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => obj.get("type").and_then(Value::as_str).map(str::to_owned),
    };
    ProviderError::Status {
        status,
        message: truncate(&message),
        code,
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A transport error while sending the request (before any response).
pub(crate) fn send_error(e: &reqwest::Error) -> ProviderError {
    if e.is_timeout() {
        // Only the connect timeout is set on the client; the other phases
        // are timed by the provider itself.
        return ProviderError::Timeout(TimeoutPhase::Connect);
    }
    // Refused, unresolvable, reset before the response: the request never
    // produced anything, so all of these count as unreachable.
    ProviderError::Connect(describe(e))
}

/// reqwest's own message is "error sending request for url (...)"; the
/// useful part ("Connection refused") is in the source chain.
pub(crate) fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(e: ProviderError) -> (u16, String, Option<String>) {
        match e {
            ProviderError::Status {
                status,
                message,
                code,
            } => (status, message, code),
            other => panic!("not a status error: {other:?}"),
        }
    }

    #[test]
    fn openai_error_object() {
        let body = br#"{"error":{"message":"model not loaded","type":"invalid_request_error","code":"model_not_found"}}"#;
        let (status, message, code) = parts(status_error(404, None, body));
        assert_eq!(status, 404);
        assert_eq!(message, "model not loaded");
        assert_eq!(code.as_deref(), Some("model_not_found"));
    }

    #[test]
    fn error_type_is_the_code_when_no_code() {
        let body = br#"{"error":{"message":"bad","type":"BadRequestError"}}"#;
        let (_, _, code) = parts(status_error(400, None, body));
        assert_eq!(code.as_deref(), Some("BadRequestError"));
    }

    #[test]
    fn ollama_string_error_and_fastapi_detail() {
        let (_, message, _) = parts(status_error(
            404,
            None,
            br#"{"error":"model 'x' not found"}"#,
        ));
        assert_eq!(message, "model 'x' not found");
        let (_, message, _) = parts(status_error(422, None, br#"{"detail":"field required"}"#));
        assert_eq!(message, "field required");
    }

    #[test]
    fn text_body_is_truncated() {
        let body = "x".repeat(2000);
        let (status, message, code) = parts(status_error(502, None, body.as_bytes()));
        assert_eq!(status, 502);
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(message.ends_with('…'));
        assert_eq!(code, None);
    }

    #[test]
    fn upstream_auth_failures_never_carry_the_upstream_text() {
        let body = br#"{"error":{"message":"Incorrect API key provided: sk-up***xyz","code":"invalid_api_key"}}"#;
        for status in [401, 403] {
            let (s, message, code) = parts(status_error(status, None, body));
            assert_eq!(s, status);
            assert!(!message.contains("sk-up"), "{message}");
            assert_eq!(code.as_deref(), Some("upstream_auth_failed"));
        }
    }

    #[test]
    fn empty_body_uses_reason_phrase() {
        let (_, message, _) = parts(status_error(503, Some("Service Unavailable"), b"  "));
        assert_eq!(message, "Service Unavailable");
    }

    #[test]
    fn in_body_error_takes_numeric_code_as_status() {
        let v = serde_json::json!({"message": "too long", "code": 400});
        let (status, message, code) = parts(error_from_value(&v, 500));
        assert_eq!(
            (status, message.as_str(), code.as_deref()),
            (400, "too long", Some("400"))
        );
        let v = serde_json::json!({"message": "boom", "code": 7});
        assert_eq!(parts(error_from_value(&v, 500)).0, 500);
    }
}
