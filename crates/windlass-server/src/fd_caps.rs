//! Connection caps that follow the process's open-file limit
//! (`RLIMIT_NOFILE`, what `ulimit -n` sets).
//!
//! Every accepted connection is a file descriptor, and so is every store
//! connection, upstream or MCP socket, MCP child's pipe and log file. With
//! caps above the limit, `accept` fails with "too many open files" before
//! the caps are reached and `/health` waits in the kernel's backlog. So
//! unless the operator sets them, the caps are derived from the soft limit
//! less a headroom:
//!
//! - [`PROCESS_FDS`] for the process itself (stdio, the listener, the
//!   runtime's epoll and wakers, SQLite's files, OTLP, the log);
//! - the store's pool and a few descriptors per configured MCP server
//!   (`reserved`, counted by the binary that knows them);
//! - a quarter of the limit for outbound connections: upstream models,
//!   MCP over HTTP, webhooks, the JWKS fetch.
//!
//! `hard_max_connections` is what is left (at most [`MAX_HARD`]);
//! `max_connections`, past which only `/health` and `/ready` are served,
//! is three quarters of it, so the probes keep a band of their own.

use crate::config::ConnectionLimits;

/// Descriptors the process holds besides connections and pools.
pub const PROCESS_FDS: u64 = 64;

/// The derived hard cap never goes beyond this (memory, not descriptors,
/// is the bound past it).
pub const MAX_HARD: usize = 65_536;

/// The smallest caps derived, whatever the limit (a limit this low leaves
/// the process little else to do).
const MIN_HARD: usize = 16;

/// Caps derived from a soft limit, for the start-up log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdCaps {
    pub soft_limit: u64,
    pub headroom: u64,
    pub max_connections: usize,
    pub hard_max_connections: usize,
}

/// The caps for a soft limit of `soft` descriptors with `reserved` held by
/// pools and MCP servers.
pub fn derive(soft: u64, reserved: u64) -> FdCaps {
    let headroom = PROCESS_FDS + reserved + soft / 4;
    let left = usize::try_from(soft.saturating_sub(headroom)).unwrap_or(usize::MAX);
    let hard = left.clamp(MIN_HARD, MAX_HARD);
    FdCaps {
        soft_limit: soft,
        headroom,
        max_connections: (hard * 3 / 4).max(1),
        hard_max_connections: hard,
    }
}

/// The process's soft open-file limit; `None` when unlimited or unknown.
#[cfg(unix)]
pub fn soft_nofile() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit struct we own.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    // `rlim_t` is not u64 on every Unix.
    #[allow(clippy::unnecessary_cast)]
    let soft = lim.rlim_cur as u64;
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(soft)
}

#[cfg(not(unix))]
pub fn soft_nofile() -> Option<u64> {
    None
}

/// Fills the caps the operator left unset from the soft limit; returns
/// what was derived (for the log), or `None` when both were set or the
/// limit is unknown. An operator's `max_connections` above the derived
/// hard cap raises it to match (they asked for that many).
pub fn apply(
    limits: &mut ConnectionLimits,
    explicit_max: bool,
    explicit_hard: bool,
    reserved: u64,
) -> Option<FdCaps> {
    if explicit_max && explicit_hard {
        return None;
    }
    let caps = derive(soft_nofile()?, reserved);
    if !explicit_hard {
        limits.hard_max_connections = caps.hard_max_connections;
    }
    if !explicit_max {
        limits.max_connections = caps.max_connections.min(limits.hard_max_connections);
    }
    if limits.hard_max_connections < limits.max_connections {
        limits.hard_max_connections = limits.max_connections;
    }
    Some(caps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_leave_headroom_under_the_limit() {
        let c = derive(1024, 24);
        assert_eq!(c.headroom, 64 + 24 + 256);
        assert_eq!(c.hard_max_connections, 1024 - 344);
        assert_eq!(c.max_connections, (1024 - 344) * 3 / 4);
        assert!((c.hard_max_connections as u64) + c.headroom <= 1024);
    }

    #[test]
    fn caps_are_bounded_both_ways() {
        assert_eq!(derive(10, 24).hard_max_connections, MIN_HARD);
        assert_eq!(derive(10_000_000, 24).hard_max_connections, MAX_HARD);
        assert_eq!(derive(u64::MAX, 0).hard_max_connections, MAX_HARD);
    }

    #[test]
    fn only_unset_caps_are_derived() {
        let mut l = ConnectionLimits {
            max_connections: 100_000,
            ..ConnectionLimits::default()
        };
        if let Some(c) = apply(&mut l, true, false, 0) {
            assert_eq!(l.max_connections, 100_000);
            assert!(l.hard_max_connections >= 100_000, "{c:?}");
        }
        let mut l = ConnectionLimits::default();
        assert_eq!(apply(&mut l, true, true, 0), None);
        assert_eq!(l.max_connections, 1024);
    }
}
