//! The `[governance]` table: defaults for every caller, overridden per API
//! key under `[governance.keys.<key name>]`.
//!
//! ```toml
//! [governance]
//! autonomy = "supervised"           # read_only | supervised | full
//! tools = ["windlass", "calc"]      # scopes: labels, label/tool or function names
//! commands = ["ls", "cat", "wc"]    # shell allowlist (each segment's command)
//! paths = ["/srv/work"]             # file tools and shell redirections
//! domains = ["example.com", "*.rust-lang.org"]
//! rate_limit = { per_minute = 120, burst = 20 }       # per key
//! tool_rate_limit = { per_minute = 30, burst = 5 }    # per key and tool
//! budgets = { files_read = 100, commands_run = 50 }   # per response
//!
//! [governance.keys.ci]
//! autonomy = "read_only"
//!
//! [governance.webhook]
//! url = "http://127.0.0.1:9000/decide"
//! timeout_ms = 2000
//! on_error = "deny"
//! secret_env = "WINDLASS_POLICY_WEBHOOK_SECRET"   # or secret = "whsec_..."
//! ```

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use serde::Deserialize;

use crate::signing::{SecretConfig, WebhookSecret};

/// How far a caller's tools may act on their own (seed 004 1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Autonomy {
    /// Only read-only tools: file reads, directory listings, web fetches and
    /// MCP tools marked `readOnlyHint`.
    ReadOnly,
    /// Every write or command needs a human approval first.
    Supervised,
    #[default]
    Full,
}

/// A rolling limit with burst (a token bucket): `burst` calls at once, refilled
/// at `per_minute`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub per_minute: NonZeroU32,
    /// Defaults to `per_minute`.
    #[serde(default)]
    pub burst: Option<NonZeroU32>,
}

/// Per-response ceilings (seed 004 EF-01..EF-08). `None`: unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    pub files_read: Option<u64>,
    pub files_written: Option<u64>,
    pub lines_changed: Option<u64>,
    pub commands_run: Option<u64>,
    pub network_requests: Option<u64>,
}

impl Budgets {
    /// `self`, with every field `other` sets replacing it.
    pub fn overridden_by(self, other: &Budgets) -> Budgets {
        Budgets {
            files_read: other.files_read.or(self.files_read),
            files_written: other.files_written.or(self.files_written),
            lines_changed: other.lines_changed.or(self.lines_changed),
            commands_run: other.commands_run.or(self.commands_run),
            network_requests: other.network_requests.or(self.network_requests),
        }
    }
}

/// The rules for one caller. Every field is optional so a key's table only
/// says what differs from the defaults.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    pub autonomy: Option<Autonomy>,
    /// Scopes: tools the caller may use. An entry is an MCP server label
    /// (all its tools; `windlass` for the built-ins), `label/tool`, or a
    /// function tool's name. `None`: every tool.
    pub tools: Option<Vec<String>>,
    /// Commands a `shell` line may run. `None`: any command (the line's
    /// structure is checked all the same).
    pub commands: Option<Vec<String>>,
    /// Directories file tools and shell redirections may touch (on top of
    /// the built-ins' own roots). `None`: the built-ins' roots.
    pub paths: Option<Vec<String>>,
    /// Hosts `web_fetch` may reach: exact names or `*.suffix`. `None`: any
    /// host the outbound guard lets through.
    pub domains: Option<Vec<String>>,
    pub rate_limit: Option<RateLimit>,
    pub tool_rate_limit: Option<RateLimit>,
    #[serde(default)]
    pub budgets: Budgets,
}

impl Rules {
    /// `self` with every field `key` sets replacing it.
    pub fn overridden_by(&self, key: &Rules) -> Rules {
        Rules {
            autonomy: key.autonomy.or(self.autonomy),
            tools: key.tools.clone().or_else(|| self.tools.clone()),
            commands: key.commands.clone().or_else(|| self.commands.clone()),
            paths: key.paths.clone().or_else(|| self.paths.clone()),
            domains: key.domains.clone().or_else(|| self.domains.clone()),
            rate_limit: key.rate_limit.or(self.rate_limit),
            tool_rate_limit: key.tool_rate_limit.or(self.tool_rate_limit),
            budgets: self.budgets.overridden_by(&key.budgets),
        }
    }
}

/// What a failed or late webhook answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    #[default]
    Deny,
    Allow,
}

/// `[governance.webhook]`: an operator service asked about every call that
/// passed the local rules.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    pub url: String,
    #[serde(default = "default_webhook_timeout")]
    pub timeout_ms: u64,
    #[serde(default)]
    pub on_error: OnError,
    /// Signs every request as a Standard Webhook (`webhook-id`,
    /// `webhook-timestamp`, `webhook-signature`): `whsec_<base64>`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub secret: Option<SecretConfig>,
    /// An environment variable holding the secret (keeps it out of the file).
    #[serde(default)]
    pub secret_env: Option<String>,
}

impl WebhookConfig {
    /// The signing secret, from `secret` or `secret_env`.
    pub fn signing_secret(&self) -> Result<Option<WebhookSecret>, GovernanceConfigError> {
        match (&self.secret, &self.secret_env) {
            (Some(_), Some(_)) => Err(GovernanceConfigError::TwoSecrets),
            (Some(s), None) => Ok(Some(s.0.clone())),
            (None, Some(var)) => {
                let text = std::env::var(var)
                    .map_err(|_| GovernanceConfigError::SecretEnv(var.clone()))?;
                WebhookSecret::parse(&text)
                    .map(Some)
                    .map_err(|_| GovernanceConfigError::SecretEnv(var.clone()))
            }
            (None, None) => Ok(None),
        }
    }
}

fn default_webhook_timeout() -> u64 {
    2000
}

/// The `[governance]` table.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GovernanceConfig {
    #[serde(flatten)]
    pub defaults: Rules,
    /// Per API key (by the key's name).
    #[serde(default)]
    pub keys: BTreeMap<String, Rules>,
    #[serde(default)]
    pub webhook: Option<WebhookConfig>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GovernanceConfigError {
    #[error("governance.webhook.url {0:?} is not an http(s) URL")]
    WebhookUrl(String),
    #[error("governance.webhook.timeout_ms must be at least 1")]
    WebhookTimeout,
    #[error("governance.webhook: HTTP client setup failed: {0}")]
    WebhookClient(String),
    #[error("governance.webhook: set secret or secret_env, not both")]
    TwoSecrets,
    #[error("governance.webhook.secret_env: {0} is not set to a `whsec_` secret")]
    SecretEnv(String),
    #[error("{field}: {entry:?} is empty or not a valid entry")]
    Entry { field: String, entry: String },
}

impl GovernanceConfig {
    /// The rules for `principal`: the defaults, overridden by its key's table.
    pub fn rules_for(&self, principal: Option<&str>) -> Rules {
        match principal.and_then(|p| self.keys.get(p)) {
            Some(key) => self.defaults.overridden_by(key),
            None => self.defaults.clone(),
        }
    }

    /// Refuses what would fail later (a bad URL, empty entries).
    pub fn validate(&self) -> Result<(), GovernanceConfigError> {
        if let Some(w) = &self.webhook {
            let ok = url::Url::parse(&w.url)
                .map(|u| matches!(u.scheme(), "http" | "https"))
                .unwrap_or(false);
            if !ok {
                return Err(GovernanceConfigError::WebhookUrl(w.url.clone()));
            }
            if w.timeout_ms == 0 {
                return Err(GovernanceConfigError::WebhookTimeout);
            }
            w.signing_secret()?;
        }
        let tables = std::iter::once(("governance".to_owned(), &self.defaults)).chain(
            self.keys
                .iter()
                .map(|(k, r)| (format!("governance.keys.{k}"), r)),
        );
        for (name, rules) in tables {
            let lists = [
                ("tools", &rules.tools),
                ("commands", &rules.commands),
                ("paths", &rules.paths),
                ("domains", &rules.domains),
            ];
            for (field, list) in lists {
                if let Some(bad) = list.iter().flatten().find(|e| e.trim().is_empty()) {
                    return Err(GovernanceConfigError::Entry {
                        field: format!("{name}.{field}"),
                        entry: bad.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}
