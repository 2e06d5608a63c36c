//! Fixtures shared by the store tests: resources, items, chains of turns and
//! throwaway database files.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};
use windlass_engine::{NewResponse, ResponseStore, Trace, DEFAULT_TENANT};

/// The tenant the single-tenant tests store under.
pub(crate) const T: &str = DEFAULT_TENANT;
use windlass_protocol::{Item, ResponseResource};

/// A completed resource with every field set to something non-default, so a
/// lossy round trip shows up as an inequality.
pub(crate) fn resource(id: &str, previous: Option<&str>, output: Vec<Item>) -> ResponseResource {
    let value = json!({
        "id": id, "object": "response", "created_at": 1_700_000_000u64,
        "completed_at": 1_700_000_002u64, "status": "completed",
        "incomplete_details": null, "model": "test-model",
        "previous_response_id": previous, "instructions": "Be brief.",
        "output": [], "error": null,
        "tools": [{"type": "function", "name": "lookup", "description": "Looks up",
                   "parameters": {"type": "object", "properties": {}}, "strict": true}],
        "tool_choice": "auto", "truncation": "disabled", "parallel_tool_calls": true,
        "text": {"format": {"type": "text"}, "verbosity": "low"},
        "top_p": 0.9, "presence_penalty": 0.1, "frequency_penalty": 0.2,
        "top_logprobs": 2, "temperature": 0.7,
        "reasoning": {"effort": "low", "summary": "auto"},
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                  "input_tokens_details": {"cached_tokens": 3},
                  "output_tokens_details": {"reasoning_tokens": 1}},
        "max_output_tokens": 512, "max_tool_calls": null, "store": true,
        "background": false, "service_tier": "default", "metadata": {"k": "v"},
        "safety_identifier": null, "prompt_cache_key": "pck", "user": "u-1"
    });
    let mut resource: ResponseResource = serde_json::from_value(value).expect("valid resource");
    resource.output = output;
    resource
}

pub(crate) fn item(value: Value) -> Item {
    serde_json::from_value(value).expect("valid item")
}

pub(crate) fn user(id: &str, text: &str) -> Item {
    item(json!({"type": "message", "id": id, "role": "user",
                "content": [{"type": "input_text", "text": text}]}))
}

pub(crate) fn assistant(id: &str, text: &str) -> Item {
    item(
        json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}),
    )
}

pub(crate) fn call(id: &str, call_id: &str) -> Item {
    item(
        json!({"type": "function_call", "id": id, "call_id": call_id,
                "name": "lookup", "arguments": "{\"q\":1}", "status": "completed"}),
    )
}

/// A type this protocol version does not know: kept as raw JSON.
pub(crate) fn unknown(id: &str) -> Item {
    item(
        json!({"type": "tool_search_call", "id": id, "status": "completed",
                "arguments": {"query": "rust"}}),
    )
}

/// The public ids of some items, for readable order assertions.
pub(crate) fn ids(items: &[Item]) -> Vec<&str> {
    items.iter().map(|i| i.id().unwrap_or("<none>")).collect()
}

/// One request/response pair of a conversation.
pub(crate) struct Turn {
    pub resource: ResponseResource,
    pub input: Vec<Item>,
}

impl Turn {
    /// A turn with `inputs` user messages and `outputs` output items
    /// (alternating calls and assistant messages), ids prefixed by `id`.
    pub(crate) fn new(id: &str, previous: Option<&str>, inputs: usize, outputs: usize) -> Turn {
        let input = (0..inputs)
            .map(|k| user(&format!("{id}_in{k}"), &format!("question {k} of {id}")))
            .collect();
        let output = (0..outputs)
            .map(|k| match k % 2 {
                0 => call(&format!("{id}_out{k}"), &format!("call_{id}_{k}")),
                _ => assistant(&format!("{id}_out{k}"), &format!("answer {k} of {id}")),
            })
            .collect();
        Turn {
            resource: resource(id, previous, output),
            input,
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.resource.id
    }

    pub(crate) async fn save(&self, store: &dyn ResponseStore) {
        self.save_as(store, T).await;
    }

    pub(crate) async fn save_as(&self, store: &dyn ResponseStore, tenant: &str) {
        store.save(self.as_save(tenant, None)).await.expect("save");
    }

    /// This turn as `tenant`'s save, with `trace` if given.
    pub(crate) fn as_save<'a>(
        &'a self,
        tenant: &'a str,
        trace: Option<&'a Trace>,
    ) -> NewResponse<'a> {
        NewResponse {
            tenant,
            response: &self.resource,
            input: &self.input,
            trace,
        }
    }
}

/// The transcript the given turns form: each turn's input then its output.
pub(crate) fn transcript(turns: &[&Turn]) -> Vec<Item> {
    turns
        .iter()
        .flat_map(|t| t.input.iter().chain(&t.resource.output))
        .cloned()
        .collect()
}

/// A database file path in the temp dir, removed (with its WAL files) on drop.
pub(crate) struct TempDb {
    pub path: String,
}

impl TempDb {
    pub(crate) fn new() -> TempDb {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "windlass-store-test-{}-{}.db",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path: PathBuf = std::env::temp_dir().join(name);
        let path = path.to_str().expect("utf-8 temp path").to_owned();
        let db = TempDb { path };
        db.remove();
        db
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.path));
        }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        self.remove();
    }
}

/// A fresh, empty schema in the test Postgres (`WINDLASS_TEST_PG`, which
/// `scripts/postgres.sh` sets), as a URL whose connections use it. `None`
/// (the test is skipped, and says so) when the variable is unset.
#[cfg(feature = "postgres")]
pub(crate) async fn pg_schema_url() -> Option<String> {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let Ok(base) = std::env::var("WINDLASS_TEST_PG") else {
        eprintln!("WINDLASS_TEST_PG is not set: skipping (scripts/postgres.sh sets it)");
        return None;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let schema = format!(
        "t_{}_{}_{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed),
        nanos
    );
    let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
        .await
        .expect("connect to WINDLASS_TEST_PG");
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .expect("create schema");
    drop(client);
    let _ = driver.await;
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}options=-csearch_path%3D{schema}"))
}
