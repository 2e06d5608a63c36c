//! Rows to wire objects, shared by the SQLite and Postgres stores: the JSON
//! columns (metadata, attributes, last error), the counts and the statuses
//! derived from the files' rows.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use windlass_engine::StoreError;
use windlass_protocol::{
    Attributes, ChunkingStrategy, ExpiresAfter, ExpiresAnchor, FileCounts, LastError, SearchMode,
    StaticChunking, VectorStore, VectorStoreFile, VectorStoreFileBatch, VectorStoreFileStatus,
    VectorStoreStatus, OBJECT_FILE_BATCH, OBJECT_VECTOR_STORE, OBJECT_VECTOR_STORE_FILE,
};

const DAY: u64 = 86_400;

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn encode<T: serde::Serialize>(what: &str, v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Backend(format!("{what}: {e}")))
}

fn decode<T: serde::de::DeserializeOwned>(what: &str, s: &str) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

pub(crate) fn encode_metadata(m: &Map<String, Value>) -> Result<String, StoreError> {
    encode("metadata", m)
}

pub(crate) fn encode_attributes(a: Option<&Attributes>) -> Result<Option<String>, StoreError> {
    a.map(|a| encode("attributes", a)).transpose()
}

pub(crate) fn decode_attributes(s: Option<&str>) -> Result<Option<Attributes>, StoreError> {
    s.map(|s| decode("attributes", s)).transpose()
}

pub(crate) fn encode_last_error(e: &LastError) -> Result<String, StoreError> {
    encode("last_error", e)
}

/// `COUNT` of files per status, as the API reports them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StatusCounts {
    pub in_progress: i64,
    pub completed: i64,
    pub failed: i64,
    pub cancelled: i64,
}

impl StatusCounts {
    pub(crate) fn add(&mut self, status: &str, n: i64) {
        match status {
            "in_progress" => self.in_progress += n,
            "completed" => self.completed += n,
            "failed" => self.failed += n,
            "cancelled" => self.cancelled += n,
            _ => {}
        }
    }

    pub(crate) fn file_counts(self) -> FileCounts {
        let [in_progress, completed, failed, cancelled] = [
            self.in_progress,
            self.completed,
            self.failed,
            self.cancelled,
        ]
        .map(to_u64);
        FileCounts {
            in_progress,
            completed,
            failed,
            cancelled,
            total: in_progress + completed + failed + cancelled,
        }
    }
}

/// A `vector_stores` row with its files' counts and usage.
pub(crate) struct StoreRow {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub created_at: i64,
    pub last_active_at: i64,
    pub metadata: String,
    pub expires_after_days: Option<i64>,
    pub embedding_model: Option<String>,
    /// When the expiry sweep marked it (it stays expired from then on).
    pub expired_at: Option<i64>,
    pub counts: StatusCounts,
    pub usage_bytes: i64,
}

impl StoreRow {
    pub(crate) fn into_object(self) -> Result<VectorStore, StoreError> {
        let last_active_at = to_u64(self.last_active_at);
        let expires_after = self.expires_after_days.map(|d| ExpiresAfter {
            anchor: ExpiresAnchor::LastActiveAt,
            days: u32::try_from(d).unwrap_or(u32::MAX),
        });
        // A marked store keeps its status even if its policy was changed
        // after the sweep emptied it.
        let expires_at = expires_after
            .as_ref()
            .map(|e| last_active_at.saturating_add(u64::from(e.days) * DAY))
            .or(self.expired_at.map(to_u64));
        let status = match (expires_at, self.counts.in_progress) {
            _ if self.expired_at.is_some() => VectorStoreStatus::Expired,
            (Some(at), _) if at <= now() => VectorStoreStatus::Expired,
            (_, n) if n > 0 => VectorStoreStatus::InProgress,
            _ => VectorStoreStatus::Completed,
        };
        Ok(VectorStore {
            id: self.id,
            object: OBJECT_VECTOR_STORE.to_owned(),
            created_at: to_u64(self.created_at),
            name: self.name,
            description: self.description,
            usage_bytes: to_u64(self.usage_bytes),
            file_counts: self.counts.file_counts(),
            status,
            expires_after,
            expires_at,
            last_active_at: Some(last_active_at),
            metadata: decode("metadata", &self.metadata)?,
            search_mode: match self.embedding_model {
                Some(_) => SearchMode::Hybrid,
                None => SearchMode::Keyword,
            },
            embedding_model: self.embedding_model,
        })
    }
}

/// A `vector_store_files` row.
pub(crate) struct FileRow {
    pub file_id: String,
    pub vector_store_id: String,
    pub created_at: i64,
    pub status: String,
    pub usage_bytes: i64,
    pub last_error: Option<String>,
    pub attributes: Option<String>,
    pub max_chunk_tokens: i64,
    pub chunk_overlap_tokens: i64,
}

impl FileRow {
    pub(crate) fn into_object(self) -> Result<VectorStoreFile, StoreError> {
        let status = VectorStoreFileStatus::parse(&self.status)
            .ok_or_else(|| StoreError::Corrupt(format!("file status '{}'", self.status)))?;
        Ok(VectorStoreFile {
            id: self.file_id,
            object: OBJECT_VECTOR_STORE_FILE.to_owned(),
            created_at: to_u64(self.created_at),
            vector_store_id: self.vector_store_id,
            status,
            usage_bytes: to_u64(self.usage_bytes),
            last_error: self
                .last_error
                .as_deref()
                .map(|e| decode("last_error", e))
                .transpose()?,
            attributes: decode_attributes(self.attributes.as_deref())?,
            chunking_strategy: Some(ChunkingStrategy::Static {
                config: chunking(self.max_chunk_tokens, self.chunk_overlap_tokens),
            }),
        })
    }
}

pub(crate) fn chunking(max: i64, overlap: i64) -> StaticChunking {
    StaticChunking {
        max_chunk_size_tokens: u32::try_from(max).unwrap_or(0),
        chunk_overlap_tokens: u32::try_from(overlap).unwrap_or(0),
    }
}

/// A batch: in progress while any of its files is; otherwise cancelled if
/// it was, else completed.
pub(crate) fn batch_object(
    id: String,
    vector_store_id: String,
    created_at: i64,
    cancelled: bool,
    counts: StatusCounts,
) -> VectorStoreFileBatch {
    let status = if counts.in_progress > 0 {
        VectorStoreFileStatus::InProgress
    } else if cancelled {
        VectorStoreFileStatus::Cancelled
    } else {
        VectorStoreFileStatus::Completed
    };
    VectorStoreFileBatch {
        id,
        object: OBJECT_FILE_BATCH.to_owned(),
        created_at: to_u64(created_at),
        vector_store_id,
        status,
        file_counts: counts.file_counts(),
    }
}
