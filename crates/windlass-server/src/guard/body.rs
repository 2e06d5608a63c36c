//! Request bodies: JSON only (multipart uploads: see `upload.rs`), read within a deadline and a size limit, and
//! (for creates) checked against the request limits before parsing.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::error::ApiError;
use crate::guard::{limits, upload};
use crate::state::AppState;

pub(crate) async fn read_body(State(app): State<AppState>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST || !has_body(req.headers()) {
        return next.run(req).await;
    }
    // Multipart uploads: their own browser rule; streamed by the route.
    if upload::is_upload(req.method(), req.uri().path(), req.headers()) {
        if let Err(e) = upload::check(req.headers(), &app.config.cors_allowed_origins) {
            return e.into_response();
        }
        return next.run(req).await;
    }
    if let Err(e) = check_headers(req.headers()) {
        return e.into_response();
    }
    let (parts, body) = req.into_parts();
    let cfg = &app.config;
    let bytes = match read(body, cfg.max_body_bytes, cfg.connections.body_read_timeout).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if matches!(parts.uri.path(), "/v1/responses" | "/v1/responses/compact") {
        if let Err(v) = limits::check(&bytes, &cfg.limits) {
            return ApiError::invalid(v.message)
                .param(v.param)
                .code(v.code)
                .into_response();
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A POST with neither a length nor chunked encoding, or length 0, has no
/// body (e.g. `cancel`), and needs no content type.
fn has_body(headers: &HeaderMap) -> bool {
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match length {
        Some(n) => n > 0,
        None => headers.contains_key(header::TRANSFER_ENCODING),
    }
}

fn check_headers(headers: &HeaderMap) -> Result<(), ApiError> {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim());
    let json = media.is_some_and(|m| {
        m.eq_ignore_ascii_case("application/json")
            || m.to_ascii_lowercase().ends_with("+json") && m.contains('/')
    });
    if !json {
        return Err(unsupported(
            "Request bodies must be JSON: send `Content-Type: application/json`.",
            "unsupported_media_type",
        ));
    }
    let encoded = headers.get_all(header::CONTENT_ENCODING).iter().any(|v| {
        !v.to_str()
            .is_ok_and(|v| v.trim().eq_ignore_ascii_case("identity"))
    });
    if encoded {
        return Err(unsupported(
            "Compressed request bodies are not supported: send the body without Content-Encoding.",
            "unsupported_content_encoding",
        ));
    }
    Ok(())
}

fn unsupported(message: &str, code: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "invalid_request_error",
        message,
    )
    .code(code)
}

async fn read(body: Body, limit: usize, deadline: Duration) -> Result<Bytes, ApiError> {
    let collected = tokio::time::timeout(deadline, Limited::new(body, limit).collect()).await;
    match collected {
        Ok(Ok(c)) => Ok(c.to_bytes()),
        Ok(Err(e)) if e.is::<LengthLimitError>() => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "Request body is too large.",
        )
        .code("request_too_large")),
        Ok(Err(e)) => Err(
            ApiError::invalid(format!("Could not read the request body: {e}"))
                .code("body_read_error"),
        ),
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "invalid_request_error",
            format!(
                "The request body did not arrive within {} ms.",
                deadline.as_millis()
            ),
        )
        .code("request_timeout")),
    }
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
    fn only_unencoded_json_is_accepted() {
        let ok = |p: &[(&str, &str)]| check_headers(&headers(p)).is_ok();
        assert!(ok(&[("content-type", "application/json")]));
        assert!(ok(&[("content-type", "Application/JSON; charset=utf-8")]));
        assert!(ok(&[
            ("content-type", "application/json"),
            ("content-encoding", "identity")
        ]));
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            let e = check_headers(&headers(&[("content-type", bad)])).unwrap_err();
            assert_eq!(e.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{bad}");
        }
        assert!(!ok(&[]));
        assert!(!ok(&[
            ("content-type", "application/json"),
            ("content-encoding", "gzip")
        ]));
    }

    #[test]
    fn bodyless_posts_need_no_type() {
        assert!(!has_body(&headers(&[])));
        assert!(!has_body(&headers(&[("content-length", "0")])));
        assert!(has_body(&headers(&[("content-length", "2")])));
        assert!(has_body(&headers(&[("transfer-encoding", "chunked")])));
    }
}
