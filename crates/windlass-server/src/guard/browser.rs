//! What keeps a web page the user visits from driving a local gateway.
//!
//! - `Host` check (DNS rebinding): a page on `evil.example` whose name is
//!   re-pointed at 127.0.0.1 reaches us with `Host: evil.example`. When
//!   listening on loopback only loopback names and `allowed_hosts` pass.
//! - CORS is off unless origins are configured: no page can read answers.
//! - Bodies must be `application/json` (see `body.rs`): the types a page can
//!   send without a CORS preflight (`text/plain`, forms) are refused.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

pub(crate) async fn check_host(State(app): State<AppState>, req: Request, next: Next) -> Response {
    if app.loopback && !host_allowed(req.headers(), &app.config.allowed_hosts) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "invalid_request_error",
            "Host not allowed: this gateway listens on loopback and answers only to loopback names (configure [server] allowed_hosts to add one).",
        )
        .code("host_not_allowed")
        .into_response();
    }
    next.run(req).await
}

/// No `Host` (HTTP/1.0, some tools) passes: browsers always send one.
fn host_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(value) = headers.get(header::HOST) else {
        return true;
    };
    let Ok(host) = value.to_str() else {
        return false;
    };
    let name = strip_port(host).trim_end_matches('.').to_ascii_lowercase();
    let loopback = name == "localhost"
        || name.ends_with(".localhost")
        || name
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    loopback || allowed.iter().any(|a| a.eq_ignore_ascii_case(&name))
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        // [::1]:8080
        return host
            .split_once(']')
            .map_or(host, |(h, _)| h)
            .trim_start_matches('[');
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// Answers preflights from allowed origins and marks their responses.
/// Without configured origins nothing is added, so browsers keep every
/// cross-origin answer from the page.
pub(crate) async fn cors(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let allowed = &app.config.cors_allowed_origins;
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .filter(|o| {
            o.to_str()
                .is_ok_and(|o| allowed.iter().any(|a| a == "*" || a == o))
        })
        .cloned();
    let Some(origin) = origin else {
        return next.run(req).await;
    };
    let preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut resp = if preflight {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type, openai-beta, x-stainless-lang"),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        r
    } else {
        next.run(req).await
    };
    let h = resp.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.append(header::VARY, HeaderValue::from_static("origin"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn loopback_names_and_configured_hosts_pass() {
        let allowed = vec!["gw.local".to_owned()];
        for ok in [
            "localhost:8080",
            "127.0.0.1:8080",
            "127.3.4.5",
            "[::1]:80",
            "app.localhost",
            "GW.local:1",
        ] {
            assert!(host_allowed(&host(ok), &allowed), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "10.0.0.1:8080",
            "localhost.evil.example",
        ] {
            assert!(!host_allowed(&host(bad), &allowed), "{bad}");
        }
        assert!(host_allowed(&HeaderMap::new(), &[]));
    }
}
