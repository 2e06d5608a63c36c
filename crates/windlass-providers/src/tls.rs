//! TLS for upstream clients: the platform's trust store (through reqwest's
//! rustls platform verifier) plus an optional CA bundle for a model server
//! behind a private CA.

use std::path::Path;

use reqwest::Certificate;
use windlass_engine::ProviderError;

use crate::transport::config_error;

/// Makes ring the process's rustls crypto provider unless one is set.
/// reqwest is built without a provider of its own (its default, aws-lc,
/// is a large C build); every client, the MCP one included, uses this one.
pub fn install_crypto_provider() {
    // An error only means a provider is already installed: keep it.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The certificates of a PEM bundle file, for `ca_file`.
pub(crate) fn load_ca_file(path: &Path) -> Result<Vec<Certificate>, ProviderError> {
    let pem = std::fs::read(path)
        .map_err(|e| config_error(format!("cannot read ca_file {}: {e}", path.display())))?;
    let certs = Certificate::from_pem_bundle(&pem).map_err(|e| {
        config_error(format!(
            "ca_file {} is not a PEM certificate bundle: {e}",
            path.display()
        ))
    })?;
    if certs.is_empty() {
        return Err(config_error(format!(
            "ca_file {} holds no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}
