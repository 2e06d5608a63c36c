//! Multipart uploads: the one body that is not JSON (`POST /v1/files`,
//! `POST /v1/containers/{id}/files`).
//!
//! `multipart/form-data` is a type a web page may send cross-site without
//! a CORS preflight (an HTML form does), so the JSON-only rule of
//! `body.rs` cannot protect these routes. Instead an upload must carry an
//! `Authorization` header, even to a gateway without keys (any value
//! then; the OpenAI SDKs always send one): a form cannot set a header, and
//! a script that sets one triggers a preflight, which fails unless the
//! page's origin is in `cors_allowed_origins`. An `Origin` outside that
//! list is refused as well.
//!
//! The body itself is not buffered here: the route streams it under its
//! own size limit (`[files] max_bytes`).

use axum::http::{header, HeaderMap, Method, StatusCode};

use crate::error::ApiError;

/// Whether this request is an upload to a route that takes one.
pub(crate) fn is_upload(method: &Method, path: &str, headers: &HeaderMap) -> bool {
    *method == Method::POST && is_upload_path(path) && is_multipart(headers)
}

fn is_upload_path(path: &str) -> bool {
    if path == "/v1/files" {
        return true;
    }
    // /v1/containers/{id}/files
    let mut parts = path.trim_end_matches('/').split('/').skip(1);
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("v1"), Some("containers"), Some(id), Some("files"), None) if !id.is_empty()
    )
}

fn is_multipart(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("multipart/form-data"))
}

/// Refuses what a web page could send on its own (see the module's doc).
pub(crate) fn check(headers: &HeaderMap, allowed_origins: &[String]) -> Result<(), ApiError> {
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    if let Some(origin) = origin {
        if !allowed_origins.iter().any(|a| a == "*" || a == origin) {
            return Err(refused(
                "Uploads from a web page are refused unless its origin is listed in [server] cors_allowed_origins.",
            ));
        }
    }
    if !headers.contains_key(header::AUTHORIZATION) {
        return Err(refused(
            "Uploads need an Authorization header (any bearer value when the gateway has no keys): it is what a web form cannot send.",
        ));
    }
    let encoded = headers.get_all(header::CONTENT_ENCODING).iter().any(|v| {
        !v.to_str()
            .is_ok_and(|v| v.trim().eq_ignore_ascii_case("identity"))
    });
    if encoded {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "invalid_request_error",
            "Compressed request bodies are not supported: send the body without Content-Encoding.",
        )
        .code("unsupported_content_encoding"));
    }
    Ok(())
}

fn refused(message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "invalid_request_error", message).code("upload_refused")
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn upload_routes_are_recognised() {
        let form = headers(&[("content-type", "multipart/form-data; boundary=x")]);
        let json = headers(&[("content-type", "application/json")]);
        assert!(is_upload(&Method::POST, "/v1/files", &form));
        assert!(is_upload(
            &Method::POST,
            "/v1/containers/cntr_1/files",
            &form
        ));
        assert!(!is_upload(
            &Method::POST,
            "/v1/containers/cntr_1/files",
            &json
        ));
        assert!(!is_upload(&Method::POST, "/v1/responses", &form));
        assert!(!is_upload(&Method::POST, "/v1/containers//files", &form));
        assert!(!is_upload(&Method::POST, "/v1/containers/c/files/x", &form));
        assert!(!is_upload(&Method::GET, "/v1/files", &form));
    }

    #[test]
    fn what_a_browser_form_sends_is_refused() {
        // A cross-site form post: Origin set, no Authorization.
        let form = headers(&[
            ("content-type", "multipart/form-data; boundary=x"),
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ]);
        assert_eq!(check(&form, &[]).unwrap_err().status, StatusCode::FORBIDDEN);
        // Same without Origin (an old browser): still no Authorization.
        let bare = headers(&[("content-type", "multipart/form-data; boundary=x")]);
        assert!(check(&bare, &[]).is_err());
        // A listed origin with a key passes (its preflight was answered).
        let listed = headers(&[
            ("origin", "https://app.example"),
            ("authorization", "Bearer k"),
        ]);
        assert!(check(&listed, &["https://app.example".into()]).is_ok());
        assert!(check(&listed, &[]).is_err());
        // The SDK: Authorization, no Origin.
        assert!(check(&headers(&[("authorization", "Bearer x")]), &[]).is_ok());
        let gz = headers(&[("authorization", "Bearer x"), ("content-encoding", "gzip")]);
        assert!(check(&gz, &[]).is_err());
    }
}
