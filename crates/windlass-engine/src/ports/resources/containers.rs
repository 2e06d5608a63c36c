//! The containers port: the containers `code_interpreter` (and a server-run
//! `shell`) work in, and the files in them, per tenant. The store is where a
//! container's files live, so the Containers API and a run see the same
//! files from any replica; a runner's work directory is a local copy
//! restored from here before a run and written back after it.
//!
//! Every method takes the owner tenant first; another tenant's container or
//! file behaves exactly like an unknown id.

use windlass_protocol::{Container, ContainerFile};

use crate::ports::agent::store::{SortOrder, StoreError};

/// Which page of containers or container files to return: `after` is an id
/// of the listed kind, in the chosen order (oldest first for `Asc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerListRequest {
    /// Start after this id (exclusive).
    pub after: Option<String>,
    /// At least 1; the caller bounds it.
    pub limit: usize,
    /// Oldest or newest first.
    pub order: SortOrder,
}

impl ContainerListRequest {
    /// The first `limit` in `order`.
    pub fn first(limit: usize, order: SortOrder) -> ContainerListRequest {
        ContainerListRequest {
            after: None,
            limit,
            order,
        }
    }
}

/// One page of a list, and whether more follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerPage<T> {
    /// The entries of this page.
    pub data: Vec<T>,
    /// Whether entries follow this page.
    pub has_more: bool,
}

/// A container that [`ContainerStore::expire_containers`] expired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredContainer {
    /// The tenant that owned it.
    pub tenant: String,
    /// The container's id.
    pub id: String,
}

/// Containers and their files, per tenant (see the module doc).
#[async_trait::async_trait]
pub trait ContainerStore: Send + Sync {
    /// Stores a new container. An id already taken (by any tenant) is
    /// [`StoreError::Duplicate`].
    async fn create_container(&self, tenant: &str, container: &Container)
        -> Result<(), StoreError>;

    /// The container; `None` when unknown (or another tenant's).
    async fn get_container(&self, tenant: &str, id: &str) -> Result<Option<Container>, StoreError>;

    /// A page of the tenant's containers by creation time. An unknown cursor
    /// is [`StoreError::UnknownCursor`].
    async fn list_containers(
        &self,
        tenant: &str,
        page: &ContainerListRequest,
    ) -> Result<ContainerPage<Container>, StoreError>;

    /// Records use at `at` (seconds): `last_active_at` moves forward, which
    /// pushes expiry back. `None` when the container is unknown or expired.
    async fn touch_container(
        &self,
        tenant: &str,
        id: &str,
        at: u64,
    ) -> Result<Option<Container>, StoreError>;

    /// Deletes the container and its files in one transaction. False when
    /// unknown.
    async fn delete_container(&self, tenant: &str, id: &str) -> Result<bool, StoreError>;

    /// Adds a file with its bytes (`file.bytes` is `bytes.len()`), replacing
    /// whatever file had the same `path` in that container (its id goes with
    /// it). False, and nothing written, when the container is unknown or
    /// expired. The caller has enforced the size limits.
    async fn put_container_file(
        &self,
        tenant: &str,
        file: &ContainerFile,
        bytes: &[u8],
    ) -> Result<bool, StoreError>;

    /// One file of a container; `None` when either is unknown.
    async fn get_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<ContainerFile>, StoreError>;

    /// The file's bytes as stored.
    async fn container_file_content(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<Option<Vec<u8>>, StoreError>;

    /// A page of the container's files by creation time (ties by id).
    /// `None` when the container is unknown.
    async fn list_container_files(
        &self,
        tenant: &str,
        container_id: &str,
        page: &ContainerListRequest,
    ) -> Result<Option<ContainerPage<ContainerFile>>, StoreError>;

    /// False when the container or the file is unknown.
    async fn delete_container_file(
        &self,
        tenant: &str,
        container_id: &str,
        file_id: &str,
    ) -> Result<bool, StoreError>;

    /// Expires every running container whose idle time ran out by `now`
    /// (seconds): status `expired`, files deleted, in one transaction per
    /// backend. Returns what it expired, for callers that drop local copies.
    async fn expire_containers(&self, now: u64) -> Result<Vec<ExpiredContainer>, StoreError>;
}
