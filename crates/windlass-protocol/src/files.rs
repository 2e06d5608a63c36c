//! The Files API (`/v1/files`): the file object, its purposes, deletion and
//! the list page shared by the Files and Vector stores APIs.

use serde::{Deserialize, Serialize};

/// `object` of a file.
pub const OBJECT_FILE: &str = "file";
/// `object` of a list page.
pub const OBJECT_LIST: &str = "list";

/// An uploaded file (`object: "file"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Files API reference, named as it names them.
#[allow(missing_docs)]
pub struct FileObject {
    pub id: String,
    pub object: String,
    /// Size in bytes.
    pub bytes: u64,
    pub created_at: u64,
    pub filename: String,
    pub purpose: FilePurpose,
    /// Deprecated by OpenAI; always `processed` here (bytes are stored whole
    /// at upload).
    pub status: FileStatus,
    #[serde(default)]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_details: Option<String>,
}

impl FileObject {
    /// A stored upload's object.
    pub fn new(
        id: String,
        filename: String,
        bytes: u64,
        purpose: FilePurpose,
        created_at: u64,
    ) -> FileObject {
        FileObject {
            id,
            object: OBJECT_FILE.to_owned(),
            bytes,
            created_at,
            filename,
            purpose,
            status: FileStatus::Processed,
            expires_at: None,
            status_details: None,
        }
    }
}

/// What a file is for. The first six are what an upload may ask for; the
/// `*_output`/`*-results` ones are written by OpenAI's own jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
// Variants (and their fields) mirror the wire values of OpenAI's Files API reference, named as
// it names them.
#[allow(missing_docs)]
pub enum FilePurpose {
    #[serde(rename = "assistants")]
    Assistants,
    #[serde(rename = "batch")]
    Batch,
    #[serde(rename = "fine-tune")]
    FineTune,
    #[serde(rename = "vision")]
    Vision,
    #[serde(rename = "user_data")]
    UserData,
    #[serde(rename = "evals")]
    Evals,
    #[serde(rename = "assistants_output")]
    AssistantsOutput,
    #[serde(rename = "batch_output")]
    BatchOutput,
    #[serde(rename = "fine-tune-results")]
    FineTuneResults,
}

impl FilePurpose {
    /// The purposes a client may upload with.
    pub const UPLOADABLE: [FilePurpose; 6] = [
        FilePurpose::Assistants,
        FilePurpose::Batch,
        FilePurpose::FineTune,
        FilePurpose::Vision,
        FilePurpose::UserData,
        FilePurpose::Evals,
    ];

    /// The purpose's wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FilePurpose::Assistants => "assistants",
            FilePurpose::Batch => "batch",
            FilePurpose::FineTune => "fine-tune",
            FilePurpose::Vision => "vision",
            FilePurpose::UserData => "user_data",
            FilePurpose::Evals => "evals",
            FilePurpose::AssistantsOutput => "assistants_output",
            FilePurpose::BatchOutput => "batch_output",
            FilePurpose::FineTuneResults => "fine-tune-results",
        }
    }

    /// The purpose spelled `s` (as on the wire), if any.
    pub fn parse(s: &str) -> Option<FilePurpose> {
        serde_json::from_value(serde_json::Value::String(s.to_owned())).ok()
    }
}

/// A file's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// Variants (and their fields) mirror the wire values of OpenAI's Files API reference, named as
// it names them.
#[allow(missing_docs)]
pub enum FileStatus {
    Uploaded,
    Processed,
    Error,
}

/// The answer to a delete: `{"id", "object", "deleted": true}`; `object` is
/// the deleted kind (`file`, `vector_store.deleted`, `vector_store.file.deleted`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Fields mirror OpenAI's Files API reference, named as it names them.
#[allow(missing_docs)]
pub struct Deleted {
    pub id: String,
    pub object: String,
    pub deleted: bool,
}

impl Deleted {
    /// The delete answer for `id`, with `object` the deleted kind.
    pub fn new(id: impl Into<String>, object: &str) -> Deleted {
        Deleted {
            id: id.into(),
            object: object.to_owned(),
            deleted: true,
        }
    }
}

/// One page of a cursor-paged list (`object: "list"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Fields mirror OpenAI's Files API reference, named as it names them.
#[allow(missing_docs)]
pub struct ListPage<T> {
    pub object: String,
    pub data: Vec<T>,
    pub first_id: Option<String>,
    pub last_id: Option<String>,
    pub has_more: bool,
}

impl<T> ListPage<T> {
    /// A page of `data`, its cursors taken from the first and last element.
    pub fn new(data: Vec<T>, has_more: bool, id: impl Fn(&T) -> &str) -> ListPage<T> {
        ListPage {
            object: OBJECT_LIST.to_owned(),
            first_id: data.first().map(|d| id(d).to_owned()),
            last_id: data.last().map(|d| id(d).to_owned()),
            data,
            has_more,
        }
    }
}
