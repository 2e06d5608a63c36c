//! The policy webhook: an operator service that sees each pending
//! server-side call (after the local rules passed) and answers allow, deny
//! with a reason, rewrite the arguments, or require an approval. No answer
//! in time, or an unreadable one, means `on_error` (deny by default). With a
//! `secret`, every request is signed as a Standard Webhook.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use windlass_protocol::ids::new_id;

use crate::config::{OnError, WebhookConfig};
use crate::signing::WebhookSecret;

/// What the webhook is sent (one JSON object per call).
#[derive(Debug, Clone, Serialize)]
pub struct WebhookCall<'a> {
    pub response_id: &'a str,
    pub model: &'a str,
    /// The API key's name, if the caller has one.
    pub principal: Option<&'a str>,
    pub turn: u32,
    pub call_id: &'a str,
    /// The model-visible tool name.
    pub tool: &'a str,
    /// For MCP tools (`windlass` for the built-ins).
    pub server_label: Option<&'a str>,
    pub mcp_tool: Option<&'a str>,
    /// `read`, `write`, `exec` or `own` (a function tool).
    pub effect: &'a str,
    /// The call's arguments as JSON (a string when they are not JSON).
    pub arguments: Value,
}

/// The webhook's answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum WebhookAnswer {
    Allow,
    Deny {
        #[serde(default)]
        reason: Option<String>,
    },
    /// Run the call with these arguments (a JSON object) instead.
    Rewrite {
        arguments: Value,
    },
    RequireApproval,
}

pub struct Webhook {
    client: reqwest::Client,
    config: WebhookConfig,
    /// Signs each request (Standard Webhooks) when configured.
    secret: Option<WebhookSecret>,
}

impl Webhook {
    pub fn new(config: WebhookConfig) -> Result<Webhook, String> {
        // reqwest is built without a default TLS provider; an error only
        // means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // No redirects: the answer must come from the configured URL.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        let secret = config.signing_secret().map_err(|e| e.to_string())?;
        Ok(Webhook {
            client,
            config,
            secret,
        })
    }

    /// Asks about one call. A failure yields `on_error`'s answer, with why.
    pub async fn ask(&self, call: &WebhookCall<'_>) -> (WebhookAnswer, Option<String>) {
        match self.post(call).await {
            Ok(answer) => (answer, None),
            Err(problem) => {
                tracing::warn!(target: "windlass_governance", url = %self.config.url, %problem, "policy webhook failed");
                let answer = match self.config.on_error {
                    OnError::Allow => WebhookAnswer::Allow,
                    OnError::Deny => WebhookAnswer::Deny {
                        reason: Some(format!("the policy service could not decide ({problem})")),
                    },
                };
                (answer, Some(problem))
            }
        }
    }

    async fn post(&self, call: &WebhookCall<'_>) -> Result<WebhookAnswer, String> {
        let body = serde_json::to_vec(call).map_err(|e| format!("unencodable call: {e}"))?;
        let mut request = self
            .client
            .post(&self.config.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        if let Some(secret) = &self.secret {
            // One id per question: each call is its own message.
            request = secret.headers(&new_id("msg"), &body).apply(request);
        }
        let send = request.body(body).send();
        let limit = Duration::from_millis(self.config.timeout_ms);
        let response = tokio::time::timeout(limit, async {
            let response = send.await.map_err(|e| format!("request failed: {e}"))?;
            let status = response.status();
            if !status.is_success() {
                return Err(format!("answered HTTP {status}"));
            }
            response
                .bytes()
                .await
                .map_err(|e| format!("reading the answer failed: {e}"))
        })
        .await
        .map_err(|_| format!("no answer within {} ms", self.config.timeout_ms))??;
        let answer: WebhookAnswer =
            serde_json::from_slice(&response).map_err(|e| format!("unreadable answer: {e}"))?;
        if let WebhookAnswer::Rewrite { arguments } = &answer {
            if !arguments.is_object() {
                return Err("a rewrite must give `arguments` as a JSON object".to_owned());
            }
        }
        Ok(answer)
    }
}
