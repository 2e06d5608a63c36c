//! Execution traces: JSON in the response's own row (`trace`), written by
//! its save (see `group.rs`). Files from before migration 13 keep older
//! traces in `response_traces`, removed with their response.

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
    let body: Option<Option<String>> = conn
        .query_row(
            "SELECT COALESCE(r.trace, \
                 (SELECT t.body FROM response_traces t WHERE t.response_id = r.id)) \
             FROM responses r WHERE r.id = ?1 AND r.tenant = ?2",
            params![response_id, tenant],
            |r| r.get(0),
        )
        .optional()
        .map_err(backend)?;
    body.flatten()
        .map(|b| serde_json::from_str(&b).map_err(|e| StoreError::Corrupt(format!("trace: {e}"))))
        .transpose()
}
