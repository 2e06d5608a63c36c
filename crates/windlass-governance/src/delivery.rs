//! Delivering signed webhooks: one POST per message with the Standard
//! Webhooks headers, retried with exponential backoff while the receiver is
//! unreachable or answers 408, 429 or 5xx. Every attempt carries the same
//! `webhook-id` (the receiver's key for dropping duplicates) and is signed
//! anew with its own timestamp.

use std::time::Duration;

use reqwest::header::CONTENT_TYPE;

use crate::signing::WebhookSecret;

/// Where and how a kind of webhook is delivered.
#[derive(Debug, Clone)]
pub struct DeliveryConfig {
    pub url: String,
    pub secret: WebhookSecret,
    /// Per attempt, until the answer's status.
    pub timeout: Duration,
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait before the second attempt; doubles after each, up to
    /// `max_backoff`, each wait jittered by up to a fifth.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl DeliveryConfig {
    /// Eight attempts over about four minutes, ten seconds each.
    pub fn new(url: impl Into<String>, secret: WebhookSecret) -> DeliveryConfig {
        DeliveryConfig {
            url: url.into(),
            secret,
            timeout: Duration::from_secs(10),
            max_attempts: 8,
            backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// A message the receiver took (a 2xx).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub attempts: u32,
    pub status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// A status that retrying cannot change (a 4xx other than 408 and 429).
    #[error("the receiver refused the webhook with HTTP {status}")]
    Refused { status: u16, attempts: u32 },
    #[error("the webhook was not delivered after {attempts} attempts: {last}")]
    GaveUp { attempts: u32, last: String },
}

pub struct WebhookDelivery {
    client: reqwest::Client,
    config: DeliveryConfig,
}

impl WebhookDelivery {
    pub fn new(config: DeliveryConfig) -> Result<WebhookDelivery, String> {
        // reqwest is built without a default TLS provider; an error only
        // means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // No redirects: the message goes to the configured URL only.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.timeout)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(WebhookDelivery { client, config })
    }

    /// Delivers `body` (JSON) as message `id`, retrying as configured.
    pub async fn send(&self, id: &str, body: &[u8]) -> Result<Delivered, DeliveryError> {
        let attempts = self.config.max_attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=attempts {
            if attempt > 1 {
                tokio::time::sleep(self.wait(attempt - 1)).await;
            }
            let signed = self.config.secret.headers(id, body);
            let request = self
                .client
                .post(&self.config.url)
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_vec());
            match signed.apply(request).send().await {
                Ok(answer) => {
                    let status = answer.status().as_u16();
                    if answer.status().is_success() {
                        return Ok(Delivered {
                            attempts: attempt,
                            status,
                        });
                    }
                    if !retryable(status) {
                        return Err(DeliveryError::Refused {
                            status,
                            attempts: attempt,
                        });
                    }
                    last = format!("HTTP {status}");
                }
                Err(e) => last = e.to_string(),
            }
            tracing::warn!(target: "windlass_governance", url = %self.config.url, id, attempt, problem = %last, "webhook delivery failed");
        }
        Err(DeliveryError::GaveUp { attempts, last })
    }

    /// The wait after failed attempt number `failed`.
    fn wait(&self, failed: u32) -> Duration {
        let doubled = self
            .config
            .backoff
            .saturating_mul(1 << failed.saturating_sub(1).min(16));
        let capped = doubled.min(self.config.max_backoff);
        let jitter = capped.mul_f64(rand::random::<f64>() * 0.2);
        capped.saturating_sub(jitter)
    }
}

fn retryable(status: u16) -> bool {
    status == 408 || status == 429 || status >= 500
}
