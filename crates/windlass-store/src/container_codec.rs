//! Rows of the container tables and their wire objects, shared by the SQLite
//! and Postgres stores (both keep enums as their wire strings).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use windlass_engine::StoreError;
use windlass_protocol::containers::{OBJECT_CONTAINER, OBJECT_CONTAINER_FILE};
use windlass_protocol::{Container, ContainerExpiresAfter, ContainerExpiryAnchor, ContainerFile};

/// `status` of a usable container.
pub(crate) const RUNNING: &str = "running";
/// `status` of an expired one.
pub(crate) const EXPIRED: &str = "expired";

pub(crate) struct ContainerRow {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub status: String,
    pub last_active_at: Option<i64>,
    pub expires_minutes: Option<i64>,
    pub memory_limit: Option<String>,
}

pub(crate) struct FileRow {
    pub id: String,
    pub container_id: String,
    pub path: String,
    pub bytes: i64,
    pub source: String,
    pub created_at: i64,
}

/// An enum's wire spelling (`"running"`, `"4g"`, ...).
pub(crate) fn enum_str<T: Serialize>(value: &T) -> Result<String, StoreError> {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => Ok(s),
        _ => Err(StoreError::Corrupt("enum without a string form".into())),
    }
}

fn enum_of<T: DeserializeOwned>(column: &str, s: String) -> Result<T, StoreError> {
    serde_json::from_value(Value::String(s.clone()))
        .map_err(|_| StoreError::Corrupt(format!("{column} {s:?}")))
}

fn u64_of(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

pub(crate) fn container_of(r: ContainerRow) -> Result<Container, StoreError> {
    Ok(Container {
        id: r.id,
        object: OBJECT_CONTAINER.to_owned(),
        created_at: u64_of(r.created_at),
        name: r.name,
        status: enum_of("container status", r.status)?,
        expires_after: r.expires_minutes.map(|m| ContainerExpiresAfter {
            anchor: ContainerExpiryAnchor::LastActiveAt,
            minutes: u64_of(m),
        }),
        last_active_at: r.last_active_at.map(u64_of),
        memory_limit: r
            .memory_limit
            .map(|m| enum_of("memory_limit", m))
            .transpose()?,
    })
}

pub(crate) fn file_of(r: FileRow) -> Result<ContainerFile, StoreError> {
    Ok(ContainerFile {
        id: r.id,
        object: OBJECT_CONTAINER_FILE.to_owned(),
        bytes: u64_of(r.bytes),
        container_id: r.container_id,
        created_at: u64_of(r.created_at),
        path: r.path,
        source: enum_of("file source", r.source)?,
    })
}
