//! Multipart upload bodies and raw downloads, shared by the file routes
//! (`/v1/files`, container files). The browser rule for uploads is in
//! `guard/upload.rs`.

use axum::body::Body;
use axum::extract::multipart::Field;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Bytes of a multipart body beyond the file itself (boundaries, headers,
/// the `purpose` field).
pub(crate) const FORM_OVERHEAD: u64 = 64 * 1024;

/// The field's bytes, refused with 413 as soon as they pass `max`.
pub(crate) async fn read_limited(mut field: Field<'_>, max: u64) -> Result<Vec<u8>, ApiError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        if (bytes.len() + chunk.len()) as u64 > max {
            return Err(too_large(max));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

fn too_large(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid_request_error",
        format!("The file is larger than this server's limit of {max} bytes ([files] max_bytes)."),
    )
    .param("file")
    .code("file_too_large")
}

pub(crate) fn multipart_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "Request body is too large.",
        )
        .code("request_too_large");
    }
    ApiError::invalid(format!(
        "The multipart body is malformed: {}",
        e.body_text()
    ))
    .code("invalid_multipart")
}

/// Raw bytes with the file's name for a browser's or SDK's save.
pub(crate) fn download(filename: &str, bytes: Vec<u8>) -> Response {
    let mut resp = Body::from(bytes).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    // Only a plain name goes in the header; anything else is left out
    // rather than escaped wrongly.
    let safe = filename
        .chars()
        .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ');
    if safe {
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{filename}\"")) {
            h.insert(header::CONTENT_DISPOSITION, v);
        }
    }
    resp
}
