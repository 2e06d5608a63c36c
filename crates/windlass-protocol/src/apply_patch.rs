//! OpenAI's `apply_patch` tool: the model creates, deletes or updates one
//! file per `apply_patch_call` (a V4A diff for create and update); the
//! client (or, by operator choice, Windlass in its sandbox) applies it and
//! answers with `apply_patch_call_output`.

use serde::{Deserialize, Serialize};

use crate::callers::{AllowedCaller, Caller};

/// `{"type": "apply_patch"}` in `tools`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ApplyPatchTool {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_callers: Option<Vec<AllowedCaller>>,
}

/// The `apply_patch_call` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ApplyPatchCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub operation: ApplyPatchOperation,
    pub status: ApplyPatchCallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Caller>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// One file operation. `path` is relative to the workspace root; `diff` is
/// V4A: `+` lines for a new file, `@@` hunks of ` `/`-`/`+` lines for an
/// update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ApplyPatchOperation {
    CreateFile { path: String, diff: String },
    DeleteFile { path: String },
    UpdateFile { path: String, diff: String },
}

impl ApplyPatchOperation {
    /// The file the operation is about.
    pub fn path(&self) -> &str {
        match self {
            ApplyPatchOperation::CreateFile { path, .. }
            | ApplyPatchOperation::DeleteFile { path }
            | ApplyPatchOperation::UpdateFile { path, .. } => path,
        }
    }
}

/// An `apply_patch_call`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ApplyPatchCallStatus {
    InProgress,
    Completed,
}

/// The `apply_patch_call_output` item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Responses API reference, named as it names them.
#[allow(missing_docs)]
pub struct ApplyPatchCallOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub status: ApplyPatchOutputStatus,
    /// Human-readable log of the result (or of the error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Caller>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// An `apply_patch_call_output`'s status: the patch applied or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Responses API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ApplyPatchOutputStatus {
    Completed,
    Failed,
}
