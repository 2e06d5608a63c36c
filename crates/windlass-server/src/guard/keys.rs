//! API keys: named entries (`[[server.keys]]`) and the plain list
//! (`--api-keys` / `WINDLASS_API_KEYS`), resolved at start-up into SHA-256
//! digests that requests are compared against in constant time.
//!
//! Authentication fails closed: a blank key is a start-up error, never "no
//! authentication", and a ring with entries always demands a key.

use std::fmt;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use windlass_engine::{ClientToolsStatus, QuotaLimits, Techniques, DEFAULT_TENANT};

use crate::guard::scopes::Scopes;

/// The per-key override of how responses with client tool calls end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyToolsStatus {
    Completed,
    RequiresAction,
}

impl From<KeyToolsStatus> for ClientToolsStatus {
    fn from(s: KeyToolsStatus) -> Self {
        match s {
            KeyToolsStatus::Completed => ClientToolsStatus::Completed,
            KeyToolsStatus::RequiresAction => ClientToolsStatus::RequiresAction,
        }
    }
}

/// One `[[server.keys]]` entry as written in the config file: exactly one of
/// `key`, `key_sha256` (hex) or `key_env` (a variable read at start-up).
#[derive(Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyConfig {
    pub name: String,
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub key_sha256: Option<String>,
    #[serde(default)]
    pub key_env: Option<String>,
    #[serde(default)]
    pub client_tools_status: Option<KeyToolsStatus>,
    /// The tenant whose responses this key reads and writes; "default"
    /// when unset.
    #[serde(default)]
    pub tenant: Option<String>,
    /// What the key may do (see `scopes.rs`); every scope when unset.
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// This key's own budgets (its tenant's apply too).
    #[serde(default)]
    pub requests_per_minute: Option<u64>,
    #[serde(default)]
    pub tokens_per_minute: Option<u64>,
    /// The loop techniques of this key's responses, applied over the
    /// server's `[loop] techniques`: names, `-name` to turn one off, `all`,
    /// `none` (a request's `metadata.windlass_techniques` still applies
    /// over them).
    #[serde(default)]
    pub techniques: Option<Vec<String>>,
}

// Never print a key.
impl fmt::Debug for KeyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyConfig")
            .field("name", &self.name)
            .field("key_env", &self.key_env)
            .field("client_tools_status", &self.client_tools_status)
            .field("tenant", &self.tenant)
            .field("scopes", &self.scopes)
            .field("requests_per_minute", &self.requests_per_minute)
            .field("tokens_per_minute", &self.tokens_per_minute)
            .field("techniques", &self.techniques)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("API key {0} is empty or blank (an unset variable?); refusing to start without it")]
    Blank(String),
    #[error("[[server.keys]] entry {0:?} must set exactly one of key, key_sha256, key_env")]
    Source(String),
    #[error("[[server.keys]] entry {0:?}: key_sha256 must be 64 hex digits")]
    BadDigest(String),
    #[error("[[server.keys]] entry {name:?}: environment variable {var} is unset or blank")]
    Env { name: String, var: String },
    #[error("[[server.keys]] entry has an empty or duplicate name {0:?}")]
    Name(String),
    #[error("[[server.keys]] entry {0:?}: tenant must be 1-64 characters of A-Z a-z 0-9 _ - .")]
    Tenant(String),
    #[error("[[server.keys]] entry {name:?}: unknown scope {scope:?} (known: responses:read, responses:write, traces:read, models:read)")]
    Scope { name: String, scope: String },
    #[error("[[server.keys]] entry {name:?}: {error}")]
    Technique { name: String, error: String },
}

/// A key ready for comparison: its name and the SHA-256 of its value.
#[derive(Clone)]
pub struct ApiKey {
    pub name: String,
    digest: [u8; 32],
    pub client_tools_status: Option<ClientToolsStatus>,
    pub tenant: String,
    pub scopes: Scopes,
    pub limits: QuotaLimits,
    /// The key's techniques (see [`KeyConfig::techniques`]), checked at
    /// start-up, in the `windlass_techniques` spelling.
    pub techniques: Option<String>,
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKey")
            .field("name", &self.name)
            .field("client_tools_status", &self.client_tools_status)
            .field("tenant", &self.tenant)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ApiKey {
    /// A key from its value; surrounding whitespace is not part of a key.
    pub fn plain(name: impl Into<String>, value: &str) -> Result<ApiKey, KeyError> {
        let name = name.into();
        let value = value.trim();
        if value.is_empty() {
            return Err(KeyError::Blank(name));
        }
        Ok(ApiKey {
            name,
            digest: sha256(value.as_bytes()),
            client_tools_status: None,
            tenant: DEFAULT_TENANT.to_owned(),
            scopes: Scopes::all(),
            limits: QuotaLimits::default(),
            techniques: None,
        })
    }

    /// Resolves a config entry (reading `key_env` now).
    pub fn from_config(c: &KeyConfig) -> Result<ApiKey, KeyError> {
        let name = c.name.trim();
        if name.is_empty() {
            return Err(KeyError::Name(c.name.clone()));
        }
        let mut key = match (&c.key, &c.key_sha256, &c.key_env) {
            (Some(k), None, None) => ApiKey::plain(name, k)?,
            (None, Some(hex), None) => ApiKey {
                name: name.to_owned(),
                digest: parse_hex(hex.trim()).ok_or_else(|| KeyError::BadDigest(name.into()))?,
                client_tools_status: None,
                tenant: DEFAULT_TENANT.to_owned(),
                scopes: Scopes::all(),
                limits: QuotaLimits::default(),
                techniques: None,
            },
            (None, None, Some(var)) => {
                let value = std::env::var(var).unwrap_or_default();
                ApiKey::plain(name, &value).map_err(|_| KeyError::Env {
                    name: name.to_owned(),
                    var: var.clone(),
                })?
            }
            _ => return Err(KeyError::Source(name.to_owned())),
        };
        key.client_tools_status = c.client_tools_status.map(Into::into);
        if let Some(tenant) = &c.tenant {
            if !valid_tenant(tenant) {
                return Err(KeyError::Tenant(name.to_owned()));
            }
            key.tenant = tenant.clone();
        }
        if let Some(names) = &c.scopes {
            key.scopes = Scopes::parse(names).map_err(|scope| KeyError::Scope {
                name: name.to_owned(),
                scope,
            })?;
        }
        key.limits = QuotaLimits {
            requests_per_minute: c.requests_per_minute,
            tokens_per_minute: c.tokens_per_minute,
        };
        if let Some(names) = &c.techniques {
            let list = names.join(",");
            Techniques::default()
                .apply(&list)
                .map_err(|e| KeyError::Technique {
                    name: name.to_owned(),
                    error: e.to_string(),
                })?;
            key.techniques = Some(list);
        }
        Ok(key)
    }
}

/// Who a request authenticated as, put in the request's extensions by the
/// auth layer for handlers to read. Absent when no keys are configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthedKey {
    pub name: String,
    /// This key's override of `client_tools_status`, if it has one.
    pub client_tools_status: Option<ClientToolsStatus>,
    /// The tenant that owns what this key creates and all it may read.
    pub tenant: String,
    pub scopes: Scopes,
    /// The key's own budgets.
    pub limits: QuotaLimits,
    /// The key's loop techniques, over the server's (see
    /// [`KeyConfig::techniques`]).
    pub techniques: Option<String>,
}

/// Every accepted key.
#[derive(Debug, Clone, Default)]
pub struct KeyRing {
    keys: Vec<ApiKey>,
}

impl KeyRing {
    /// Names must be unique (they are what logs show).
    pub fn new(keys: Vec<ApiKey>) -> Result<KeyRing, KeyError> {
        let mut seen = std::collections::HashSet::new();
        for k in &keys {
            if !seen.insert(k.name.as_str()) {
                return Err(KeyError::Name(k.name.clone()));
            }
        }
        Ok(KeyRing { keys })
    }

    /// The plain list, named `key-1`, `key-2`, …; any blank entry is an error.
    pub fn plain_list(values: &[String]) -> Result<Vec<ApiKey>, KeyError> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| ApiKey::plain(format!("key-{}", i + 1), v))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key `token` is, if any. Every key is compared (digest against
    /// digest, in constant time), so timing tells nothing about which
    /// matched or how much of one did.
    pub fn find(&self, token: &str) -> Option<AuthedKey> {
        let given = sha256(token.trim().as_bytes());
        let mut found = None;
        for k in &self.keys {
            if bool::from(k.digest.ct_eq(&given)) {
                found = Some(k);
            }
        }
        found.map(|k| AuthedKey {
            name: k.name.clone(),
            client_tools_status: k.client_tools_status,
            tenant: k.tenant.clone(),
            scopes: k.scopes,
            limits: k.limits,
            techniques: k.techniques.clone(),
        })
    }
}

/// Tenant names go in logs, metrics labels and database rows: kept short
/// and plain.
pub(crate) fn valid_tenant(t: &str) -> bool {
    (1..=64).contains(&t.len())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&Sha256::digest(bytes));
    out
}

fn parse_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> KeyConfig {
        KeyConfig {
            name: name.into(),
            ..KeyConfig::default()
        }
    }

    #[test]
    fn blank_keys_are_errors_and_keys_are_trimmed() {
        let list =
            |v: &[&str]| KeyRing::plain_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(matches!(list(&["", ""]), Err(KeyError::Blank(_))));
        assert!(matches!(list(&["k1", "  "]), Err(KeyError::Blank(_))));
        let ring = KeyRing::new(list(&["k1", " k2"]).unwrap()).unwrap();
        assert_eq!(ring.find("k2").unwrap().name, "key-2");
        assert_eq!(ring.find(" k1 ").unwrap().name, "key-1");
        assert!(ring.find("k3").is_none());
        assert!(ring.find("").is_none());
    }

    #[test]
    fn named_entries_from_value_digest_and_env() {
        let mut a = entry("alice");
        a.key = Some("sk-a".into());
        a.client_tools_status = Some(KeyToolsStatus::Completed);
        let mut b = entry("bob");
        b.key_sha256 = Some(hex(&sha256(b"sk-b")));
        let mut c = entry("carol");
        c.key_env = Some("WINDLASS_TEST_KEY_CAROL".into());
        std::env::set_var("WINDLASS_TEST_KEY_CAROL", "sk-c");
        let keys = [&a, &b, &c].map(|k| ApiKey::from_config(k).unwrap());
        let ring = KeyRing::new(keys.to_vec()).unwrap();
        let alice = ring.find("sk-a").unwrap();
        assert_eq!(
            alice.client_tools_status,
            Some(ClientToolsStatus::Completed)
        );
        assert_eq!(ring.find("sk-b").unwrap().name, "bob");
        assert_eq!(ring.find("sk-c").unwrap().client_tools_status, None);
    }

    #[test]
    fn bad_entries_are_refused() {
        let mut two = entry("x");
        two.key = Some("a".into());
        two.key_env = Some("B".into());
        assert!(matches!(
            ApiKey::from_config(&two),
            Err(KeyError::Source(_))
        ));
        assert!(matches!(
            ApiKey::from_config(&entry("none")),
            Err(KeyError::Source(_))
        ));
        let mut digest = entry("d");
        digest.key_sha256 = Some("abc".into());
        assert!(matches!(
            ApiKey::from_config(&digest),
            Err(KeyError::BadDigest(_))
        ));
        let mut env = entry("e");
        env.key_env = Some("WINDLASS_TEST_KEY_SURELY_UNSET".into());
        assert!(matches!(
            ApiKey::from_config(&env),
            Err(KeyError::Env { .. })
        ));
        let dup = vec![
            ApiKey::plain("n", "a").unwrap(),
            ApiKey::plain("n", "b").unwrap(),
        ];
        assert!(KeyRing::new(dup).is_err());
    }

    #[test]
    fn tenant_scopes_and_limits_are_read() {
        let mut a = entry("alice");
        a.key = Some("sk-a".into());
        a.tenant = Some("acme".into());
        a.scopes = Some(vec!["responses:read".into()]);
        a.requests_per_minute = Some(5);
        let ring = KeyRing::new(vec![ApiKey::from_config(&a).unwrap()]).unwrap();
        let alice = ring.find("sk-a").unwrap();
        assert_eq!(alice.tenant, "acme");
        assert!(alice
            .scopes
            .contains(crate::guard::scopes::Scope::ResponsesRead));
        assert!(!alice
            .scopes
            .contains(crate::guard::scopes::Scope::ResponsesWrite));
        assert_eq!(alice.limits.requests_per_minute, Some(5));
        let plain = ApiKey::plain("p", "sk-p").unwrap();
        assert_eq!(plain.tenant, DEFAULT_TENANT);
        assert_eq!(plain.scopes, Scopes::all());
        a.scopes = Some(vec!["admin".into()]);
        assert!(matches!(
            ApiKey::from_config(&a),
            Err(KeyError::Scope { .. })
        ));
        a.scopes = None;
        a.tenant = Some("a b".into());
        assert!(matches!(ApiKey::from_config(&a), Err(KeyError::Tenant(_))));
    }

    #[test]
    fn debug_never_shows_a_key() {
        let mut a = entry("alice");
        a.key = Some("sk-secret-value".into());
        let shown = format!("{a:?} {:?}", ApiKey::from_config(&a).unwrap());
        assert!(!shown.contains("sk-secret-value"), "{shown}");
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}
