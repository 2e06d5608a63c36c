//! An upstream on loopback behind a certificate from a throwaway CA: works
//! with that CA as `ca_file`, fails with a clear error without it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use windlass_engine::{ModelEvent, ModelProvider, ModelRequest, ProviderError};
use windlass_protocol::Item;
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};

const ANSWER: &str = r#"{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello over TLS"},"finish_reason":"stop"}]}"#;

struct Pki {
    ca_pem: String,
    leaf: CertificateDer<'static>,
    leaf_key: PrivateKeyDer<'static>,
}

fn throwaway_pki() -> Pki {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
    Pki {
        ca_pem: ca.pem(),
        leaf: leaf.der().clone(),
        leaf_key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
    }
}

/// A TLS server answering every request with one chat completion.
async fn tls_upstream(pki: &Pki) -> String {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![pki.leaf.clone()], pki.leaf_key.clone_key())
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client refusing the certificate ends the handshake here.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !String::from_utf8_lossy(&seen).contains("\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    ANSWER.len()
                );
                let _ = tls.write_all(head.as_bytes()).await;
                let _ = tls.write_all(ANSWER.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    format!("https://localhost:{}/v1", addr.port())
}

fn request() -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        transcript: vec![Item::user_text("hi")].into(),
        ..ModelRequest::default()
    }
}

fn write_temp(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("windlass-tls-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

fn config(url: String, ca_file: Option<PathBuf>) -> ChatProviderConfig {
    let mut cfg = ChatProviderConfig::new(url);
    cfg.max_retries = 0;
    cfg.ca_file = ca_file;
    cfg
}

#[tokio::test]
async fn a_private_ca_works_with_ca_file_and_fails_clearly_without() {
    let pki = throwaway_pki();
    let url = tls_upstream(&pki).await;

    let ca_file = write_temp("ca.pem", &pki.ca_pem);
    let trusted = ChatCompletionsProvider::new(config(url.clone(), Some(ca_file))).unwrap();
    let events: Vec<_> = trusted.start(request()).await.unwrap().collect().await;
    assert_eq!(
        events[0],
        Ok(ModelEvent::TextDelta("hello over TLS".into()))
    );

    let untrusted = ChatCompletionsProvider::new(config(url, None)).unwrap();
    match untrusted.start(request()).await {
        Err(ProviderError::Connect(message)) => {
            println!("without ca_file: {message}");
            assert!(message.contains("certificate"), "{message}");
        }
        Err(other) => panic!("expected a connect error, got {other:?}"),
        Ok(_) => panic!("a certificate from an unknown CA was accepted"),
    }
}

#[tokio::test]
async fn an_unreadable_ca_file_is_a_configuration_error() {
    let missing = config(
        "https://localhost:1/v1".into(),
        Some("/nonexistent/ca.pem".into()),
    );
    let err = ChatCompletionsProvider::new(missing).unwrap_err();
    assert!(err.to_string().contains("cannot read ca_file"), "{err}");
    let not_pem = write_temp("not.pem", "not a certificate");
    let err = ChatCompletionsProvider::new(config("https://localhost:1/v1".into(), Some(not_pem)))
        .unwrap_err();
    assert!(err.to_string().contains("ca_file"), "{err}");
}
