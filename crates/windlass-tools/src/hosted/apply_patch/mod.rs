//! `apply_patch` run by Windlass (the operator's choice instead of handing
//! `apply_patch_call`s to the client): one operation of an
//! `apply_patch_call` (or a whole `*** Begin Patch` patch) applied inside a
//! work directory — the same directory a server-run `shell` mounts in its
//! sandbox.
//!
//! Paths are relative to that directory; `..`, absolute paths and symlinks
//! leading out are refused (the checks of the file built-ins), and files
//! are opened without following a symlink swapped in after the check.

mod diff;
mod envelope;

use std::path::{Path, PathBuf};

use windlass_protocol::{
    ApplyPatchCall, ApplyPatchCallOutput, ApplyPatchOperation, ApplyPatchOutputStatus,
};

use crate::builtins::files::{read_nofollow, write_nofollow, Roots};
pub use diff::{created_content, updated_content, DiffError};
pub use envelope::{parse_patch, EnvelopeError, PatchOp};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("{0}")]
    Path(String),
    #[error("{path}: {error}")]
    Diff { path: String, error: DiffError },
    #[error("{0}")]
    Envelope(#[from] EnvelopeError),
    #[error("{0}: no such file")]
    Missing(String),
    #[error("{0} is not a regular file")]
    NotAFile(String),
    #[error("{0} is not UTF-8 text")]
    NotText(String),
    #[error("{path}: {error}")]
    Io { path: String, error: String },
}

/// The directory patches apply in.
#[derive(Debug, Clone)]
pub struct PatchRoot {
    roots: Roots,
}

impl PatchRoot {
    /// `dir` must exist.
    pub fn new(dir: &Path) -> std::io::Result<PatchRoot> {
        let base = dir.canonicalize()?;
        Ok(PatchRoot {
            roots: Roots {
                all: vec![base.clone()],
                base,
            },
        })
    }

    fn resolve(&self, path: &str, exists: bool) -> Result<PathBuf, PatchError> {
        if Path::new(path).is_absolute() {
            return Err(PatchError::Path(format!(
                "path '{path}' is absolute; patches take paths relative to the workspace"
            )));
        }
        match self.roots.resolve(path, exists) {
            Ok(p) => Ok(p),
            Err(_) if exists && self.roots.resolve(path, false).is_ok() => {
                Err(PatchError::Missing(path.to_owned()))
            }
            Err(e) => Err(PatchError::Path(e)),
        }
    }

    async fn read_text(&self, path: &str) -> Result<(PathBuf, String), PatchError> {
        let real = self.resolve(path, true)?;
        if !real.is_file() {
            return Err(PatchError::NotAFile(path.to_owned()));
        }
        let bytes = read_nofollow(&real).await.map_err(|e| io(path, e))?;
        let text = String::from_utf8(bytes).map_err(|_| PatchError::NotText(path.to_owned()))?;
        Ok((real, text))
    }

    async fn write_text(&self, path: &str, text: &str) -> Result<(), PatchError> {
        let real = self.resolve(path, false)?;
        if real.is_dir() {
            return Err(PatchError::NotAFile(path.to_owned()));
        }
        if let Some(parent) = real.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| io(path, e))?;
        }
        write_nofollow(&real, text.as_bytes())
            .await
            .map_err(|e| io(path, e))
    }

    async fn delete(&self, path: &str) -> Result<(), PatchError> {
        let real = self.resolve(path, true)?;
        let meta = tokio::fs::symlink_metadata(&real)
            .await
            .map_err(|e| io(path, e))?;
        if !meta.is_file() {
            return Err(PatchError::NotAFile(path.to_owned()));
        }
        tokio::fs::remove_file(&real).await.map_err(|e| io(path, e))
    }

    /// Applies one operation of an `apply_patch_call`; Ok is the log line.
    pub async fn apply_operation(&self, op: &ApplyPatchOperation) -> Result<String, PatchError> {
        match op {
            ApplyPatchOperation::CreateFile { path, diff } => {
                let text = created_content(diff).map_err(|error| diff_error(path, error))?;
                self.write_text(path, &text).await?;
                Ok(format!("Created {path}"))
            }
            ApplyPatchOperation::UpdateFile { path, diff } => {
                let (_, old) = self.read_text(path).await?;
                let new = updated_content(&old, diff).map_err(|error| diff_error(path, error))?;
                self.write_text(path, &new).await?;
                Ok(format!("Updated {path}"))
            }
            ApplyPatchOperation::DeleteFile { path } => {
                self.delete(path).await?;
                Ok(format!("Deleted {path}"))
            }
        }
    }

    /// Applies a whole `*** Begin Patch` patch, operation by operation; the
    /// first failure stops it (what was applied before stays, and the error
    /// says so).
    pub async fn apply_patch(&self, patch: &str) -> Result<String, PatchError> {
        let ops = parse_patch(patch)?;
        let mut done: Vec<String> = Vec::new();
        for op in &ops {
            let step = match op {
                PatchOp::Add { path, diff } => {
                    self.apply_operation(&ApplyPatchOperation::CreateFile {
                        path: path.clone(),
                        diff: diff.clone(),
                    })
                    .await
                }
                PatchOp::Delete { path } => {
                    self.apply_operation(&ApplyPatchOperation::DeleteFile { path: path.clone() })
                        .await
                }
                PatchOp::Update {
                    path,
                    move_to,
                    diff,
                } => self.update(path, move_to.as_deref(), diff).await,
            };
            match step {
                Ok(line) => done.push(line),
                Err(e) if done.is_empty() => return Err(e),
                Err(e) => {
                    return Err(PatchError::Path(format!(
                        "{e} (already applied: {})",
                        done.join("; ")
                    )))
                }
            }
        }
        Ok(done.join("\n"))
    }

    async fn update(
        &self,
        path: &str,
        move_to: Option<&str>,
        diff: &str,
    ) -> Result<String, PatchError> {
        let (_, old) = self.read_text(path).await?;
        // A move with no hunks only renames.
        let new = match diff.trim().is_empty() && move_to.is_some() {
            true => old,
            false => updated_content(&old, diff).map_err(|error| diff_error(path, error))?,
        };
        match move_to {
            Some(to) => {
                self.write_text(to, &new).await?;
                self.delete(path).await?;
                Ok(format!("Updated {path} and moved it to {to}"))
            }
            None => {
                self.write_text(path, &new).await?;
                Ok(format!("Updated {path}"))
            }
        }
    }
}

fn io(path: &str, e: std::io::Error) -> PatchError {
    PatchError::Io {
        path: path.to_owned(),
        error: e.to_string(),
    }
}

fn diff_error(path: &str, error: DiffError) -> PatchError {
    PatchError::Diff {
        path: path.to_owned(),
        error,
    }
}

/// The `apply_patch_call_output` answering `call` with `result`.
pub fn call_output(
    call: &ApplyPatchCall,
    id: String,
    result: &Result<String, PatchError>,
) -> ApplyPatchCallOutput {
    let (status, output) = match result {
        Ok(log) => (ApplyPatchOutputStatus::Completed, log.clone()),
        Err(e) => (ApplyPatchOutputStatus::Failed, format!("Error: {e}")),
    };
    ApplyPatchCallOutput {
        id: Some(id),
        call_id: call.call_id.clone(),
        status,
        output: Some(output),
        caller: call.caller.clone(),
        created_by: None,
    }
}
