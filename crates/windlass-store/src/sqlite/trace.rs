//! Execution traces: one JSON row per response, written with the response
//! and removed with it.

use rusqlite::{params, Connection, OptionalExtension};
use windlass_engine::{StoreError, Trace};

use crate::codec::backend;

pub(super) fn encode(trace: &Trace) -> Result<String, StoreError> {
    serde_json::to_string(trace).map_err(|e| StoreError::Backend(format!("trace: {e}")))
}

pub(super) fn insert(conn: &Connection, response_id: &str, body: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO response_traces (response_id, body) VALUES (?1, ?2)",
    )
    .and_then(|mut stmt| stmt.execute(params![response_id, body]))
    .map(drop)
    .map_err(backend)
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
