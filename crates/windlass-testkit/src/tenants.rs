//! Tenancy: named keys of several tenants, and a client that sends one of
//! them.

use std::time::Duration;

use serde_json::{json, Value};
use windlass_server::{ApiKey, KeyConfig};

use crate::gateway::Gateway;

pub const WAIT: Duration = Duration::from_secs(20);

/// A `[[server.keys]]` entry as a config file would give it.
pub fn key(name: &str, tenant: &str) -> KeyConfig {
    KeyConfig {
        name: name.into(),
        key: Some(format!("sk-{name}")),
        tenant: Some(tenant.into()),
        ..KeyConfig::default()
    }
}

pub fn resolve(entries: &[KeyConfig]) -> Vec<ApiKey> {
    entries
        .iter()
        .map(|k| ApiKey::from_config(k).expect("key"))
        .collect()
}

/// Requests made with one key.
pub struct As<'g> {
    pub gw: &'g Gateway,
    token: String,
}

impl<'g> As<'g> {
    pub fn new(gw: &'g Gateway, name: &str) -> As<'g> {
        As {
            gw,
            token: format!("Bearer sk-{name}"),
        }
    }

    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.gw
            .client
            .request(method, self.gw.url(path))
            .header("authorization", &self.token)
    }

    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        read(self.req(reqwest::Method::POST, path).json(body)).await
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        read(self.req(reqwest::Method::GET, path)).await
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        read(self.req(reqwest::Method::DELETE, path)).await
    }

    /// `POST /v1/responses` as JSON; panics unless 200.
    pub async fn create(&self, body: &Value) -> Value {
        let (s, b) = self.post("/v1/responses", body).await;
        assert_eq!(s, 200, "{b}");
        b
    }

    /// Opens a streamed create; returns the live response.
    pub async fn stream(&self, body: &Value) -> reqwest::Response {
        let mut body = body.clone();
        body["stream"] = json!(true);
        let resp = self
            .req(reqwest::Method::POST, "/v1/responses")
            .json(&body)
            .send()
            .await
            .expect("request");
        assert_eq!(resp.status().as_u16(), 200);
        resp
    }
}

/// The whole response with its headers' `Retry-After`.
pub async fn read_with_retry(req: reqwest::RequestBuilder) -> (u16, Option<String>, Value) {
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let retry = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (status, retry, resp.json().await.unwrap_or(Value::Null))
}

async fn read(req: reqwest::RequestBuilder) -> (u16, Value) {
    let (s, _, b) = read_with_retry(req).await;
    (s, b)
}

/// Reads a live stream until `needle` appears; returns what was read.
pub async fn read_until(resp: &mut reqwest::Response, needle: &str) -> String {
    let mut raw = String::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while !raw.contains(needle) {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => raw.push_str(&String::from_utf8_lossy(&chunk)),
            _ => panic!("stream ended before {needle}: {raw}"),
        }
    }
    raw
}

/// The id of the `response.created` event in a stream's text.
pub fn created_id(raw: &str) -> String {
    crate::live::created_id(raw).expect("response.created")
}

/// The error object of an error answer, with the status and OpenAI's error
/// shape checked.
pub fn error_of(status: u16, body: &Value, expected: u16) -> Value {
    crate::check::assert_api_error(status, body, expected)
}

/// An error body with the id replaced, to compare answers for two ids.
pub fn without(body: &Value, id: &str) -> String {
    body.to_string().replace(id, "<ID>")
}
