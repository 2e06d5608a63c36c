//! Containers: the work directories `code_interpreter` (and a server-run
//! `shell`) execute in. The settings a tool or `POST /v1/containers` gives
//! one, and the objects of the Containers API (`/v1/containers`, its
//! `/files` and a file's `content`).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `object` of a container.
pub const OBJECT_CONTAINER: &str = "container";
/// `object` of a file in a container.
pub const OBJECT_CONTAINER_FILE: &str = "container.file";
/// `object` of a deleted container.
pub const OBJECT_CONTAINER_DELETED: &str = "container.deleted";
/// `object` of a deleted container file.
pub const OBJECT_CONTAINER_FILE_DELETED: &str = "container.file.deleted";

/// What a new container starts with: the `auto` container of
/// `code_interpreter`, `container_auto` of `shell`, and the body of
/// `POST /v1/containers` share these fields.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
// Fields mirror OpenAI's Containers API reference, named as it names them.
#[allow(missing_docs)]
pub struct ContainerSettings {
    /// Files API ids copied into the container's work directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_policy: Option<NetworkPolicy>,
    /// OpenAI's skills (references or inline bundles). Kept as sent;
    /// Windlass does not install skills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<Value>>,
}

/// A container's memory limit as OpenAI spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
// Variants (and their fields) mirror the wire values of OpenAI's Containers API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum MemoryLimit {
    #[serde(rename = "1g")]
    G1,
    #[serde(rename = "4g")]
    G4,
    #[serde(rename = "16g")]
    G16,
    #[serde(rename = "64g")]
    G64,
}

impl MemoryLimit {
    /// The limit in mebibytes.
    pub fn megabytes(self) -> u64 {
        match self {
            MemoryLimit::G1 => 1024,
            MemoryLimit::G4 => 4 * 1024,
            MemoryLimit::G16 => 16 * 1024,
            MemoryLimit::G64 => 64 * 1024,
        }
    }
}

/// A container's network access: none, or a domain allowlist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Containers API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum NetworkPolicy {
    Disabled,
    Allowlist {
        allowed_domains: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        domain_secrets: Option<Vec<DomainSecret>>,
    },
}

/// A secret OpenAI injects for requests to one domain. Its value never
/// appears in `Debug` output.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Containers API reference, named as it names them.
#[allow(missing_docs)]
pub struct DomainSecret {
    pub domain: String,
    pub name: String,
    pub value: String,
}

impl fmt::Debug for DomainSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DomainSecret")
            .field("domain", &self.domain)
            .field("name", &self.name)
            .field("value", &"[redacted]")
            .finish()
    }
}

/// A container (`object: "container"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Containers API reference, named as it names them.
#[allow(missing_docs)]
pub struct Container {
    pub id: String,
    pub object: String,
    pub created_at: u64,
    pub name: String,
    pub status: ContainerStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after: Option<ContainerExpiresAfter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_active_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
}

/// A container's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Containers API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ContainerStatus {
    Running,
    Expired,
}

/// `{"anchor": "last_active_at", "minutes": N}`: the container expires N
/// minutes after it was last used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Containers API reference, named as it names them.
#[allow(missing_docs)]
pub struct ContainerExpiresAfter {
    pub anchor: ContainerExpiryAnchor,
    pub minutes: u64,
}

/// What a container's expiry counts from: only `last_active_at` exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Containers API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ContainerExpiryAnchor {
    LastActiveAt,
}

impl Container {
    /// When the container expires (seconds since the epoch), if it does.
    pub fn expires_at(&self) -> Option<u64> {
        let after = self.expires_after?;
        let anchor = self.last_active_at.unwrap_or(self.created_at);
        Some(anchor.saturating_add(after.minutes.saturating_mul(60)))
    }
}

/// A file in a container (`object: "container.file"`). `path` is where the
/// code sees it (under `/mnt/data`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Containers API reference, named as it names them.
#[allow(missing_docs)]
pub struct ContainerFile {
    pub id: String,
    pub object: String,
    pub bytes: u64,
    pub container_id: String,
    pub created_at: u64,
    pub path: String,
    pub source: ContainerFileSource,
}

/// Who put a file in a container: the client (upload or `file_ids`) or the
/// code that ran there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Containers API reference, named
// as it names them.
#[allow(missing_docs)]
pub enum ContainerFileSource {
    User,
    Assistant,
}

/// The body of `POST /v1/containers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
// Fields mirror OpenAI's Containers API reference, named as it names them.
#[allow(missing_docs)]
pub struct CreateContainerRequest {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after: Option<ContainerExpiresAfter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<MemoryLimit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_policy: Option<NetworkPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<Value>>,
}
