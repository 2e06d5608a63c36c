//! Where file tools and shell redirections may go, checked on the path as
//! written (the built-in tools check the real, symlink-resolved path again
//! when they run), and which hosts `web_fetch` may reach.

use std::path::{Component, Path, PathBuf};

/// Directories a caller may touch. Relative paths are taken from `base`
/// (the built-ins' work directory).
#[derive(Debug, Clone, Default)]
pub struct Areas {
    base: Option<PathBuf>,
    roots: Vec<PathBuf>,
}

impl Areas {
    pub fn new(base: Option<PathBuf>, roots: impl IntoIterator<Item = PathBuf>) -> Areas {
        Areas {
            base: base.map(|b| normalize(&b)),
            roots: roots.into_iter().map(|r| normalize(&r)).collect(),
        }
    }

    /// Whether `path` lies inside one of the roots once `.` and `..` are
    /// resolved. With no roots at all, only relative paths that stay below
    /// the work directory pass.
    pub fn allows(&self, path: &str) -> bool {
        let p = Path::new(path);
        if self.roots.is_empty() {
            return p.is_relative() && stays_below(p);
        }
        let full = match (&self.base, p.is_absolute()) {
            (_, true) => normalize(p),
            (Some(base), false) => normalize(&base.join(p)),
            (None, false) => return false,
        };
        self.roots.iter().any(|r| full.starts_with(r))
    }
}

/// Resolves `.` and `..` without touching the file system; `..` above the
/// root stays at the root.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn stays_below(p: &Path) -> bool {
    let mut depth: i64 = 0;
    for c in p.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    true
}

/// Whether `host` matches an allowlist entry: the exact name
/// (case-insensitive) or `*.suffix` for any sub-domain of `suffix`.
pub fn domain_allowed(domains: &[String], host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    domains.iter().any(|d| {
        let d = d.trim_end_matches('.').to_ascii_lowercase();
        match d.strip_prefix("*.") {
            Some(suffix) => host.len() > suffix.len() && host.ends_with(&format!(".{suffix}")),
            None => host == d,
        }
    })
}
