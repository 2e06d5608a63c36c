//! [`JwtVerifier`]: one bearer token in, a [`JwtIdentity`] or
//! [`Unauthorized`] out.
//!
//! Checked: the header names an asymmetric algorithm (RS*, PS*, ES*,
//! EdDSA; `none` and HMAC are refused, so a public key is never used as an
//! HMAC secret); a key of the issuer's set with the token's `kid` (or, with
//! no `kid`, any key that fits the algorithm) verifies the signature; `iss`
//! is the issuer, `aud` one of the audiences, `exp` (required) not past and
//! `nbf` not ahead, both within the leeway; the configured claims are there.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{decode, decode_header, Algorithm, Validation};
use serde_json::{Map, Value};

use crate::config::OidcConfig;
use crate::jwks::Jwks;

/// The one answer a caller gets for any bad token (the reason is logged at
/// debug level only, without the token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid bearer token")]
pub struct Unauthorized;

/// Who a verified token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtIdentity {
    /// From `key_name_claim` (default `sub`).
    pub key_name: String,
    /// From `tenant_claim`; `None` when no tenant claim is configured (the
    /// default tenant).
    pub tenant: Option<String>,
    /// From `scopes_claim`: a space-separated string or an array.
    pub scopes: Vec<String>,
    /// `exp`, Unix seconds: a stream or WebSocket opened with this token
    /// ends then.
    pub expires_at: u64,
}

impl JwtIdentity {
    /// Time left before the token expires (zero once it has).
    pub fn expires_in(&self) -> Duration {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Duration::from_secs(self.expires_at.saturating_sub(now))
    }
}

/// Whether a bearer credential has a JWT's shape (three base64url parts),
/// so a guard can tell it from a static key without trying both.
pub fn looks_like_jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3
        && parts[..2].iter().all(|p| !p.is_empty())
        && parts.iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Verifies bearer JWTs of one issuer.
pub struct JwtVerifier {
    config: OidcConfig,
    audiences: Vec<String>,
    jwks: Jwks,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.config.issuer)
            .finish_non_exhaustive()
    }
}

/// The algorithms a key set's public keys can verify.
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

impl JwtVerifier {
    /// A verifier fetching keys with its own HTTP client (rustls with ring,
    /// the platform's roots; no redirects followed).
    pub fn new(config: OidcConfig) -> Result<JwtVerifier, crate::JwksError> {
        // reqwest is built without a default TLS provider; an error only
        // means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| crate::JwksError::Config(format!("JWKS client: {e}")))?;
        JwtVerifier::with_client(config, client)
    }

    /// A verifier fetching keys with `client` (the gateway's, with its CA
    /// and proxy settings).
    pub fn with_client(
        config: OidcConfig,
        client: reqwest::Client,
    ) -> Result<JwtVerifier, crate::JwksError> {
        let audiences = config.audience.values();
        if audiences.is_empty() || config.issuer.is_empty() {
            return Err(crate::JwksError::Config(
                "[auth.oidc] needs an issuer and at least one audience".into(),
            ));
        }
        let jwks = Jwks::new(&config, client);
        Ok(JwtVerifier {
            config,
            audiences,
            jwks,
        })
    }

    /// Verifies `token`; any failure is [`Unauthorized`].
    pub async fn verify(&self, token: &str) -> Result<JwtIdentity, Unauthorized> {
        match self.check(token).await {
            Ok(identity) => Ok(identity),
            Err(reason) => {
                tracing::debug!(target: "windlass_auth", issuer = %self.config.issuer, reason, "bearer JWT refused");
                Err(Unauthorized)
            }
        }
    }

    async fn check(&self, token: &str) -> Result<JwtIdentity, String> {
        if !looks_like_jwt(token) {
            return Err("not a JWT".into());
        }
        // `alg: none` (and anything unknown) fails to parse here.
        let header = decode_header(token).map_err(|e| format!("header: {e}"))?;
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(format!("algorithm {:?} is not accepted", header.alg));
        }
        let keys = self.jwks.keys_for(header.kid.as_deref(), header.alg).await;
        if keys.is_empty() {
            return Err(format!(
                "no key of the issuer's set fits kid {:?} and {:?}",
                header.kid, header.alg
            ));
        }
        let validation = self.validation(header.alg);
        let mut last = String::new();
        for key in keys {
            match decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => return self.identity(&data.claims),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut v = Validation::new(alg);
        v.set_issuer(&[&self.config.issuer]);
        v.set_audience(&self.audiences);
        v.set_required_spec_claims(&["exp", "iss", "aud"]);
        v.validate_exp = true;
        v.validate_nbf = true;
        v.leeway = self.config.leeway_secs;
        v
    }

    fn identity(&self, claims: &Map<String, Value>) -> Result<JwtIdentity, String> {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let key_name = text(&self.config.key_name_claim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("claim '{}' missing", self.config.key_name_claim))?;
        let tenant = match &self.config.tenant_claim {
            None => None,
            Some(claim) => Some(
                text(claim)
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| format!("claim '{claim}' missing"))?,
            ),
        };
        let scopes = match claims.get(&self.config.scopes_claim) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(list)) => list
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("claim '{}' is not strings", self.config.scopes_claim))?,
            Some(_) => {
                return Err(format!(
                    "claim '{}' is not scopes",
                    self.config.scopes_claim
                ))
            }
        };
        let expires_at = claims
            .get("exp")
            .and_then(Value::as_u64)
            .ok_or("exp is not a whole number")?;
        Ok(JwtIdentity {
            key_name,
            tenant,
            scopes,
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwt_shape() {
        assert!(looks_like_jwt("eyJh.eyJz.c2ln"));
        assert!(!looks_like_jwt("sk-windlass-static-key"));
        assert!(!looks_like_jwt("a.b"));
        assert!(!looks_like_jwt("a.b.c.d"));
        assert!(!looks_like_jwt("a b.c.d"));
    }
}
