//! JSON encoding of stored values and error mapping shared by both stores.

use serde_json::Value;
use windlass_engine::StoreError;
use windlass_protocol::{Item, ResponseResource};

/// Encodes an item for storage.
pub(crate) fn encode_item(item: &Item) -> Result<String, StoreError> {
    serde_json::to_string(item).map_err(|e| StoreError::Backend(format!("cannot encode item: {e}")))
}

/// Decodes a stored item; unreadable JSON means the store is corrupt.
pub(crate) fn decode_item(body: &str) -> Result<Item, StoreError> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("item: {e}")))
}

/// Encodes a resource without its output: output items are stored as items,
/// so keeping them in the resource too would store them twice.
pub(crate) fn encode_resource(resource: &ResponseResource) -> Result<String, StoreError> {
    let mut value = serde_json::to_value(resource)
        .map_err(|e| StoreError::Backend(format!("cannot encode response: {e}")))?;
    if let Some(output) = value.get_mut("output") {
        *output = Value::Array(Vec::new());
    }
    Ok(value.to_string())
}

/// Decodes a stored resource and puts its output items back.
pub(crate) fn decode_resource(
    body: &str,
    output: Vec<Item>,
) -> Result<ResponseResource, StoreError> {
    let mut resource: ResponseResource =
        serde_json::from_str(body).map_err(|e| StoreError::Corrupt(format!("response: {e}")))?;
    resource.output = output;
    Ok(resource)
}

/// Database failures are backend failures. Callers that must tell a specific
/// failure apart (a duplicate response id) inspect the error before this.
pub(crate) fn backend(err: rusqlite::Error) -> StoreError {
    StoreError::Backend(err.to_string())
}

/// A UNIQUE or PRIMARY KEY constraint failed (rusqlite turns on extended
/// result codes, so the exact constraint kind is known).
pub(crate) fn is_unique_violation(err: &rusqlite::Error) -> bool {
    use rusqlite::ffi;
    matches!(
        err,
        rusqlite::Error::SqliteFailure(e, _)
            if e.extended_code == ffi::SQLITE_CONSTRAINT_UNIQUE
                || e.extended_code == ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    )
}
