//! A container's work directory on this machine: its files written in
//! before a run, and what the run created or changed read back after.
//!
//! The store holds a container's files (so any replica serves them); the
//! directory is a local copy made before each run. Reading back never
//! follows a symlink and only takes regular files, so code cannot make the
//! gateway read a file outside the directory.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

/// A file of a container, by its path relative to the work directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// A file the run created or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    pub path: String,
    pub bytes: Vec<u8>,
    /// `image/png`, ... when the bytes are an image.
    pub image: Option<&'static str>,
}

/// Size and modification time of each regular file, to tell what a run
/// changed.
pub(super) type Snapshot = HashMap<String, (u64, Option<SystemTime>)>;

/// `path` as a relative path inside the directory, or `None` when it is
/// absolute, empty or climbs out (`..`).
pub fn relative(path: &str) -> Option<PathBuf> {
    let p = Path::new(path.trim_start_matches("/mnt/data/"));
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Writes the container's files into `dir` (made if missing).
pub(super) fn restore(dir: &Path, files: &[ContainerFile]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for f in files {
        let Some(rel) = relative(&f.path) else {
            continue;
        };
        let target = dir.join(rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // A symlink left by an earlier run is replaced, never written through.
        if std::fs::symlink_metadata(&target).is_ok_and(|m| !m.is_file()) {
            let _ = std::fs::remove_file(&target);
        }
        std::fs::write(&target, &f.bytes)?;
    }
    Ok(())
}

/// The regular files under `dir` (symlinks and special files skipped).
pub(super) fn snapshot(dir: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    walk(dir, dir, &mut |rel, meta| {
        out.insert(rel, (meta.len(), meta.modified().ok()));
    });
    out
}

/// The files created or changed since `before`, up to `budget` bytes in
/// all; returns them and the paths left out for the budget.
pub(super) fn written_since(
    dir: &Path,
    before: &Snapshot,
    budget: u64,
) -> (Vec<WrittenFile>, Vec<String>) {
    let mut changed = Vec::new();
    walk(dir, dir, &mut |rel, meta| {
        let now = (meta.len(), meta.modified().ok());
        if before.get(&rel) != Some(&now) {
            changed.push((rel, meta.len()));
        }
    });
    changed.sort();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut used = 0u64;
    for (rel, len) in changed {
        if used.saturating_add(len) > budget {
            skipped.push(rel);
            continue;
        }
        match read_regular(&dir.join(&rel)) {
            Some(bytes) => {
                used += bytes.len() as u64;
                let image = image_type(&bytes);
                files.push(WrittenFile {
                    path: rel,
                    bytes,
                    image,
                });
            }
            None => skipped.push(rel),
        }
    }
    (files, skipped)
}

fn walk(root: &Path, dir: &Path, f: &mut dyn FnMut(String, std::fs::Metadata)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(root, &path, f);
        } else if meta.is_file() {
            if let Ok(rel) = path.strip_prefix(root) {
                f(rel.to_string_lossy().into_owned(), meta);
            }
        }
    }
}

/// Reads a file only if it is a regular file (opened without following a
/// symlink made between the walk and the read).
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The image type of `bytes` by their signature.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside() {
        assert_eq!(relative("a/b.txt"), Some(PathBuf::from("a/b.txt")));
        assert_eq!(relative("/mnt/data/x.png"), Some(PathBuf::from("x.png")));
        assert_eq!(relative("./c"), Some(PathBuf::from("c")));
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "."] {
            assert_eq!(relative(bad), None, "{bad}");
        }
    }

    #[test]
    fn images_are_told_by_their_signature() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(image_type(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type(b"hello"), None);
    }
}
