//! The Windlass engine: one agent loop for every surface, and its ports.

pub mod ports;

pub use ports::policy::*;
pub use ports::provider::*;
pub use ports::sink::*;
pub use ports::store::*;
pub use ports::tools::*;
