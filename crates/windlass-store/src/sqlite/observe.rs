//! Names an observer outside the store uses to find the save thread (its
//! OS thread name) and its timing events (their tracing target); in a leaf
//! module because the save thread and the checkpointer both emit them.

/// Name of the thread (at most 15 bytes are kept by Linux).
pub const SAVE_THREAD_NAME: &str = "windlass-sqlite";

/// Target of the debug-level event each group emits with its timings (how
/// long its oldest save queued, how long the commit took, whether the commit
/// started the WAL over). Off unless a subscriber enables it; the bench
/// harness collects them to show where slow saves spend their time.
pub const SAVE_TIMING_TARGET: &str = "windlass_store::save_timing";
