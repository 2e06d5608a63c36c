//! Tenancy over real HTTP: keys of several tenants (`windlass_testkit::tenants`),
//! isolation on every route, quotas. One test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod bg;
mod http;
mod mcp;
mod prompts;
mod quotas;
