//! Key check: a bearer token, or Anthropic's `x-api-key`.
//!
//! With keys configured every route needs one except `/health` and `/ready`,
//! unknown routes included (a 401 before a 404, so the routes cannot be
//! mapped without a key). The key's name, never the key, goes in the logs;
//! the request carries an [`AuthedKey`] for handlers. A key without the
//! route's scope (see `scopes.rs`) gets 403. With `[auth.oidc]`, a bearer
//! JWT of the issuer is a key too (`jwt.rs`), also when no static key is
//! configured.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::guard::jwt;
use crate::guard::keys::AuthedKey;
use crate::guard::scopes::{self, Scope};
use crate::state::AppState;

/// Paths served to anyone: probes carry no key.
pub(crate) fn is_probe(path: &str) -> bool {
    matches!(path, "/health" | "/ready")
}

/// `/metrics` without a key, unless `[server.metrics] require_key`.
pub(crate) fn is_open_metrics(app: &AppState, path: &str) -> bool {
    path == crate::metrics::PATH && !app.config.metrics.require_key
}

pub(crate) async fn require_key(
    State(app): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let open = is_probe(path) || is_open_metrics(&app, path);
    let ring = match &*app.keys {
        // A key configuration that did not resolve fails closed.
        Err(_) if !open => return unauthorized(),
        Ok(ring) if (!ring.is_empty() || app.jwt.is_some()) && !open => ring,
        _ => return next.run(req).await,
    };
    let token = credential(req.headers());
    // A bearer with a JWT's shape goes to the issuer's keys first (when
    // `[auth.oidc]` is set), then, like any other bearer, to the static
    // keys (a static key may happen to have a JWT's shape).
    let mut expiry = None;
    let found = match (token, &app.jwt) {
        (Some(t), Some(verifier)) if windlass_auth::looks_like_jwt(t) => {
            match verifier.verify(t).await.ok().and_then(jwt::authed) {
                Some((key, exp)) => {
                    expiry = Some(exp);
                    Some(key)
                }
                None => ring.find(t),
            }
        }
        (Some(t), _) => ring.find(t),
        (None, _) => None,
    };
    match found {
        Some(key) => {
            tracing::debug!(key = %key.name, tenant = %key.tenant, "authenticated");
            let need = scopes::required(req.method(), req.uri().path());
            if !key.scopes.contains(need) {
                tracing::debug!(key = %key.name, scope = %need, "refused: missing scope");
                return forbidden(need);
            }
            req.extensions_mut().insert::<AuthedKey>(key);
            match expiry {
                Some(exp) => {
                    req.extensions_mut().insert(exp);
                    jwt::end_streams_at(next.run(req).await, exp)
                }
                None => next.run(req).await,
            }
        }
        None => unauthorized(),
    }
}

/// The key a request carries: `Authorization: Bearer <key>`, else
/// `x-api-key: <key>` (Anthropic's header, which its SDKs and Claude Code
/// send to `/v1/messages`).
fn credential(headers: &HeaderMap) -> Option<&str> {
    bearer(headers).or_else(|| {
        let key = headers.get("x-api-key")?.to_str().ok()?.trim();
        (!key.is_empty()).then_some(key)
    })
}

/// The token of an `Authorization: Bearer <token>` header; the scheme is
/// case-insensitive (RFC 9110) and surrounding spaces are not the token's.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once([' ', '\t'])?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// OpenAI's answer to a restricted key outside its permissions.
fn forbidden(need: Scope) -> Response {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "invalid_request_error",
        format!("You have insufficient permissions for this operation. Missing scopes: {need}."),
    )
    .code("insufficient_permissions")
    .into_response()
}

fn unauthorized() -> Response {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "invalid_request_error",
        "Incorrect or missing API key.",
    )
    .code("invalid_api_key")
    .into_response()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn with(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn the_scheme_is_case_insensitive_and_the_token_trimmed() {
        assert_eq!(bearer(&with("Bearer k2")), Some("k2"));
        assert_eq!(bearer(&with("bearer k2")), Some("k2"));
        assert_eq!(bearer(&with("BEARER   k2 ")), Some("k2"));
        assert_eq!(bearer(&with("Basic k2")), None);
        assert_eq!(bearer(&with("k2")), None);
        assert_eq!(bearer(&with("Bearer ")), None);
        assert_eq!(bearer(&HeaderMap::new()), None);
    }

    #[test]
    fn x_api_key_is_a_key_too() {
        let mut h = HeaderMap::new();
        h.insert("x-api-key", HeaderValue::from_static(" sk-a "));
        assert_eq!(credential(&h), Some("sk-a"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sk-b"),
        );
        assert_eq!(credential(&h), Some("sk-b"), "the bearer token wins");
        h.insert("x-api-key", HeaderValue::from_static(""));
        h.remove(header::AUTHORIZATION);
        assert_eq!(credential(&h), None);
    }
}
