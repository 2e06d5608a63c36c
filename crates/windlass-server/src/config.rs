//! The HTTP server's settings, and the `[server]` table of the config file
//! they are read from.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde::Deserialize;
use windlass_engine::QuotaLimits;

use crate::guard::keys::{ApiKey, KeyConfig, KeyError, KeyRing};
use crate::guard::limits::RequestLimits;

/// Connection and admission bounds: what keeps `/health` answering whatever
/// clients do.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// Time a client has to send a request's headers; also how long an idle
    /// keep-alive connection stays open (hyper times both with one timer).
    pub header_read_timeout: Duration,
    /// Time a client has to send a request's whole body (408 beyond).
    pub body_read_timeout: Duration,
    /// Open connections beyond which a new one is served `/health` and
    /// `/ready` only (anything else: 503 with `Retry-After`).
    pub max_connections: usize,
    /// Open connections beyond which a new one is closed at once. Keep it
    /// under the process's open-file limit (`ulimit -n`).
    pub hard_max_connections: usize,
    /// Responses running at once beyond which a create is answered 503
    /// with `Retry-After`.
    pub max_inflight_responses: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(60),
            max_connections: 1024,
            hard_max_connections: 4096,
            max_inflight_responses: 512,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest accepted request body (413 beyond).
    pub max_body_bytes: usize,
    /// Accepted bearer tokens, named `key-1`, `key-2`, … in logs. With
    /// `keys`, empty both: no authentication. A blank entry makes every
    /// request fail authentication (the binary refuses to start instead).
    pub api_keys: Vec<String>,
    /// Named keys (`[[server.keys]]`), resolved.
    pub keys: Vec<ApiKey>,
    /// Bytes of framed events buffered per SSE stream before the engine
    /// waits for the client to read.
    pub sse_buffer_bytes: usize,
    pub limits: RequestLimits,
    pub connections: ConnectionLimits,
    /// Origins whose browser pages may call the API (CORS); empty: none.
    pub cors_allowed_origins: Vec<String>,
    /// Host names (besides loopback names) accepted in `Host` when listening
    /// on loopback, against DNS rebinding.
    pub allowed_hosts: Vec<String>,
    /// Background mode (`[server.background]`).
    pub background: crate::run::background::BackgroundConfig,
    /// Prometheus metrics (`[server.metrics]`).
    pub metrics: MetricsConfig,
    /// Budgets per tenant (`[server.tenants.<name>]`), shared by its keys.
    pub tenants: HashMap<String, QuotaLimits>,
    /// After a shutdown signal, how long running responses may go on before
    /// they are cancelled.
    pub shutdown_grace: Duration,
    /// An SSE comment (`: keep-alive`) goes out after this long without any
    /// other bytes on a stream (proxies close silent connections); `None`:
    /// never.
    pub sse_keepalive: Option<Duration>,
    /// The Messages surface (`[server.messages]`).
    pub messages: crate::messages::config::MessagesConfig,
    /// Threads that serve connections, each with a runtime of its own: a
    /// connection and the work of its requests stay on one thread. 0: on
    /// the runtime that calls [`serve`](crate::serve) (the default here; a
    /// config file defaults to one per CPU).
    pub connection_threads: usize,
}

/// `GET /metrics` (Prometheus), `[server.metrics]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Record metrics and serve `/metrics`; false: neither (404).
    pub enabled: bool,
    /// Whether a scrape needs an API key like the API routes. Off by
    /// default: scrapers usually carry none, and the metrics hold no ids,
    /// keys or user text (key *names* and model names only).
    pub require_key: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: true,
            require_key: false,
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_body_bytes: 32 * 1024 * 1024,
            api_keys: Vec::new(),
            keys: Vec::new(),
            sse_buffer_bytes: 64 * 1024,
            limits: RequestLimits::default(),
            connections: ConnectionLimits::default(),
            cors_allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            background: crate::run::background::BackgroundConfig::default(),
            metrics: MetricsConfig::default(),
            tenants: HashMap::new(),
            shutdown_grace: Duration::from_secs(30),
            sse_keepalive: Some(Duration::from_secs(15)),
            messages: Default::default(),
            connection_threads: 0,
        }
    }
}

impl ServerConfig {
    /// Every configured key, or the first problem with one.
    pub fn key_ring(&self) -> Result<KeyRing, KeyError> {
        let mut keys = KeyRing::plain_list(&self.api_keys)?;
        keys.extend(self.keys.iter().cloned());
        KeyRing::new(keys)
    }
}

/// The `[server]` table. Every key is optional.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    pub max_body_bytes: Option<usize>,
    #[serde(default)]
    pub api_keys: Vec<String>,
    #[serde(default)]
    pub keys: Vec<KeyConfig>,
    pub header_read_timeout_ms: Option<u64>,
    pub body_read_timeout_ms: Option<u64>,
    pub max_connections: Option<usize>,
    pub hard_max_connections: Option<usize>,
    pub max_inflight_responses: Option<usize>,
    #[serde(default)]
    pub cors_allowed_origins: Vec<String>,
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    #[serde(default)]
    pub limits: RequestLimits,
    #[serde(default)]
    pub background: crate::run::background::BackgroundConfig,
    #[serde(default)]
    pub metrics: MetricsConfig,
    #[serde(default)]
    pub tenants: BTreeMap<String, TenantFile>,
    /// Seconds running responses get after SIGTERM before they are cancelled.
    pub shutdown_grace_secs: Option<u64>,
    /// Seconds of silence on an SSE stream before a `: keep-alive` comment
    /// (0: none).
    pub sse_keepalive_secs: Option<u64>,
    /// The Messages surface (`/v1/messages`).
    #[serde(default)]
    pub messages: crate::messages::config::MessagesConfig,
    /// Threads that serve connections, each keeping its connections and
    /// their requests' work on itself (default: one per CPU; 0: one
    /// work-stealing runtime for everything).
    pub connection_threads: Option<usize>,
}

/// `[server.tenants.<name>]`: one tenant's budgets, over all its keys.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantFile {
    pub requests_per_minute: Option<u64>,
    pub tokens_per_minute: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("[server] {0}")]
    Invalid(String),
}

impl ServerFile {
    /// The settings, with `cli_keys` (flag or environment) replacing the
    /// file's `api_keys` when given. Blank keys are errors.
    pub fn resolve(self, cli_keys: Option<Vec<String>>) -> Result<ServerConfig, SettingsError> {
        let mut c = ServerConfig::default();
        let d = &mut c.connections;
        let ms = Duration::from_millis;
        if let Some(n) = self.max_body_bytes {
            c.max_body_bytes = n;
        }
        if let Some(v) = self.header_read_timeout_ms {
            d.header_read_timeout = ms(v);
        }
        if let Some(v) = self.body_read_timeout_ms {
            d.body_read_timeout = ms(v);
        }
        if let Some(n) = self.max_connections {
            d.max_connections = n;
        }
        if let Some(n) = self.hard_max_connections {
            d.hard_max_connections = n;
        }
        if let Some(n) = self.max_inflight_responses {
            d.max_inflight_responses = n;
        }
        if d.hard_max_connections < d.max_connections {
            return Err(SettingsError::Invalid(
                "hard_max_connections must be at least max_connections".into(),
            ));
        }
        if d.header_read_timeout.is_zero() || d.body_read_timeout.is_zero() {
            return Err(SettingsError::Invalid(
                "read timeouts must be positive".into(),
            ));
        }
        c.api_keys = match cli_keys {
            // Given but empty (`WINDLASS_API_KEYS=`): an unset variable, not
            // a wish to drop the file's keys.
            Some(keys) if keys.is_empty() => {
                return Err(KeyError::Blank("--api-keys / WINDLASS_API_KEYS".into()).into())
            }
            Some(keys) => keys,
            None => self.api_keys,
        };
        c.keys = self
            .keys
            .iter()
            .map(ApiKey::from_config)
            .collect::<Result<_, _>>()?;
        c.limits = self.limits;
        c.cors_allowed_origins = self.cors_allowed_origins;
        c.allowed_hosts = self.allowed_hosts;
        if self.background.workers == 0 || self.background.lease_ms < 300 {
            return Err(SettingsError::Invalid(
                "background.workers must be at least 1 and background.lease_ms at least 300".into(),
            ));
        }
        c.background = self.background;
        c.metrics = self.metrics;
        c.messages = self.messages;
        c.tenants = self
            .tenants
            .into_iter()
            .map(|(name, t)| {
                let limits = QuotaLimits {
                    requests_per_minute: t.requests_per_minute,
                    tokens_per_minute: t.tokens_per_minute,
                };
                (name, limits)
            })
            .collect();
        if let Some(secs) = self.shutdown_grace_secs {
            c.shutdown_grace = Duration::from_secs(secs);
        }
        if let Some(secs) = self.sse_keepalive_secs {
            c.sse_keepalive = (secs > 0).then(|| Duration::from_secs(secs));
        }
        c.connection_threads = self.connection_threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        // Fail now rather than on the first request.
        c.key_ring()?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ServerFile {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn blank_keys_refuse_to_start() {
        let keys = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect());
        assert!(ServerFile::default().resolve(keys(&["", ""])).is_err());
        assert!(ServerFile::default().resolve(keys(&[""])).is_err());
        assert!(ServerFile::default().resolve(keys(&[])).is_err());
        let ok = ServerFile::default().resolve(keys(&["k1", " k2"])).unwrap();
        assert_eq!(ok.key_ring().unwrap().find("k2").unwrap().name, "key-2");
        // The flag replaces the file's list; the file's named keys stay.
        let file = parse("api_keys = [\"f\"]\n[[keys]]\nname = \"ci\"\nkey = \"sk-ci\"\n");
        let ring = file.resolve(keys(&["cli"])).unwrap().key_ring().unwrap();
        assert!(ring.find("f").is_none());
        assert_eq!(ring.find("cli").unwrap().name, "key-1");
        assert_eq!(ring.find("sk-ci").unwrap().name, "ci");
    }

    #[test]
    fn every_setting_is_read() {
        let c = parse(
            "max_body_bytes = 10\nheader_read_timeout_ms = 1000\nbody_read_timeout_ms = 2000\n\
             max_connections = 5\nhard_max_connections = 6\nmax_inflight_responses = 7\n\
             cors_allowed_origins = [\"https://app.example\"]\nallowed_hosts = [\"gw.local\"]\n\
             shutdown_grace_secs = 4\nsse_keepalive_secs = 0\n\
             [limits]\nmax_input_items = 3\n",
        )
        .resolve(None)
        .unwrap();
        let d = &c.connections;
        assert_eq!(c.max_body_bytes, 10);
        assert_eq!(d.header_read_timeout, Duration::from_secs(1));
        assert_eq!(d.body_read_timeout, Duration::from_secs(2));
        assert_eq!((d.max_connections, d.hard_max_connections), (5, 6));
        assert_eq!(d.max_inflight_responses, 7);
        assert_eq!(c.cors_allowed_origins, ["https://app.example"]);
        assert_eq!(c.allowed_hosts, ["gw.local"]);
        assert_eq!(c.limits.max_input_items, 3);
        let t = parse("[tenants.acme]\nrequests_per_minute = 4\ntokens_per_minute = 9\n")
            .resolve(None)
            .unwrap();
        assert_eq!(t.tenants["acme"].requests_per_minute, Some(4));
        assert_eq!(t.tenants["acme"].tokens_per_minute, Some(9));
        let keyed = parse(
            "[[keys]]\nname = \"a\"\nkey = \"sk-a\"\ntenant = \"acme\"\n\
             scopes = [\"responses:read\"]\nrequests_per_minute = 3\n",
        )
        .resolve(None)
        .unwrap();
        let a = keyed.key_ring().unwrap().find("sk-a").unwrap();
        assert_eq!(a.tenant, "acme");
        assert_eq!(a.limits.requests_per_minute, Some(3));
        assert!(!a
            .scopes
            .contains(crate::guard::scopes::Scope::ResponsesWrite));
        let bad = parse("[[keys]]\nname = \"a\"\nkey = \"k\"\nscopes = [\"root\"]\n");
        assert!(bad.resolve(None).is_err());
        // A key's loop techniques are checked at start-up.
        let techniques = parse(
            "[[keys]]\nname = \"a\"\nkey = \"sk-a\"\ntechniques = [\"stall_stop\", \"-completion_check\"]\n",
        )
        .resolve(None)
        .unwrap();
        let a = techniques.key_ring().unwrap().find("sk-a").unwrap();
        assert_eq!(
            a.techniques.as_deref(),
            Some("stall_stop,-completion_check")
        );
        let bad = parse("[[keys]]\nname = \"a\"\nkey = \"k\"\ntechniques = [\"plan\"]\n");
        let Err(err) = bad.resolve(None).map(drop) else {
            panic!("an unknown technique must refuse to start");
        };
        let err = err.to_string();
        assert!(err.contains("unknown technique 'plan'"), "{err}");
        assert_eq!(c.shutdown_grace, Duration::from_secs(4));
        assert_eq!(c.sse_keepalive, None);
        let d = ServerFile::default().resolve(None).unwrap();
        assert_eq!(d.sse_keepalive, Some(Duration::from_secs(15)));
        assert!(parse("max_connections = 9\nhard_max_connections = 2\n")
            .resolve(None)
            .is_err());
    }
}
