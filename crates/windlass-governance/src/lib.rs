//! Windlass governance: one gate, the engine's [`Policy`](windlass_engine::Policy),
//! checked before every server-side tool call (built-ins, MCP tools, SDK
//! tools), configured by the operator in `[governance]` and per API key.
//!
//! Layer: an adapter; depends on `windlass-engine` and `windlass-protocol` only,
//! never on a surface (`windlass-server`, `windlass`, `windlass-cli`) or another adapter.
//!
//! - rate limits per key and per key and tool (a limited call becomes an
//!   error output the model sees; the response goes on);
//! - autonomy level: `read_only`, `supervised` (writes and commands wait for
//!   an approval), `full`;
//! - scopes: the tools and MCP servers a key may use;
//! - `shell` lines checked segment by segment against a command allowlist;
//!   substitution, subshells and redirections outside the allowed paths
//!   refused;
//! - path allowlist for file tools, domain allowlist for `web_fetch`;
//! - per-response budgets (files read and written, lines changed, commands
//!   run, network requests), lowered by request `metadata`;
//! - an optional policy webhook (allow / deny / rewrite / require approval),
//!   failing closed by default, its requests signed as Standard Webhooks
//!   when it has a `secret` (`signing`; `delivery` sends other signed
//!   webhooks with retries).
//!
//! Every decision is logged as one line (target `windlass_governance`) with
//! the tool, the rule that fired and the verdict.

pub mod budget;
pub mod classify;
pub mod config;
pub mod counters;
pub mod delivery;
pub mod paths;
mod policy;
pub mod rate;
pub mod shell;
pub mod signing;
pub mod webhook;

pub use classify::{ToolHints, BUILTIN_LABEL};
pub use config::{
    Autonomy, Budgets, GovernanceConfig, GovernanceConfigError, OnError, RateLimit, Rules,
    WebhookConfig,
};
pub use counters::InProcessCounters;
pub use delivery::{Delivered, DeliveryConfig, DeliveryError, WebhookDelivery};
pub use policy::Governance;
pub use signing::{SecretConfig, SignedHeaders, SigningError, WebhookSecret};
