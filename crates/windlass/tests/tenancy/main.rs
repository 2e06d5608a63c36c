//! Tenancy over real HTTP: keys of several tenants (`windlass_testkit::tenants`),
//! isolation on every route, quotas. One test binary.

mod bg;
mod http;
mod mcp;
mod quotas;
