//! Running responses: the one launcher every surface starts a response
//! through (register, run, finish, charge; see `launch.rs`), the registry of
//! what runs now, the event log of a stream, and responses that outlive
//! their request: background mode, stream resume and the recovery of runs a
//! dead process (or replica) left behind.
//!
//! Everything here drives the one engine loop through [`Engine::run`]; what
//! background mode adds is where the run lives (a worker task instead of the
//! request), a live row in the [`RunStore`] with this replica's lease, and
//! the event log that lets a client (re)attach to the stream.
//!
//! [`Engine::run`]: windlass_engine::Engine::run
//! [`RunStore`]: windlass_engine::RunStore

pub mod background;
pub(crate) mod completion;
pub(crate) mod in_place;
pub mod inflight;
pub(crate) mod launch;
pub mod log;
pub mod notify;
pub(crate) mod recover;
pub(crate) mod remote;
pub mod resume;
pub(crate) mod warmup;
pub(crate) mod worker;
