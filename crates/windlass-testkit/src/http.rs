//! Reading HTTP answers the same way in every helper.

use serde_json::Value;

/// Sends `req` and reads the answer as [`read`] does.
pub async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    read(req.send().await.expect("request")).await
}

/// The status and the body as JSON (a body that is not JSON becomes a
/// JSON string).
pub async fn read(resp: reqwest::Response) -> (u16, Value) {
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, value)
}

/// The `content-type` header ("" when missing).
pub fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}
