//! An item's status, in its own leaf module: the item types of every tool
//! family (`items.rs`, `computer.rs`, `shell_calls.rs`, `client_tools.rs`)
//! carry it, and `items.rs` names those types, so it cannot live there.

use serde::{Deserialize, Serialize};

/// Status of an item (`in_progress`, `completed`, `incomplete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of the OpenResponses contract
// (openapi.json), named as it names them.
#[allow(missing_docs)]
pub enum ItemStatus {
    InProgress,
    Completed,
    Incomplete,
}
