//! The issuer's key set (JWKS): fetched over HTTP(S), kept for the
//! response's `Cache-Control: max-age` (or the configured TTL), refetched
//! when it is stale, and at most once per refetch interval when a token
//! names a key it does not hold (rotation). A failed refetch keeps the keys
//! already known.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{Mutex, RwLock};

use crate::config::OidcConfig;

/// Without `Cache-Control` or a configured TTL.
const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// A key set is never kept longer than this, whatever the header says.
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// Bodies larger than this are not key sets.
const MAX_BODY: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum JwksError {
    #[error("fetching {url}: {reason}")]
    Fetch { url: String, reason: String },
    #[error("{0}")]
    Config(String),
}

/// One signing key of the set.
pub(crate) struct SigningKey {
    pub kid: Option<String>,
    /// The algorithm the JWK pins, if any.
    pub alg: Option<KeyAlgorithm>,
    pub key: DecodingKey,
}

impl SigningKey {
    /// Whether this key may verify a token signed with `alg`.
    pub(crate) fn fits(&self, alg: Algorithm) -> bool {
        let pinned = match self.alg {
            None => true,
            Some(pinned) => pinned.to_string() == format!("{alg:?}"),
        };
        pinned && self.key.family() == alg.family()
    }
}

#[derive(Default)]
struct Keys {
    keys: Vec<Arc<SigningKey>>,
    /// When the set goes stale (None: never fetched).
    fresh_until: Option<Instant>,
    /// The last fetch made for an unknown `kid`, for the refetch interval
    /// (a stream of made-up kids costs the issuer one fetch per interval).
    last_kid_refetch: Option<Instant>,
    /// The last failed fetch: an issuer that is down is asked again only
    /// after the refetch interval, not on every request.
    failed_at: Option<Instant>,
}

pub(crate) struct Jwks {
    client: reqwest::Client,
    issuer: String,
    /// The set's URL, once known (configured or discovered).
    url: RwLock<Option<String>>,
    ttl: Option<Duration>,
    refetch_interval: Duration,
    keys: RwLock<Keys>,
    /// One fetch at a time; others wait and then use its result.
    fetching: Mutex<()>,
}

impl Jwks {
    pub(crate) fn new(config: &OidcConfig, client: reqwest::Client) -> Jwks {
        Jwks {
            client,
            issuer: config.issuer.clone(),
            url: RwLock::new(config.jwks_url.clone()),
            ttl: config.jwks_ttl_secs.map(Duration::from_secs),
            refetch_interval: config.refetch_interval(),
            keys: RwLock::new(Keys::default()),
            fetching: Mutex::new(()),
        }
    }

    /// The keys that may verify a token with this `kid` and `alg`, fetching
    /// the set first when it is stale or (once per interval) lacks the kid.
    pub(crate) async fn keys_for(&self, kid: Option<&str>, alg: Algorithm) -> Vec<Arc<SigningKey>> {
        let now = Instant::now();
        {
            let keys = self.keys.read().await;
            let fresh = keys.fresh_until.is_some_and(|t| now < t);
            let found = matching(&keys.keys, kid, alg);
            if fresh && !found.is_empty() {
                return found;
            }
        }
        let _one = self.fetching.lock().await;
        // Decided again under the fetch lock: a fetch that finished while
        // this one waited may have brought the key.
        let (stale, missing) = {
            let keys = self.keys.read().await;
            let backing_off = keys
                .failed_at
                .is_some_and(|t| t.elapsed() < self.refetch_interval);
            let stale = keys.fresh_until.is_none_or(|t| Instant::now() >= t) && !backing_off;
            let missing = matching(&keys.keys, kid, alg).is_empty()
                && keys
                    .last_kid_refetch
                    .is_none_or(|t| t.elapsed() >= self.refetch_interval);
            (stale, missing)
        };
        if stale || missing {
            self.refresh(missing && !stale).await;
        }
        matching(&self.keys.read().await.keys, kid, alg)
    }

    /// Fetches the set; on failure keeps what is known (and says so once).
    async fn refresh(&self, for_unknown_kid: bool) {
        let started = Instant::now();
        let fetched = self.fetch().await;
        let mut keys = self.keys.write().await;
        if for_unknown_kid {
            keys.last_kid_refetch = Some(started);
        }
        match fetched {
            Ok((set, ttl)) => {
                tracing::debug!(target: "windlass_auth", keys = set.len(), ttl_secs = ttl.as_secs(), "JWKS fetched");
                keys.keys = set;
                keys.fresh_until = Some(started + ttl);
                keys.failed_at = None;
            }
            Err(e) => {
                keys.failed_at = Some(started);
                tracing::warn!(target: "windlass_auth", error = %e, "JWKS fetch failed; keeping the keys already known");
            }
        }
    }

    async fn fetch(&self) -> Result<(Vec<Arc<SigningKey>>, Duration), JwksError> {
        let url = self.url().await?;
        let response = self
            .client
            .get(&url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| fetch_error(&url, e.without_url().to_string()))?;
        let ttl = self
            .ttl
            .or_else(|| max_age(response.headers()))
            .unwrap_or(DEFAULT_TTL)
            .clamp(self.refetch_interval, MAX_TTL.max(self.refetch_interval));
        let body = response
            .bytes()
            .await
            .map_err(|e| fetch_error(&url, e.without_url().to_string()))?;
        if body.len() > MAX_BODY {
            return Err(fetch_error(&url, "the key set is too large".into()));
        }
        let set: RawSet = serde_json::from_slice(&body)
            .map_err(|e| fetch_error(&url, format!("not a JWKS: {e}")))?;
        Ok((set.signing_keys(), ttl))
    }

    /// The configured URL, or the discovered `jwks_uri` (looked up once).
    async fn url(&self) -> Result<String, JwksError> {
        if let Some(url) = self.url.read().await.clone() {
            return Ok(url);
        }
        let discovery = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        #[derive(Deserialize)]
        struct Discovery {
            jwks_uri: String,
        }
        let doc: Discovery = self
            .client
            .get(&discovery)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| fetch_error(&discovery, e.without_url().to_string()))?
            .json()
            .await
            .map_err(|e| fetch_error(&discovery, e.without_url().to_string()))?;
        *self.url.write().await = Some(doc.jwks_uri.clone());
        Ok(doc.jwks_uri)
    }
}

fn fetch_error(url: &str, reason: String) -> JwksError {
    JwksError::Fetch {
        url: url.to_owned(),
        reason,
    }
}

/// `max-age` of a `Cache-Control` header (`no-store`/`no-cache`: zero, so
/// the refetch interval applies).
fn max_age(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::CACHE_CONTROL)?.to_str().ok()?;
    value.split(',').map(str::trim).find_map(|d| {
        if d.eq_ignore_ascii_case("no-store") || d.eq_ignore_ascii_case("no-cache") {
            return Some(Duration::ZERO);
        }
        let (name, secs) = d.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("max-age")
            .then(|| {
                secs.trim()
                    .trim_matches('"')
                    .parse()
                    .ok()
                    .map(Duration::from_secs)
            })
            .flatten()
    })
}

fn matching(keys: &[Arc<SigningKey>], kid: Option<&str>, alg: Algorithm) -> Vec<Arc<SigningKey>> {
    keys.iter()
        .filter(|k| match kid {
            Some(kid) => k.kid.as_deref() == Some(kid),
            None => true,
        })
        .filter(|k| k.fits(alg))
        .cloned()
        .collect()
}

/// A key set as published: keys this build cannot use (encryption keys,
/// unknown types) are skipped rather than failing the whole set.
#[derive(Deserialize)]
struct RawSet {
    keys: Vec<Value>,
}

impl RawSet {
    fn signing_keys(self) -> Vec<Arc<SigningKey>> {
        self.keys
            .into_iter()
            .filter_map(|raw| serde_json::from_value::<Jwk>(raw).ok())
            .filter(|jwk| !matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)))
            // HMAC secrets have no place in a public key set.
            .filter(|jwk| {
                !matches!(
                    jwk.algorithm,
                    jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
                )
            })
            .filter_map(|jwk| {
                let key = DecodingKey::from_jwk(&jwk).ok()?;
                Some(Arc::new(SigningKey {
                    kid: jwk.common.key_id.clone(),
                    alg: jwk.common.key_algorithm,
                    key,
                }))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue, CACHE_CONTROL};

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(CACHE_CONTROL, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn max_age_is_read_from_cache_control() {
        assert_eq!(
            max_age(&headers("public, max-age=600, must-revalidate")),
            Some(Duration::from_secs(600))
        );
        assert_eq!(max_age(&headers("no-store")), Some(Duration::ZERO));
        assert_eq!(max_age(&headers("public")), None);
        assert_eq!(max_age(&HeaderMap::new()), None);
    }
}
