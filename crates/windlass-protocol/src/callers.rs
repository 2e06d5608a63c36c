//! Who may call a tool and who made a call: OpenAI's `allowed_callers` on
//! tool definitions and `caller` on the items of `shell` and `apply_patch`
//! (a call the model made directly, or one a program item made).

use serde::{Deserialize, Serialize};

/// An entry of a tool's `allowed_callers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum AllowedCaller {
    Direct,
    Programmatic,
}

/// The `caller` of a call item: `{"type": "direct"}` or
/// `{"type": "program", "caller_id": ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum Caller {
    Direct,
    Program { caller_id: String },
}
