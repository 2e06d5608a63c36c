//! `/v1/messages` as Anthropic's SDK calls it, for tests of that surface:
//! one request, and the named frames of a streamed answer.

use serde_json::Value;

use crate::Gateway;

/// `POST /v1/messages` with `anthropic-version`; the status and the body
/// as text (a stream's frames, or JSON).
pub async fn post(gw: &Gateway, body: &Value) -> (u16, String) {
    let resp = gw
        .client
        .post(gw.url("/v1/messages"))
        .header("anthropic-version", "2023-06-01")
        .json(body)
        .send()
        .await
        .expect("send");
    (resp.status().as_u16(), resp.text().await.expect("text"))
}

/// `(event, data)` of each SSE frame of a stream's body.
pub fn frames(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter(|f| f.starts_with("event: "))
        .map(|f| {
            let (event, data) = f.split_once('\n').expect("two lines");
            let data = serde_json::from_str(data.trim_start_matches("data: ")).expect("json");
            (event.trim_start_matches("event: ").to_owned(), data)
        })
        .collect()
}
