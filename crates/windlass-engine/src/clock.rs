//! Wall-clock time as the API states it (Unix seconds).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in Unix seconds (0 on a clock set before 1970).
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
