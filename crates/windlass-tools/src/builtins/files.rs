//! `read_file`, `write_file`, `edit_file`, `list_dir`: inside the configured
//! roots only. A path is taken from the work directory when relative; `..`
//! is refused outright; the real path (symlinks resolved) must lie inside a
//! root, so neither an absolute path elsewhere nor a symlink pointing out
//! gets through.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// The directories file tools may use, canonical.
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    /// Relative paths start here (the first root).
    pub base: PathBuf,
    pub all: Vec<PathBuf>,
}

impl Roots {
    /// Resolves `path` for use. `exists`: the path must exist (reads, edits,
    /// listings); otherwise its nearest existing ancestor must be inside a
    /// root and the rest is created by the caller.
    pub(crate) fn resolve(&self, path: &str, exists: bool) -> Result<PathBuf, String> {
        if path.is_empty() {
            return Err("path is empty".to_owned());
        }
        let p = Path::new(path);
        if p.components().any(|c| c == Component::ParentDir) {
            return Err(format!("path '{path}' contains '..', which is not allowed"));
        }
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        };
        if exists {
            let real = full
                .canonicalize()
                .map_err(|e| format!("cannot open '{path}': {e}"))?;
            return self.inside(path, real);
        }
        // Walk up to the nearest existing ancestor; what is below it does
        // not exist yet, so it cannot be a symlink.
        let mut existing = full.as_path();
        let mut rest = Vec::new();
        while !existing.exists() {
            if existing.symlink_metadata().is_ok() {
                // A symlink whose target is missing: writing through it
                // would create the target, wherever it points.
                return Err(format!("path '{path}' is a symlink to a missing target"));
            }
            let Some(parent) = existing.parent() else {
                return Err(format!("path '{path}' has no existing parent"));
            };
            if let Some(name) = existing.file_name() {
                rest.push(name.to_owned());
            }
            existing = parent;
        }
        let mut real = existing
            .canonicalize()
            .map_err(|e| format!("cannot open '{path}': {e}"))?;
        for name in rest.into_iter().rev() {
            real.push(name);
        }
        self.inside(path, real)
    }

    fn inside(&self, given: &str, real: PathBuf) -> Result<PathBuf, String> {
        if self.all.iter().any(|r| real.starts_with(r)) {
            Ok(real)
        } else {
            Err(format!(
                "path '{given}' is outside the directories this tool may use"
            ))
        }
    }

    /// How a path is shown back to the model: relative to the work
    /// directory when inside it.
    pub(crate) fn show(&self, real: &Path) -> String {
        real.strip_prefix(&self.base)
            .map(|p| {
                if p.as_os_str().is_empty() {
                    ".".into()
                } else {
                    p.display().to_string()
                }
            })
            .unwrap_or_else(|_| real.display().to_string())
    }
}

/// The checked path is opened without following a symlink in its last
/// component, so one swapped in after the check (by a concurrent `shell`
/// call) fails instead of leading outside.
pub(crate) async fn read_nofollow(path: &Path) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut file = tokio::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .await?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).await?;
    Ok(bytes)
}

pub(crate) async fn write_nofollow(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .await?;
    file.write_all(bytes).await?;
    file.flush().await
}

fn parse<T: for<'de> Deserialize<'de>>(arguments: &str) -> Result<T, String> {
    serde_json::from_str(arguments).map_err(|e| format!("invalid arguments: {e}"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_string: String,
    new_string: String,
}

pub(crate) async fn read_file(
    roots: &Roots,
    max_bytes: u64,
    arguments: &str,
) -> Result<String, String> {
    let args: PathArgs = parse(arguments)?;
    let real = roots.resolve(&args.path, true)?;
    let meta = tokio::fs::metadata(&real)
        .await
        .map_err(|e| format!("cannot read '{}': {e}", args.path))?;
    if !meta.is_file() {
        return Err(format!("'{}' is not a regular file", args.path));
    }
    let bytes = read_nofollow(&real)
        .await
        .map_err(|e| format!("cannot read '{}': {e}", args.path))?;
    let cut = bytes.len() as u64 > max_bytes;
    let shown = &bytes[..bytes.len().min(max_bytes as usize)];
    let mut text = String::from_utf8_lossy(shown).into_owned();
    if cut {
        text.push_str(&format!(
            "\n[truncated: the file has {} bytes; only the first {max_bytes} are shown]",
            bytes.len()
        ));
    }
    Ok(text)
}

pub(crate) async fn write_file(roots: &Roots, arguments: &str) -> Result<String, String> {
    let args: WriteArgs = parse(arguments)?;
    let real = roots.resolve(&args.path, false)?;
    if real.is_dir() {
        return Err(format!("'{}' is a directory", args.path));
    }
    if let Some(parent) = real.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| format!("cannot create the directories of '{}': {e}", args.path))?;
    }
    write_nofollow(&real, args.content.as_bytes())
        .await
        .map_err(|e| format!("cannot write '{}': {e}", args.path))?;
    Ok(format!(
        "wrote {} bytes ({} lines) to {}",
        args.content.len(),
        args.content.lines().count(),
        roots.show(&real)
    ))
}

pub(crate) async fn edit_file(roots: &Roots, arguments: &str) -> Result<String, String> {
    let args: EditArgs = parse(arguments)?;
    if args.old_string.is_empty() {
        return Err("old_string is empty; give the exact text to replace".to_owned());
    }
    let real = roots.resolve(&args.path, true)?;
    let bytes = read_nofollow(&real)
        .await
        .map_err(|e| format!("cannot read '{}': {e}", args.path))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("'{}' is not UTF-8 text", args.path))?;
    match text.matches(&args.old_string).count() {
        1 => {}
        0 => return Err(format!("old_string was not found in '{}'", args.path)),
        n => {
            return Err(format!(
                "old_string occurs {n} times in '{}'; give a longer, unique span",
                args.path
            ))
        }
    }
    let edited = text.replacen(&args.old_string, &args.new_string, 1);
    write_nofollow(&real, edited.as_bytes())
        .await
        .map_err(|e| format!("cannot write '{}': {e}", args.path))?;
    Ok(format!("replaced 1 occurrence in {}", roots.show(&real)))
}

/// Entries listed at most.
const MAX_ENTRIES: usize = 1000;

pub(crate) async fn list_dir(roots: &Roots, arguments: &str) -> Result<String, String> {
    let args: ListArgs = parse(arguments)?;
    let path = args.path.unwrap_or_else(|| ".".to_owned());
    let real = roots.resolve(&path, true)?;
    let mut dir = tokio::fs::read_dir(&real)
        .await
        .map_err(|e| format!("cannot list '{path}': {e}"))?;
    let mut names = Vec::new();
    while let Some(entry) = dir
        .next_entry()
        .await
        .map_err(|e| format!("cannot list '{path}': {e}"))?
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().await.ok();
        let shown = match kind {
            Some(k) if k.is_dir() => format!("{name}/"),
            Some(k) if k.is_symlink() => format!("{name}@"),
            _ => name,
        };
        names.push(shown);
    }
    names.sort();
    let total = names.len();
    names.truncate(MAX_ENTRIES);
    let mut out = names.join("\n");
    if total > MAX_ENTRIES {
        out.push_str(&format!(
            "\n[{} more entries not shown]",
            total - MAX_ENTRIES
        ));
    }
    if total == 0 {
        out = "(empty directory)".to_owned();
    }
    Ok(out)
}
