//! What stands between a request and the engine: authentication (keys,
//! scopes, the tenant), the browser checks, load shedding, the body's size
//! and deadline, the request limits and the quotas.

pub(crate) mod admission;
pub(crate) mod auth;
pub(crate) mod body;
pub(crate) mod browser;
pub(crate) mod consistency;
pub mod jwt;
pub mod keys;
pub mod limits;
pub mod quota;
pub(crate) mod quota_gate;
pub mod scopes;
pub mod tenant;
pub(crate) mod upload;
