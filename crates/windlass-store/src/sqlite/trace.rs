//! Execution traces: one JSON row per response, written in the save's own
//! transaction (see `group.rs`) and removed with the response.

use rusqlite::{params, Connection, OptionalExtension};
use windlass_engine::{StoreError, Trace};

use crate::codec::backend;

pub(super) fn encode(trace: &Trace) -> Result<String, StoreError> {
    serde_json::to_string(trace).map_err(|e| StoreError::Backend(format!("trace: {e}")))
}

/// The trace of `tenant`'s response: it belongs to its response's tenant.
pub(super) fn load(
    conn: &mut Connection,
    tenant: &str,
    response_id: &str,
) -> Result<Option<Trace>, StoreError> {
    let body: Option<String> = conn
        .query_row(
            "SELECT t.body FROM response_traces t JOIN responses r ON r.id = t.response_id \
             WHERE t.response_id = ?1 AND r.tenant = ?2",
            params![response_id, tenant],
            |r| r.get(0),
        )
        .optional()
        .map_err(backend)?;
    body.map(|b| serde_json::from_str(&b).map_err(|e| StoreError::Corrupt(format!("trace: {e}"))))
        .transpose()
}
