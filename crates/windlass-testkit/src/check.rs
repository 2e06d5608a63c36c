//! Shared helpers for the `gateway_*` integration tests.
//!
//! Included with `#[path = "common/gw_util.rs"] mod gw_util;` so it does not
//! clash with other testers' `common/mod.rs`.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use windlass_testkit::{Gateway, SseCapture};

/// The 31 fields OpenResponses' `ResponseResource` marks as required.
pub const REQUIRED_RESPONSE_FIELDS: [&str; 31] = [
    "id",
    "object",
    "created_at",
    "completed_at",
    "status",
    "incomplete_details",
    "model",
    "previous_response_id",
    "instructions",
    "output",
    "error",
    "tools",
    "tool_choice",
    "truncation",
    "parallel_tool_calls",
    "text",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "top_logprobs",
    "temperature",
    "reasoning",
    "usage",
    "max_output_tokens",
    "max_tool_calls",
    "store",
    "background",
    "service_tier",
    "metadata",
    "safety_identifier",
    "prompt_cache_key",
];

/// Checks `{"error":{"message","type","param","code"}}` (all four keys
/// present; message and type non-empty strings; param and code string or
/// null) and returns the inner error object.
pub fn assert_error_shape(body: &Value) -> &Value {
    let err = body
        .get("error")
        .unwrap_or_else(|| panic!("no `error` object in {body}"));
    let obj = err
        .as_object()
        .unwrap_or_else(|| panic!("`error` is not an object: {body}"));
    for key in ["message", "type", "param", "code"] {
        assert!(obj.contains_key(key), "error.{key} missing in {body}");
    }
    assert!(
        err["message"].as_str().is_some_and(|s| !s.is_empty()),
        "error.message must be a non-empty string: {body}"
    );
    assert!(
        err["type"].as_str().is_some_and(|s| !s.is_empty()),
        "error.type must be a non-empty string: {body}"
    );
    assert!(
        err["param"].is_null() || err["param"].is_string(),
        "error.param must be string or null: {body}"
    );
    assert!(
        err["code"].is_null() || err["code"].is_string(),
        "error.code must be string or null: {body}"
    );
    err
}

/// Asserts the status and the error shape; returns the inner error object.
pub fn assert_api_error(status: u16, body: &Value, expected: u16) -> Value {
    assert_eq!(status, expected, "status; body: {body}");
    assert_error_shape(body).clone()
}

/// Runs `sql` read-only on the gateway's database with the `sqlite3` CLI,
/// or, where it is not installed (a fresh CI machine), with Python's
/// built-in `sqlite3` module, printing rows the way the CLI does. Never
/// skips: a DB-level check that cannot run fails. Always `Some`.
pub fn sqlite(db: &Path, sql: &str) -> Option<String> {
    let out = match Command::new("sqlite3")
        .arg("-readonly")
        .arg(db)
        .arg(sql)
        .output()
    {
        Ok(out) => out,
        Err(_) => Command::new("python3")
            .arg("-c")
            .arg(PY_SQLITE)
            .arg(db)
            .arg(sql)
            .output()
            .unwrap_or_else(|e| panic!("neither sqlite3 nor python3 can run ({e}): {sql}")),
    };
    assert!(
        out.status.success(),
        "sqlite query failed on {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `sqlite3 -readonly DB SQL` in Python: rows as `a|b|c`, NULL as empty.
const PY_SQLITE: &str = "import sqlite3, sys\n\
c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n\
for r in c.execute(sys.argv[2]):\n    \
print('|'.join('' if v is None else str(v) for v in r))\n";

/// Number of rows in the `responses` table.
pub fn stored_response_count(gw: &Gateway) -> Option<usize> {
    sqlite(&gw.db, "SELECT count(*) FROM responses;").map(|s| {
        s.trim()
            .parse()
            .unwrap_or_else(|e| panic!("count: {e}: {s}"))
    })
}

/// Number of rows in the `items` table.
pub fn stored_item_count(gw: &Gateway) -> Option<usize> {
    sqlite(&gw.db, "SELECT count(*) FROM items;").map(|s| {
        s.trim()
            .parse()
            .unwrap_or_else(|e| panic!("count: {e}: {s}"))
    })
}

/// `(id, status, error.code)` of every stored response, oldest first.
pub fn stored_statuses(gw: &Gateway) -> Option<Vec<(String, String, String)>> {
    sqlite(
        &gw.db,
        "SELECT id, json_extract(body, '$.status'), coalesce(json_extract(body, '$.error.code'), '') \
         FROM responses ORDER BY created_at, rowid;",
    )
    .map(|s| {
        s.lines()
            .filter(|l| !l.is_empty())
            .map(|l| {
                let mut p = l.splitn(3, '|');
                (
                    p.next().unwrap_or_default().to_owned(),
                    p.next().unwrap_or_default().to_owned(),
                    p.next().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    })
}

/// Polls the DB until some response is stored with `status`; returns its
/// `(id, status, error.code)`.
pub async fn wait_db_status(
    gw: &Gateway,
    status: &str,
    timeout: Duration,
) -> Option<(String, String, String)> {
    let deadline = Instant::now() + timeout;
    loop {
        let rows = stored_statuses(gw)?;
        if let Some(r) = rows.iter().find(|r| r.1 == status) {
            return Some(r.clone());
        }
        if Instant::now() >= deadline {
            panic!("no response stored with status {status} in time; stored: {rows:?}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Asserts nothing at all was written to the database.
pub fn assert_db_empty(gw: &Gateway, what: &str) {
    if let Some(n) = stored_response_count(gw) {
        assert_eq!(n, 0, "{what}: responses were stored");
    }
    if let Some(n) = stored_item_count(gw) {
        assert_eq!(n, 0, "{what}: items were stored");
    }
}

/// Whether the store knows an item with this public id (in-process check).
pub async fn item_stored(gw: &Gateway, item_id: &str) -> bool {
    gw.state
        .engine
        .store()
        .find_item(windlass_engine::DEFAULT_TENANT, item_id)
        .await
        .expect("find_item")
        .is_some()
}

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
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
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

/// The `type`s of a response's output items.
pub fn output_types(response: &Value) -> Vec<String> {
    response["output"]
        .as_array()
        .unwrap_or_else(|| panic!("no output array: {response}"))
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}
