//! The tenant a request acts for: its key's, or the default tenant when the
//! server has no keys (or the key names none).

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use windlass_engine::DEFAULT_TENANT;

use crate::guard::keys::AuthedKey;

/// Extracts the caller's tenant; never fails (the auth layer has already
/// refused requests without a valid key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant(pub String);

impl Tenant {
    pub fn of(key: Option<&AuthedKey>) -> Tenant {
        Tenant(key.map_or(DEFAULT_TENANT, |k| k.tenant.as_str()).to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Tenant {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Tenant::of(parts.extensions.get::<AuthedKey>()))
    }
}
