//! The stored form of prompts, shared by the SQLite and Postgres stores:
//! metadata and templates as JSON text, resources rebuilt from rows.

use windlass_engine::StoreError;
use windlass_protocol::{Prompt, PromptTemplate, PromptVersion};

pub(crate) fn encode_template(template: &PromptTemplate) -> Result<String, StoreError> {
    serde_json::to_string(template).map_err(|e| StoreError::Backend(format!("prompt: {e}")))
}

/// A `prompts` row: id, created_at, name, metadata, latest.
pub(crate) struct PromptRow {
    pub id: String,
    pub created_at: i64,
    pub name: Option<String>,
    pub metadata: String,
    pub latest: i64,
}

pub(crate) fn decode_prompt(row: PromptRow) -> Result<Prompt, StoreError> {
    Ok(Prompt {
        object: Prompt::OBJECT.to_owned(),
        created_at: u64::try_from(row.created_at).unwrap_or(0),
        name: row.name,
        metadata: serde_json::from_str(&row.metadata)
            .map_err(|e| StoreError::Corrupt(format!("prompt metadata: {e}")))?,
        latest_version: row.latest.to_string(),
        id: row.id,
    })
}

pub(crate) fn decode_version(
    id: &str,
    version: i64,
    created_at: i64,
    template: &str,
) -> Result<PromptVersion, StoreError> {
    let template: PromptTemplate = serde_json::from_str(template)
        .map_err(|e| StoreError::Corrupt(format!("prompt {id} version {version}: {e}")))?;
    Ok(PromptVersion::new(
        id,
        u64::try_from(version).unwrap_or(0),
        u64::try_from(created_at).unwrap_or(0),
        template,
    ))
}

/// A version number as stored; `None` for text that is not one (which
/// then names no version at all).
pub(crate) fn version_number(version: &str) -> Option<i64> {
    version.parse::<i64>().ok().filter(|n| *n > 0)
}
