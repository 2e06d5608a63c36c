//! TLS to Postgres with libpq's URL parameters and meanings, on rustls
//! (ring provider) through `tokio-postgres-rustls`.
//!
//! tokio-postgres itself knows only `sslmode=disable|prefer|require` and
//! none of the certificate parameters, so the TLS parameters are taken out
//! of the URL here and the rest is left to its parser:
//!
//! | parameter | meaning (as libpq) |
//! |---|---|
//! | `sslmode=disable` | plain TCP |
//! | `sslmode=allow`, `prefer` (default) | TLS when the server offers it, certificate not checked (`allow` tries TLS first too) |
//! | `sslmode=require` | TLS or no connection; certificate not checked, unless a root CA file is there (then as `verify-ca`, libpq's compatibility rule) |
//! | `sslmode=verify-ca` | TLS; the server's chain must lead to a CA in `sslrootcert` |
//! | `sslmode=verify-full` | `verify-ca` plus the host name (or IP) must be in the certificate |
//! | `sslrootcert=FILE` | PEM CA certificates; default `~/.postgresql/root.crt` if it exists |
//! | `sslrootcert=system` | the operating system's trust store; implies (and requires) `verify-full` |
//! | `sslcert=FILE`, `sslkey=FILE` | a client certificate chain and its key (PEM; defaults `~/.postgresql/postgresql.crt` / `.key` when both exist) |
//! | `sslsni=0` | no SNI in the handshake |
//! | `sslnegotiation=direct` | TLS from the first byte (PostgreSQL 17+), ALPN `postgresql` |
//!
//! Refused rather than ignored: `sslpassword` (encrypted keys), `sslcrl`,
//! `sslcrldir`, and any other `sslmode`.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::config::{SslMode, SslNegotiation};
use tokio_postgres_rustls::MakeRustlsConnect;
use windlass_engine::StoreError;

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgSslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl PgSslMode {
    fn parse(value: &str) -> Result<PgSslMode, StoreError> {
        Ok(match value {
            "disable" => PgSslMode::Disable,
            "allow" => PgSslMode::Allow,
            "prefer" => PgSslMode::Prefer,
            "require" => PgSslMode::Require,
            "verify-ca" => PgSslMode::VerifyCa,
            "verify-full" => PgSslMode::VerifyFull,
            other => {
                return Err(invalid(format!(
                    "sslmode '{other}' is not one of disable, allow, prefer, require, \
                     verify-ca, verify-full"
                )))
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PgSslMode::Disable => "disable",
            PgSslMode::Allow => "allow",
            PgSslMode::Prefer => "prefer",
            PgSslMode::Require => "require",
            PgSslMode::VerifyCa => "verify-ca",
            PgSslMode::VerifyFull => "verify-full",
        }
    }

    /// What tokio-postgres is told: whether TLS is tried, and required.
    fn wire(self) -> SslMode {
        match self {
            PgSslMode::Disable => SslMode::Disable,
            PgSslMode::Allow | PgSslMode::Prefer => SslMode::Prefer,
            PgSslMode::Require | PgSslMode::VerifyCa | PgSslMode::VerifyFull => SslMode::Require,
        }
    }
}

/// Where the trusted CAs come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    None,
    File(PathBuf),
    System,
}

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Encryption only (libpq's `require`/`prefer`): the handshake's
    /// signatures are still verified, the certificate is not.
    Nothing,
    Chain,
    ChainAndName,
}

/// The TLS settings of one connection URL, for messages (no secrets: the
/// files' paths only).
#[derive(Debug, Clone)]
pub struct PgTlsSummary {
    pub mode: PgSslMode,
    roots: Roots,
    client_cert: Option<PathBuf>,
}

impl PgTlsSummary {
    /// One line for the start-up log.
    pub fn describe(&self) -> String {
        let roots = match &self.roots {
            Roots::None => String::new(),
            Roots::File(p) => format!(", sslrootcert {}", p.display()),
            Roots::System => ", sslrootcert system".to_owned(),
        };
        let cert = match &self.client_cert {
            Some(p) => format!(", client certificate {}", p.display()),
            None => String::new(),
        };
        format!("sslmode {}{roots}{cert}", self.mode.as_str())
    }
}

/// A parsed connection URL: the driver's settings and the TLS connector.
pub(crate) struct PgConnect {
    pub config: tokio_postgres::Config,
    pub tls: MakeRustlsConnect,
    pub summary: PgTlsSummary,
}

fn invalid(message: String) -> StoreError {
    StoreError::Backend(format!("invalid postgres URL: {message}"))
}

fn tls_error(message: String) -> StoreError {
    StoreError::Backend(format!("postgres TLS: {message}"))
}

/// The TLS parameters taken out of the URL.
#[derive(Default)]
struct Params {
    mode: Option<PgSslMode>,
    rootcert: Option<String>,
    cert: Option<String>,
    key: Option<String>,
    sni: bool,
}

/// Parses a connection URL (`postgres://…?sslmode=verify-full&sslrootcert=…`).
pub(crate) fn parse(url: &str) -> Result<PgConnect, StoreError> {
    let (rest, params) = split_tls_params(url)?;
    // The parser's error text does not include the URL (which may hold a
    // password), so it can be shown.
    let mut config = tokio_postgres::Config::from_str(&rest)
        .map_err(|e| StoreError::Backend(format!("invalid postgres URL: {e}")))?;
    let summary = resolve(&params)?;
    config.ssl_mode(summary.mode.wire());
    let tls = connector(&params, &summary, config.get_ssl_negotiation())?;
    Ok(PgConnect {
        config,
        tls,
        summary,
    })
}

/// Splits the URL's query into the TLS parameters (decoded) and the URL
/// without them (the other parameters left as written).
fn split_tls_params(url: &str) -> Result<(String, Params), StoreError> {
    let mut params = Params {
        sni: true,
        ..Params::default()
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), params));
    };
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode(raw_key)?;
        let value = || decode(raw_value);
        match key.as_str() {
            "sslmode" => params.mode = Some(PgSslMode::parse(&value()?)?),
            "sslrootcert" => params.rootcert = Some(value()?),
            "sslcert" => params.cert = Some(value()?),
            "sslkey" => params.key = Some(value()?),
            "sslsni" => params.sni = value()? != "0",
            "sslpassword" | "sslcrl" | "sslcrldir" => {
                return Err(invalid(format!("{key} is not supported by this build")))
            }
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, params))
}

fn decode(raw: &str) -> Result<String, StoreError> {
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| invalid("a TLS parameter is not valid UTF-8".into()))
}

/// libpq's default file under `~/.postgresql`, when it exists.
fn default_file(name: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let path = Path::new(&home).join(".postgresql").join(name);
    path.is_file().then_some(path)
}

/// Settles the mode and the trusted roots as libpq does.
fn resolve(params: &Params) -> Result<PgTlsSummary, StoreError> {
    let roots = match params.rootcert.as_deref() {
        Some("system") => Roots::System,
        Some(path) => Roots::File(PathBuf::from(path)),
        None => default_file("root.crt").map_or(Roots::None, Roots::File),
    };
    let mode = match (params.mode, &roots) {
        (Some(mode), _) => mode,
        // libpq: sslrootcert=system without a mode means verify-full.
        (None, Roots::System) => PgSslMode::VerifyFull,
        (None, _) => PgSslMode::Prefer,
    };
    if roots == Roots::System && mode != PgSslMode::VerifyFull {
        return Err(invalid(format!(
            "weak sslmode '{}' may not be used with sslrootcert=system (use verify-full)",
            mode.as_str()
        )));
    }
    if matches!(mode, PgSslMode::VerifyCa | PgSslMode::VerifyFull) && roots == Roots::None {
        return Err(invalid(format!(
            "sslmode={} needs the CA to verify against: set sslrootcert to a PEM file, \
             or sslrootcert=system for the system's trust store",
            mode.as_str()
        )));
    }
    let client_cert = match (&params.cert, &params.key) {
        (Some(cert), _) => Some(PathBuf::from(cert)),
        (None, _) => {
            default_file("postgresql.crt").filter(|_| default_file("postgresql.key").is_some())
        }
    };
    Ok(PgTlsSummary {
        mode,
        roots,
        client_cert,
    })
}

/// The certificate check a mode and its roots call for.
fn check_of(summary: &PgTlsSummary) -> Check {
    match summary.mode {
        PgSslMode::VerifyFull => Check::ChainAndName,
        PgSslMode::VerifyCa => Check::Chain,
        // libpq's compatibility rule: `require` with a root CA file verifies
        // the chain.
        PgSslMode::Require if matches!(summary.roots, Roots::File(_)) => Check::Chain,
        _ => Check::Nothing,
    }
}

fn connector(
    params: &Params,
    summary: &PgTlsSummary,
    negotiation: SslNegotiation,
) -> Result<MakeRustlsConnect, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let check = check_of(summary);
    let webpki = match check {
        Check::Nothing => None,
        Check::Chain | Check::ChainAndName => {
            let roots = load_roots(&summary.roots)?;
            let verifier =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| tls_error(format!("the trusted CAs cannot be used: {e}")))?;
            Some(verifier)
        }
    };
    let verifier = Arc::new(PgVerifier {
        check,
        webpki,
        provider: provider.clone(),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match client_auth(params, summary)? {
        Some((chain, key)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| tls_error(format!("the client certificate cannot be used: {e}")))?,
        None => builder.with_no_client_auth(),
    };
    config.enable_sni = params.sni;
    if negotiation == SslNegotiation::Direct {
        // Direct TLS needs the protocol named in the handshake.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
    }
    Ok(MakeRustlsConnect::new(config))
}

fn load_roots(roots: &Roots) -> Result<RootCertStore, StoreError> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::None => {}
        Roots::File(path) => {
            let certs = read_certs(path, "sslrootcert")?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(tls_error(format!(
                    "sslrootcert {}: no usable CA certificate in the file",
                    path.display()
                )));
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(tls_error(
                    "sslrootcert=system: the system's trust store has no certificates".into(),
                ));
            }
        }
    }
    Ok(store)
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, StoreError> {
    let unreadable = |e: rustls::pki_types::pem::Error| {
        tls_error(format!(
            "{what} {}: cannot be read as PEM ({e})",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(unreadable)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    if certs.is_empty() {
        return Err(tls_error(format!(
            "{what} {}: no certificate in the file",
            path.display()
        )));
    }
    Ok(certs)
}

type ClientAuth = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn client_auth(params: &Params, summary: &PgTlsSummary) -> Result<Option<ClientAuth>, StoreError> {
    let Some(cert) = &summary.client_cert else {
        if params.key.is_some() {
            return Err(invalid("sslkey is set without sslcert".into()));
        }
        return Ok(None);
    };
    let key_path = match &params.key {
        Some(k) => PathBuf::from(k),
        None if params.cert.is_none() => default_file("postgresql.key").unwrap_or_default(),
        None => return Err(invalid("sslcert is set without sslkey".into())),
    };
    let chain = read_certs(cert, "sslcert")?;
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| {
        tls_error(format!(
            "sslkey {}: cannot be read as a PEM private key ({e})",
            key_path.display()
        ))
    })?;
    Ok(Some((chain, key)))
}

/// The server-certificate check of one mode. Signatures of the handshake are
/// always verified (so the peer holds the certificate's key); what differs
/// is whether the certificate itself is trusted and names the host.
#[derive(Debug)]
struct PgVerifier {
    check: Check,
    webpki: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PgVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        let verdict =
            webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        match verdict {
            // webpki checks the chain before the name: a name mismatch means
            // the chain was good, which is all verify-ca asks.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A start-up message for a failed first connection: what went wrong in
/// TLS terms when the cause is the certificate, else the driver's text.
pub(crate) fn explain_connect_error(
    error: &(dyn std::error::Error + 'static),
    summary: &PgTlsSummary,
    host: &str,
) -> String {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        let tls = e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(tls) = tls {
            return explain_tls(tls, summary, host);
        }
        cause = e.source();
    }
    format!("postgres connection: {error}")
}

fn explain_tls(error: &rustls::Error, summary: &PgTlsSummary, host: &str) -> String {
    let roots = match &summary.roots {
        Roots::File(p) => format!("the CA in sslrootcert ({})", p.display()),
        Roots::System => "the system's trust store".to_owned(),
        Roots::None => "the trusted CAs".to_owned(),
    };
    let mode = summary.mode.as_str();
    let what = match error {
        rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer | CertificateError::BadSignature,
        ) => format!("the server's certificate is not signed by {roots}"),
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!(
            "the server's certificate is not valid for the host name '{host}' \
             (sslmode=verify-full checks it; connect by a name the certificate lists)"
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "the server's certificate has expired".to_owned(),
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. },
        ) => "the server's certificate is not valid yet".to_owned(),
        rustls::Error::AlertReceived(alert) => format!(
            "the server refused the handshake ({alert:?}); it may require a client \
             certificate (sslcert/sslkey) it trusts"
        ),
        other => format!("handshake failed: {other}"),
    };
    format!("postgres TLS (sslmode={mode}): {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary_of(url: &str) -> Result<PgTlsSummary, String> {
        let (_, params) = split_tls_params(url).map_err(|e| e.to_string())?;
        resolve(&params).map_err(|e| e.to_string())
    }

    #[test]
    fn tls_parameters_are_taken_out_and_the_rest_kept() {
        let (rest, params) = split_tls_params(
            "postgres://u:p%40ss@h:5/db?sslmode=verify-full&application_name=w&sslrootcert=%2Ftmp%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgres://u:p%40ss@h:5/db?application_name=w");
        assert_eq!(params.mode, Some(PgSslMode::VerifyFull));
        assert_eq!(params.rootcert.as_deref(), Some("/tmp/ca.pem"));
    }

    #[test]
    fn modes_follow_libpq() {
        assert_eq!(
            summary_of("postgres://h/db").unwrap().mode,
            PgSslMode::Prefer
        );
        let system = summary_of("postgres://h/db?sslrootcert=system").unwrap();
        assert_eq!(system.mode, PgSslMode::VerifyFull);
        let weak = summary_of("postgres://h/db?sslmode=require&sslrootcert=system").unwrap_err();
        assert!(weak.contains("verify-full"), "{weak}");
        let no_ca = summary_of("postgres://h/db?sslmode=verify-ca").unwrap_err();
        assert!(no_ca.contains("sslrootcert"), "{no_ca}");
        let bad = summary_of("postgres://h/db?sslmode=sometimes").unwrap_err();
        assert!(bad.contains("sometimes"), "{bad}");
        assert!(split_tls_params("postgres://h/db?sslpassword=x").is_err());
    }

    #[test]
    fn require_with_a_root_file_checks_the_chain() {
        let with_file = PgTlsSummary {
            mode: PgSslMode::Require,
            roots: Roots::File("/ca.pem".into()),
            client_cert: None,
        };
        assert_eq!(check_of(&with_file), Check::Chain);
        let without = PgTlsSummary {
            roots: Roots::None,
            ..with_file
        };
        assert_eq!(check_of(&without), Check::Nothing);
    }
}
