//! Standard Webhooks signatures (<https://www.standardwebhooks.com>): every
//! request Windlass sends to an operator's service carries `webhook-id`,
//! `webhook-timestamp` (Unix seconds) and `webhook-signature`
//! (`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`), keyed with a
//! secret written `whsec_<base64>`; receivers verify them with any Standard
//! Webhooks library.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::hmac;
use serde::Deserialize;

pub const ID_HEADER: &str = "webhook-id";
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
pub const SIGNATURE_HEADER: &str = "webhook-signature";

const SECRET_PREFIX: &str = "whsec_";
/// Receivers refuse timestamps further off than this (the libraries' default).
pub const TOLERANCE_SECS: u64 = 5 * 60;

/// A signing secret. Its `Debug` never shows the key.
#[derive(Clone)]
pub struct WebhookSecret {
    key: hmac::Key,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigningError {
    #[error("a webhook secret is `whsec_` followed by base64 (at least 16 bytes)")]
    BadSecret,
    #[error("no valid `v1` signature for this body")]
    BadSignature,
    #[error("the webhook timestamp is missing, unreadable or too far from now")]
    BadTimestamp,
}

impl WebhookSecret {
    /// Reads `whsec_<base64>` (the prefix may be left out, as the reference
    /// libraries allow).
    pub fn parse(text: &str) -> Result<WebhookSecret, SigningError> {
        let encoded = text.trim();
        let encoded = encoded.strip_prefix(SECRET_PREFIX).unwrap_or(encoded);
        let bytes = STANDARD
            .decode(encoded)
            .map_err(|_| SigningError::BadSecret)?;
        if bytes.len() < 16 {
            return Err(SigningError::BadSecret);
        }
        Ok(WebhookSecret::from_bytes(&bytes))
    }

    /// A new random secret and its `whsec_` text (shown once, to the operator).
    pub fn generate() -> (WebhookSecret, String) {
        let bytes: [u8; 32] = rand::random();
        let text = format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes));
        (WebhookSecret::from_bytes(&bytes), text)
    }

    fn from_bytes(bytes: &[u8]) -> WebhookSecret {
        WebhookSecret {
            key: hmac::Key::new(hmac::HMAC_SHA256, bytes),
        }
    }

    /// The `webhook-signature` value for one message.
    pub fn sign(&self, id: &str, timestamp: u64, body: &[u8]) -> String {
        let tag = hmac::sign(&self.key, &signed_content(id, timestamp, body));
        format!("v1,{}", STANDARD.encode(tag.as_ref()))
    }

    /// The three headers of one message, signed now.
    pub fn headers(&self, id: &str, body: &[u8]) -> SignedHeaders {
        let timestamp = now_secs();
        SignedHeaders {
            id: id.to_owned(),
            timestamp,
            signature: self.sign(id, timestamp, body),
        }
    }

    /// Checks a received message: one of the space-separated `v1,`
    /// signatures matches (in constant time) and the timestamp is within
    /// [`TOLERANCE_SECS`] of `now`.
    pub fn verify(
        &self,
        id: &str,
        timestamp: &str,
        signatures: &str,
        body: &[u8],
        now: u64,
    ) -> Result<(), SigningError> {
        let ts: u64 = timestamp
            .trim()
            .parse()
            .map_err(|_| SigningError::BadTimestamp)?;
        if ts.abs_diff(now) > TOLERANCE_SECS {
            return Err(SigningError::BadTimestamp);
        }
        let content = signed_content(id, ts, body);
        let valid = signatures
            .split_whitespace()
            .filter_map(|s| s.strip_prefix("v1,"))
            .filter_map(|b64| STANDARD.decode(b64).ok())
            .any(|tag| hmac::verify(&self.key, &content, &tag).is_ok());
        valid.then_some(()).ok_or(SigningError::BadSignature)
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(redacted)")
    }
}

/// A secret in configuration: `whsec_...`, read and checked at start-up.
#[derive(Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct SecretConfig(pub WebhookSecret);

impl TryFrom<String> for SecretConfig {
    type Error = SigningError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        WebhookSecret::parse(&text).map(SecretConfig)
    }
}

impl fmt::Debug for SecretConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"whsec_(redacted)\"")
    }
}

/// `webhook-id`, `webhook-timestamp` and `webhook-signature` of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    pub id: String,
    pub timestamp: u64,
    pub signature: String,
}

impl SignedHeaders {
    /// Adds the three headers to a request.
    pub fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        request
            .header(ID_HEADER, &self.id)
            .header(TIMESTAMP_HEADER, self.timestamp.to_string())
            .header(SIGNATURE_HEADER, &self.signature)
    }
}

fn signed_content(id: &str, timestamp: u64, body: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(id.len() + 24 + body.len());
    content.extend_from_slice(id.as_bytes());
    content.push(b'.');
    content.extend_from_slice(timestamp.to_string().as_bytes());
    content.push(b'.');
    content.extend_from_slice(body);
    content
}

pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification.
    #[test]
    fn the_specification_example_signs_as_published() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let sig = secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn verify_accepts_its_own_and_refuses_tampering() {
        let (secret, text) = WebhookSecret::generate();
        assert!(text.starts_with("whsec_"));
        let again = WebhookSecret::parse(&text).unwrap();
        let h = secret.headers("msg_1", b"{}");
        let ts = h.timestamp.to_string();
        let now = h.timestamp;
        assert_eq!(again.verify("msg_1", &ts, &h.signature, b"{}", now), Ok(()));
        // Several signatures (key rotation): one valid is enough.
        let two = format!("v1,AAAA {}", h.signature);
        assert_eq!(again.verify("msg_1", &ts, &two, b"{}", now), Ok(()));
        let bad = Err(SigningError::BadSignature);
        assert_eq!(again.verify("msg_1", &ts, &h.signature, b"{ }", now), bad);
        assert_eq!(again.verify("msg_2", &ts, &h.signature, b"{}", now), bad);
        let (other, _) = WebhookSecret::generate();
        assert_eq!(other.verify("msg_1", &ts, &h.signature, b"{}", now), bad);
        let late = now + TOLERANCE_SECS + 1;
        assert_eq!(
            again.verify("msg_1", &ts, &h.signature, b"{}", late),
            Err(SigningError::BadTimestamp)
        );
    }

    #[test]
    fn secrets_are_checked_and_never_shown() {
        assert_eq!(
            WebhookSecret::parse("whsec_!!!").unwrap_err(),
            SigningError::BadSecret
        );
        assert_eq!(
            WebhookSecret::parse("whsec_c2hvcnQ=").unwrap_err(),
            SigningError::BadSecret
        );
        let (secret, text) = WebhookSecret::generate();
        let shown = format!("{secret:?} {:?}", SecretConfig(secret.clone()));
        assert!(!shown.contains(&text[6..]), "{shown}");
    }
}
