//! `[auth.oidc]`: the issuer whose tokens are keys, and how their claims map
//! to a key name, tenant and scopes.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One accepted audience or several (a token must name one of them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    pub fn values(&self) -> Vec<String> {
        match self {
            Audience::One(a) => vec![a.clone()],
            Audience::Many(list) => list.clone(),
        }
    }
}

/// Bearer JWTs from one OIDC issuer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The `iss` every token must carry; discovery starts here when
    /// `jwks_url` is not set.
    pub issuer: String,
    /// The issuer's key set. Default: `jwks_uri` from
    /// `{issuer}/.well-known/openid-configuration`.
    #[serde(default)]
    pub jwks_url: Option<String>,
    /// The `aud` values accepted (a string or a list).
    pub audience: Audience,
    /// The claim naming the key (its name in logs, metrics, traces and
    /// governance rules). Default `sub`.
    #[serde(default = "default_key_name_claim")]
    pub key_name_claim: String,
    /// The claim naming the tenant; when set, a token without it is
    /// refused. Unset: the default tenant.
    #[serde(default)]
    pub tenant_claim: Option<String>,
    /// The claim holding the scopes: a space-separated string (OAuth's
    /// `scope`) or an array of strings. Default `scope`.
    #[serde(default = "default_scopes_claim")]
    pub scopes_claim: String,
    /// How long a fetched key set is used. Default: the response's
    /// `Cache-Control: max-age`, else 300 s.
    #[serde(default)]
    pub jwks_ttl_secs: Option<u64>,
    /// At most one refetch per this many seconds for a token whose `kid` is
    /// unknown (key rotation). Default 30.
    #[serde(default = "default_refetch_secs")]
    pub refetch_interval_secs: u64,
    /// Clock skew allowed on `exp` and `nbf`, in seconds. Default 30.
    #[serde(default = "default_leeway_secs")]
    pub leeway_secs: u64,
}

fn default_key_name_claim() -> String {
    "sub".to_owned()
}

fn default_scopes_claim() -> String {
    "scope".to_owned()
}

fn default_refetch_secs() -> u64 {
    30
}

fn default_leeway_secs() -> u64 {
    30
}

impl OidcConfig {
    /// A configuration with the defaults for everything but the issuer and
    /// audience.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> OidcConfig {
        OidcConfig {
            issuer: issuer.into(),
            jwks_url: None,
            audience: Audience::One(audience.into()),
            key_name_claim: default_key_name_claim(),
            tenant_claim: None,
            scopes_claim: default_scopes_claim(),
            jwks_ttl_secs: None,
            refetch_interval_secs: default_refetch_secs(),
            leeway_secs: default_leeway_secs(),
        }
    }

    pub(crate) fn refetch_interval(&self) -> Duration {
        Duration::from_secs(self.refetch_interval_secs)
    }
}
