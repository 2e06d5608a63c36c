//! Streams read while they run, and polling a response until a status.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::gateway::Gateway;
use crate::http::content_type;
use crate::sse_check::SseCapture;

/// Polls `GET /v1/responses/{id}` until its status is `status`.
pub async fn wait_for_status(gw: &Gateway, id: &str, status: &str, timeout: Duration) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let (code, body) = gw.get_json(&format!("/v1/responses/{id}")).await;
        if code == 200 && body["status"] == status {
            return body;
        }
        if Instant::now() >= deadline {
            panic!("response {id} did not reach {status}: last {code} {body}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A streamed response read incrementally.
pub struct LiveStream {
    pub resp: reqwest::Response,
    pub status: u16,
    pub content_type: String,
    pub raw: String,
}

impl LiveStream {
    /// `POST /v1/responses` with `stream: true`; returns once headers arrived.
    pub async fn open(gw: &Gateway, body: &Value) -> LiveStream {
        LiveStream::open_at(&gw.client, &gw.base, body).await
    }

    /// `open` against any server (e.g. a `windlass serve` process).
    pub async fn open_at(client: &reqwest::Client, base: &str, body: &Value) -> LiveStream {
        let mut body = body.clone();
        body["stream"] = json!(true);
        let resp = client
            .post(format!("{base}/v1/responses"))
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = resp.status().as_u16();
        let content_type = content_type(&resp);
        LiveStream {
            resp,
            status,
            content_type,
            raw: String::new(),
        }
    }

    /// Reads until the raw text contains `needle`; false on timeout or end.
    pub async fn read_until(&mut self, needle: &str, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while !self.raw.contains(needle) {
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(chunk))) => self.raw.push_str(&String::from_utf8_lossy(&chunk)),
                _ => return false,
            }
        }
        true
    }

    /// The `response.id` carried by the `response.created` event.
    pub fn response_id(&self) -> String {
        let cap = SseCapture::parse(200, String::new(), self.complete_events());
        let (_, created) = cap
            .events
            .iter()
            .find(|(n, _)| n == "response.created")
            .expect("response.created not read yet");
        created["response"]["id"]
            .as_str()
            .expect("response id")
            .to_owned()
    }

    /// The raw text up to the last complete event.
    fn complete_events(&self) -> String {
        match self.raw.rfind("\n\n") {
            Some(i) => self.raw[..i + 2].to_owned(),
            None => String::new(),
        }
    }

    /// Reads the rest of the body, however long it takes, and parses
    /// everything.
    pub async fn read_to_end(mut self) -> SseCapture {
        let rest = self.resp.text().await.expect("body");
        self.raw.push_str(&rest);
        SseCapture::parse(self.status, self.content_type, self.raw)
    }

    /// Reads the rest of the body and parses everything.
    pub async fn finish(mut self, timeout: Duration) -> SseCapture {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(chunk))) => self.raw.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(Ok(None)) => break,
                Ok(Err(e)) => panic!("stream body error: {e}; read so far: {}", self.raw),
                Err(_) => panic!("stream did not end in time; read so far: {}", self.raw),
            }
        }
        SseCapture::parse(self.status, self.content_type, self.raw)
    }
}

/// The response id of the `response.created` event in raw SSE text, once
/// its `data:` line has been read whole.
pub fn created_id(raw: &str) -> Option<String> {
    let whole_lines = &raw[..raw.rfind('\n').map_or(0, |i| i + 1)];
    whole_lines.lines().find_map(|line| {
        let v: Value = serde_json::from_str(line.strip_prefix("data: ")?).ok()?;
        (v["type"] == "response.created")
            .then(|| v["response"]["id"].as_str().map(str::to_owned))
            .flatten()
    })
}
