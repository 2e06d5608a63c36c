//! The files port: uploaded files (bytes and metadata) per tenant, for the
//! Files API and for ingestion into vector stores. Every method takes the
//! owner tenant first; another tenant's file behaves exactly like an
//! unknown id.

use windlass_protocol::{FileObject, FilePurpose};

use crate::ports::agent::store::{SortOrder, StoreError};

/// Which page of a list to return. `after`/`before` are ids of the listed
/// kind, in the chosen order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRequest {
    /// Start after this id (exclusive).
    pub after: Option<String>,
    /// End before this id (exclusive).
    pub before: Option<String>,
    /// At least 1; the caller bounds it.
    pub limit: usize,
    /// Oldest or newest first.
    pub order: SortOrder,
}

impl ListRequest {
    /// The first `limit` in `order`.
    pub fn first(limit: usize, order: SortOrder) -> ListRequest {
        ListRequest {
            after: None,
            before: None,
            limit,
            order,
        }
    }
}

/// One page of a list, and whether more follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The entries of this page.
    pub data: Vec<T>,
    /// Whether entries follow this page.
    pub has_more: bool,
}

/// Uploaded files, per tenant (see the module doc).
#[async_trait::async_trait]
pub trait FileStore: Send + Sync {
    /// Stores a new file: its object and its bytes, in one transaction.
    /// `file.bytes` is `bytes.len()`; the caller has enforced its size limit.
    async fn create_file(
        &self,
        tenant: &str,
        file: &FileObject,
        bytes: &[u8],
    ) -> Result<(), StoreError>;

    /// The file's metadata; `None` when unknown (or another tenant's).
    async fn get_file(&self, tenant: &str, id: &str) -> Result<Option<FileObject>, StoreError>;

    /// The file's bytes, as uploaded.
    async fn file_content(&self, tenant: &str, id: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// A page of the tenant's files, oldest first for `Asc`, optionally
    /// only those of one purpose. An unknown cursor is
    /// [`StoreError::UnknownCursor`].
    async fn list_files(
        &self,
        tenant: &str,
        purpose: Option<FilePurpose>,
        page: &ListRequest,
    ) -> Result<Page<FileObject>, StoreError>;

    /// Deletes the file and, in the same transaction, its attachments and
    /// chunks in every vector store. False when unknown.
    async fn delete_file(&self, tenant: &str, id: &str) -> Result<bool, StoreError>;
}
