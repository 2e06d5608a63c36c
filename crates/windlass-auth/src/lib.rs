//! Bearer JWTs as Windlass API keys: tokens an organisation's OIDC provider
//! issues, verified against the issuer's JWKS (fetched over HTTP(S),
//! cached, refetched on rotation), mapped to the key name, tenant and
//! scopes the gateway's key guard works with, and the expiry that ends
//! long streams and WebSockets.
//!
//! Layer: depends on no Windlass crate; the server's key guard uses it.
//!
//! ```toml
//! [auth.oidc]
//! issuer = "https://login.example.com/"
//! audience = "windlass"
//! tenant_claim = "org_id"
//! scopes_claim = "scope"
//! ```
//!
//! Every failure is one [`Unauthorized`]: the reason goes to a debug log
//! line only (never the token), so a caller learns nothing about which
//! check failed.

mod config;
mod jwks;
mod verify;

pub use config::{Audience, OidcConfig};
pub use jwks::JwksError;
pub use verify::{looks_like_jwt, JwtIdentity, JwtVerifier, Unauthorized};
