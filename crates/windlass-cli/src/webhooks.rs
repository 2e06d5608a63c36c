//! `[webhooks]`: background responses announced to an operator's URL when
//! they end, as Standard Webhooks (`webhook-id`, `webhook-timestamp`,
//! `webhook-signature`: HMAC-SHA256 with the `whsec_` secret), retried with
//! backoff under the same `webhook-id`. The body is OpenAI's event
//! (`{"id":"evt_…","object":"event","type":"response.completed",
//! "created_at":…,"data":{"id":"resp_…"}}`); the receiver fetches the
//! response itself.
//!
//! ```toml
//! [webhooks]
//! url = "https://hooks.example.com/windlass"
//! secret_env = "WINDLASS_WEBHOOK_SECRET"   # or secret = "whsec_..."
//! events = ["response.completed", "response.failed"]   # default: all four
//! ```

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use windlass_governance::{
    DeliveryConfig, GovernanceConfigError, SecretConfig, WebhookDelivery, WebhookSecret,
};
use windlass_protocol::{ResponseResource, WebhookEvent};
use windlass_server::ResponseNotifier;

/// The events a receiver may ask for.
pub const EVENTS: [&str; 4] = [
    "response.completed",
    "response.failed",
    "response.cancelled",
    "response.incomplete",
];

/// `[webhooks]` as written.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhooksFile {
    /// Where events are POSTed; no webhooks without it.
    pub url: Option<String>,
    /// The signing secret, `whsec_<base64>`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub secret: Option<SecretConfig>,
    /// An environment variable holding the secret (keeps it out of the file).
    pub secret_env: Option<String>,
    /// Which events are sent (default: all of `EVENTS`).
    pub events: Option<Vec<String>>,
    /// Per attempt (default 10 000).
    pub timeout_ms: Option<u64>,
    /// Attempts in all, the first included (default 8).
    pub max_attempts: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum WebhooksError {
    #[error("[webhooks]: {0}")]
    Secret(#[from] GovernanceConfigError),
    #[error("[webhooks]: set secret or secret_env (every webhook is signed)")]
    NoSecret,
    #[error("[webhooks]: set url (secret and events alone send nothing)")]
    NoUrl,
    #[error("[webhooks] events: unknown event '{0}' (known: {EVENTS:?})")]
    UnknownEvent(String),
    #[error("[webhooks]: {0}")]
    Client(String),
}

/// The notifier `[webhooks]` asks for, if any.
pub fn notifier(file: &WebhooksFile) -> Result<Option<Arc<dyn ResponseNotifier>>, WebhooksError> {
    let secret = secret(file)?;
    let Some(url) = &file.url else {
        return match secret {
            Some(_) => Err(WebhooksError::NoUrl),
            None => Ok(None),
        };
    };
    let secret = secret.ok_or(WebhooksError::NoSecret)?;
    let events = match &file.events {
        Some(list) => {
            if let Some(bad) = list.iter().find(|e| !EVENTS.contains(&e.as_str())) {
                return Err(WebhooksError::UnknownEvent(bad.clone()));
            }
            list.clone()
        }
        None => EVENTS.iter().map(|e| (*e).to_owned()).collect(),
    };
    let mut config = DeliveryConfig::new(url.clone(), secret);
    if let Some(ms) = file.timeout_ms {
        config.timeout = Duration::from_millis(ms);
    }
    if let Some(n) = file.max_attempts {
        config.max_attempts = n.max(1);
    }
    let delivery = WebhookDelivery::new(config).map_err(WebhooksError::Client)?;
    Ok(Some(Arc::new(Webhooks { delivery, events })))
}

fn secret(file: &WebhooksFile) -> Result<Option<WebhookSecret>, WebhooksError> {
    match (&file.secret, &file.secret_env) {
        (Some(_), Some(_)) => Err(GovernanceConfigError::TwoSecrets.into()),
        (Some(s), None) => Ok(Some(s.0.clone())),
        (None, Some(var)) => {
            let bad = || GovernanceConfigError::SecretEnv(var.clone());
            let text = std::env::var(var).map_err(|_| bad())?;
            Ok(Some(WebhookSecret::parse(&text).map_err(|_| bad())?))
        }
        (None, None) => Ok(None),
    }
}

struct Webhooks {
    delivery: WebhookDelivery,
    events: Vec<String>,
}

#[async_trait::async_trait]
impl ResponseNotifier for Webhooks {
    async fn response_ended(&self, _tenant: &str, response: &ResponseResource) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let Some(event) = WebhookEvent::for_response(&response.id, response.status, now) else {
            return;
        };
        if !self.events.contains(&event.kind) {
            return;
        }
        let body = match serde_json::to_vec(&event) {
            Ok(b) => b,
            Err(e) => {
                tracing::error!(error = %e, "cannot serialize a webhook event");
                return;
            }
        };
        match self.delivery.send(&event.id, &body).await {
            Ok(done) => {
                tracing::debug!(id = %event.id, response = %response.id, attempts = done.attempts, "webhook delivered")
            }
            Err(e) => {
                tracing::warn!(id = %event.id, response = %response.id, error = %e, "webhook not delivered")
            }
        }
    }
}
