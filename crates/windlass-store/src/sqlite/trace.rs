//! Execution traces: one JSON row per response, removed with it.

use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::Mutex;
use windlass_engine::{StoreError, Trace};

use super::conn::Writer;
use super::write::on_writer;
use crate::codec::backend;

pub(super) async fn save(
    writer: &Arc<Mutex<Writer>>,
    response_id: &str,
    trace: &Trace,
) -> Result<(), StoreError> {
    let body =
        serde_json::to_string(trace).map_err(|e| StoreError::Backend(format!("trace: {e}")))?;
    let id = response_id.to_owned();
    on_writer(writer, move |conn| {
        conn.execute(
            "INSERT OR REPLACE INTO response_traces (response_id, body) VALUES (?1, ?2)",
            params![id, body],
        )
        .map(|_| ())
        .map_err(backend)
    })
    .await
}

pub(super) fn load(conn: &mut Connection, response_id: &str) -> Result<Option<Trace>, StoreError> {
    let body: Option<String> = conn
        .query_row(
            "SELECT body FROM response_traces WHERE response_id = ?1",
            params![response_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(backend)?;
    body.map(|b| serde_json::from_str(&b).map_err(|e| StoreError::Corrupt(format!("trace: {e}"))))
        .transpose()
}
