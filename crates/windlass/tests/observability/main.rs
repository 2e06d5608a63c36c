//! Metrics and request ids. A binary of its own: `request_id` installs the
//! process's global tracing subscriber (debug level, captured in memory),
//! which would log every other test of a shared binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod metrics;
mod request_id;
