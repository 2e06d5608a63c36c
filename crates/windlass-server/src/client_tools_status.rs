//! Which status a response that pauses for the client ends with, per request:
//! the `X-Windlass-Client-Tools-Status` header, else the API key's setting,
//! else the server's (`--client-tools-status`, default `completed`).

use axum::http::HeaderMap;
use windlass_engine::ClientToolsStatus;

use crate::error::ApiError;

/// The per-request override header: `requires_action` or `completed`.
pub(crate) const HEADER: &str = "x-windlass-client-tools-status";

/// The effective status: header > API key > server.
pub(crate) fn effective(
    header: Option<ClientToolsStatus>,
    key: Option<ClientToolsStatus>,
    server: ClientToolsStatus,
) -> ClientToolsStatus {
    header.or(key).unwrap_or(server)
}

/// The header's value, if the request sent one; a bad value is a 400.
pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Option<ClientToolsStatus>, ApiError> {
    let Some(raw) = headers.get(HEADER) else {
        return Ok(None);
    };
    raw.to_str()
        .ok()
        .and_then(|v| ClientToolsStatus::parse(v.trim()))
        .map(Some)
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "Invalid value for header 'X-Windlass-Client-Tools-Status': {:?}; expected 'requires_action' or 'completed'.",
                String::from_utf8_lossy(raw.as_bytes())
            ))
            .param("X-Windlass-Client-Tools-Status")
            .code("invalid_value")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use ClientToolsStatus::{Completed, RequiresAction};

    #[test]
    fn the_header_wins_then_the_key_then_the_server() {
        assert_eq!(effective(None, None, Completed), Completed);
        assert_eq!(effective(None, None, RequiresAction), RequiresAction);
        assert_eq!(
            effective(None, Some(RequiresAction), Completed),
            RequiresAction
        );
        assert_eq!(effective(None, Some(Completed), RequiresAction), Completed);
        assert_eq!(
            effective(Some(Completed), Some(RequiresAction), RequiresAction),
            Completed
        );
        assert_eq!(
            effective(Some(RequiresAction), Some(Completed), Completed),
            RequiresAction
        );
    }

    #[test]
    fn header_values_are_parsed_and_bad_ones_refused() {
        let mut h = HeaderMap::new();
        assert_eq!(from_headers(&h).unwrap(), None);
        h.insert(HEADER, HeaderValue::from_static("requires_action"));
        assert_eq!(from_headers(&h).unwrap(), Some(RequiresAction));
        h.insert(HEADER, HeaderValue::from_static("completed"));
        assert_eq!(from_headers(&h).unwrap(), Some(Completed));
        h.insert(HEADER, HeaderValue::from_static("sometimes"));
        let err = from_headers(&h).unwrap_err();
        let body = serde_json::to_value(&err.body).unwrap();
        assert_eq!(body["error"]["param"], "X-Windlass-Client-Tools-Status");
        assert_eq!(body["error"]["type"], "invalid_request_error");
    }
}
