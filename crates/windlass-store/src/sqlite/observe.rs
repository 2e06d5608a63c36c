//! Names an observer outside the store uses to find the save thread (its
//! OS thread name) and its timing events (their tracing target), and the
//! unit of their durations; in a leaf module because the save thread and
//! the checkpointer both emit them.

/// Name of the thread (at most 15 bytes are kept by Linux).
pub const SAVE_THREAD_NAME: &str = "windlass-sqlite";

/// Target of the debug-level event each group emits with its timings (how
/// long its oldest save queued, how long the commit took, whether the commit
/// started the WAL over). Off unless a subscriber enables it; the bench
/// harness collects them to show where slow saves spend their time.
pub const SAVE_TIMING_TARGET: &str = "windlass_store::save_timing";

/// A duration as the timing events' whole microseconds.
pub(super) fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
