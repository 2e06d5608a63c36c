//! Bearer JWTs as keys (`[auth.oidc]`): a bearer with a JWT's shape is
//! verified by the issuer's JWKS (`windlass-auth`) and becomes an
//! [`AuthedKey`] like a static key: the key name, tenant and scopes from the
//! configured claims. Every failure is the same 401 as an unknown key.
//!
//! Scopes: the token carries Windlass's scope names (`responses:read`,
//! `responses:write`, `traces:read`, `models:read`) in its scopes claim;
//! other names there (`openid`, `email`, ...) are ignored, and a token with
//! none of ours may only reach the open routes.
//!
//! The token's expiry ends what it opened: an SSE stream gets a last
//! `error` event with code `token_expired` and ends (as if the client had
//! left: a plain stream's run is cancelled and stored); a WebSocket gets the
//! same error as a message, then a close frame (1008, "token expired"),
//! after the running response is cancelled (see `http/ws.rs`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use futures::{Stream, StreamExt};
use tokio::time::{Instant, Sleep};
use windlass_auth::JwtIdentity;
use windlass_engine::{ClientToolsStatus, QuotaLimits, DEFAULT_TENANT};

use crate::guard::keys::{valid_tenant, AuthedKey};
use crate::guard::scopes::{Scope, Scopes};

/// When the bearer JWT a request authenticated with expires; put in the
/// request's extensions beside its [`AuthedKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenExpiry {
    /// Unix seconds (`exp`).
    pub at: u64,
}

impl TokenExpiry {
    /// The instant it expires, on the runtime's clock.
    pub fn deadline(self) -> Instant {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Instant::now() + Duration::from_secs(self.at.saturating_sub(now))
    }
}

/// Resolves when `deadline` passes; never without one.
pub async fn expired(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The code of the event that ends a stream or WebSocket at expiry.
pub const EXPIRED_CODE: &str = "token_expired";
pub const EXPIRED_MESSAGE: &str =
    "The bearer token expired; this stream ends here. Reconnect with a fresh token.";

/// The key a verified token stands for; `None` when its tenant claim is not
/// a usable tenant name.
pub fn authed(id: JwtIdentity) -> Option<(AuthedKey, TokenExpiry)> {
    let tenant = match id.tenant {
        Some(t) if valid_tenant(&t) => t,
        Some(_) => return None,
        None => DEFAULT_TENANT.to_owned(),
    };
    let scopes = Scopes::of(id.scopes.iter().filter_map(|s| Scope::parse(s)));
    let key = AuthedKey {
        name: id.key_name,
        client_tools_status: None::<ClientToolsStatus>,
        tenant,
        scopes,
        limits: QuotaLimits::default(),
        techniques: None,
    };
    Some((key, TokenExpiry { at: id.expires_at }))
}

/// An SSE response whose body ends at `expiry` with the `token_expired`
/// event; any other response as it is.
pub fn end_streams_at(response: Response, expiry: TokenExpiry) -> Response {
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let stream = UntilExpiry {
        inner: body.into_data_stream().boxed(),
        sleep: Box::pin(tokio::time::sleep_until(expiry.deadline())),
        last_sequence: None,
        done: false,
    };
    Response::from_parts(parts, Body::from_stream(stream))
}

type Chunks = futures::stream::BoxStream<'static, Result<Bytes, axum::Error>>;

/// The body's chunks until the deadline, then one `error` event.
struct UntilExpiry {
    inner: Chunks,
    sleep: Pin<Box<Sleep>>,
    /// The last `sequence_number` seen, so the closing event follows it.
    last_sequence: Option<u64>,
    done: bool,
}

impl Stream for UntilExpiry {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.done = true;
            tracing::debug!("bearer token expired: ending the stream");
            let sequence = self.last_sequence.map_or(0, |n| n + 1);
            return Poll::Ready(Some(Ok(expired_frame(sequence))));
        }
        let next = self.inner.poll_next_unpin(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &next {
            if let Some(n) = last_sequence_number(chunk) {
                self.last_sequence = Some(n);
            }
        }
        if let Poll::Ready(None) = next {
            self.done = true;
        }
        next
    }
}

/// The SSE frame that ends a stream at expiry.
pub fn expired_frame(sequence_number: u64) -> Bytes {
    let event = serde_json::json!({
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "code": EXPIRED_CODE,
            "message": EXPIRED_MESSAGE,
            "param": null,
        },
        "sequence_number": sequence_number,
    });
    Bytes::from(format!("event: error\ndata: {event}\n\n"))
}

/// The last `"sequence_number":N` in a chunk of frames.
fn last_sequence_number(chunk: &[u8]) -> Option<u64> {
    const NEEDLE: &[u8] = b"\"sequence_number\":";
    let at = chunk.windows(NEEDLE.len()).rposition(|w| w == NEEDLE)?;
    let digits: String = chunk[at + NEEDLE.len()..]
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| b.is_ascii_digit())
        .map(|b| char::from(*b))
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(tenant: Option<&str>, scopes: &[&str]) -> JwtIdentity {
        JwtIdentity {
            key_name: "alice@example.com".into(),
            tenant: tenant.map(str::to_owned),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            expires_at: 42,
        }
    }

    #[test]
    fn claims_map_to_a_key_and_unknown_scopes_are_ignored() {
        let (key, exp) = authed(identity(Some("acme"), &["openid", "responses:read"])).unwrap();
        assert_eq!(key.name, "alice@example.com");
        assert_eq!(key.tenant, "acme");
        assert!(key.scopes.contains(Scope::ResponsesRead));
        assert!(!key.scopes.contains(Scope::ResponsesWrite));
        assert_eq!(exp.at, 42);
        let (key, _) = authed(identity(None, &[])).unwrap();
        assert_eq!(key.tenant, DEFAULT_TENANT);
        assert!(!Scope::ALL.iter().any(|s| key.scopes.contains(*s)));
        assert!(authed(identity(Some("a b/c"), &[])).is_none());
    }

    #[test]
    fn the_closing_event_follows_the_last_sequence_number() {
        let chunk = b"event: x\ndata: {\"sequence_number\":3}\n\nevent: y\ndata: {\"a\":1,\"sequence_number\": 17}\n\n";
        assert_eq!(last_sequence_number(chunk), Some(17));
        assert_eq!(last_sequence_number(b": keep-alive\n\n"), None);
        let frame = String::from_utf8(expired_frame(18).to_vec()).unwrap();
        assert!(frame.starts_with("event: error\ndata: {"), "{frame}");
        let data: serde_json::Value =
            serde_json::from_str(frame.trim_start_matches("event: error\ndata: ").trim()).unwrap();
        assert_eq!(data["error"]["code"], EXPIRED_CODE);
        assert_eq!(data["sequence_number"], 18);
    }
}
