//! Trace export: the `tracing` spans (request, response, model turn, tool
//! call) sent over OTLP/HTTP (protobuf) when an endpoint is configured, and
//! W3C trace context read from clients and sent to upstreams.
//!
//! The exporter posts through our own reqwest client, so the tree keeps one
//! reqwest. Its batch processor exports from a thread of its own, outside
//! the tokio runtime; each export is therefore spawned onto the runtime.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use serde::Deserialize;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use windlass_engine::TracePropagation;

const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// `[otlp]`. Every key is optional; the standard `OTEL_*` variables
/// override it (see [`OtlpFile::resolve`]).
#[derive(Debug, Default, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OtlpFile {
    /// The collector's base URL (`http://host:4318`); traces go to
    /// `{endpoint}/v1/traces`. None: no export.
    pub endpoint: Option<String>,
    /// `service.name` of the exported spans; default `windlass`.
    pub service_name: Option<String>,
}

/// Where and as what traces are exported.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpSettings {
    /// The full traces URL.
    pub traces_url: String,
    pub service_name: String,
}

impl OtlpFile {
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL), else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` or the file's `endpoint` (base URLs);
    /// `OTEL_SERVICE_NAME`, else the file's `service_name`.
    pub fn resolve(&self, env: impl Fn(&str) -> Option<String>) -> Option<OtlpSettings> {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let base = |b: String| format!("{}/v1/traces", b.trim().trim_end_matches('/'));
        let traces_url = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT").map(base))
            .or_else(|| self.endpoint.clone().map(base))?;
        let service_name = set("OTEL_SERVICE_NAME")
            .or_else(|| self.service_name.clone())
            .unwrap_or_else(|| "windlass".to_owned());
        Some(OtlpSettings {
            traces_url,
            service_name,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    #[error("OTLP exporter: {0}")]
    Exporter(String),
}

/// The exporter and the propagation, installed; [`shutdown`](Self::shutdown)
/// flushes what is still buffered.
pub struct Tracing {
    provider: SdkTracerProvider,
}

impl Tracing {
    /// Builds the exporter; must run inside the tokio runtime.
    pub fn start(
        settings: &OtlpSettings,
    ) -> Result<(Self, opentelemetry_sdk::trace::Tracer), OtlpError> {
        // A collector may be on https: the gateway's one TLS provider.
        windlass_providers::install_crypto_provider();
        let client = ReqwestExporterClient {
            client: reqwest::Client::builder()
                .timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|e| OtlpError::Exporter(e.to_string()))?,
            runtime: tokio::runtime::Handle::current(),
        };
        let exporter = SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.traces_url.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| OtlpError::Exporter(e.to_string()))?;
        let resource = Resource::builder()
            .with_service_name(settings.service_name.clone())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("windlass");
        windlass_engine::set_trace_propagation(Box::new(W3cPropagation(
            TraceContextPropagator::new(),
        )));
        Ok((Tracing { provider }, tracer))
    }

    /// Exports what is buffered; off the async threads (it blocks).
    pub async fn shutdown(self) {
        let provider = self.provider;
        let done = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        if let Ok(Err(e)) = done {
            tracing::warn!(error = %e, "OTLP exporter did not shut down cleanly");
        }
    }
}

/// `traceparent` / `tracestate` in and out, for the current span.
struct W3cPropagation(TraceContextPropagator);

impl TracePropagation for W3cPropagation {
    fn outbound_headers(&self) -> Vec<(String, String)> {
        let cx = tracing::Span::current().context();
        let mut headers = HashMap::new();
        self.0.inject_context(&cx, &mut headers);
        headers.into_iter().collect()
    }

    fn adopt_parent(&self, span: &tracing::Span, header: &dyn Fn(&str) -> Option<String>) {
        let mut carrier = HashMap::new();
        for name in ["traceparent", "tracestate"] {
            if let Some(v) = header(name) {
                carrier.insert(name.to_owned(), v);
            }
        }
        if carrier.is_empty() {
            return;
        }
        // An invalid `traceparent` extracts as an empty context: the
        // request then starts a trace of its own.
        let cx = self.0.extract(&carrier);
        if let Err(e) = span.set_parent(cx) {
            tracing::debug!(error = %e, "cannot continue the client's trace");
        }
    }
}

/// The exporter's HTTP client: our reqwest, driven on the tokio runtime.
#[derive(Debug)]
struct ReqwestExporterClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for ReqwestExporterClient {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            let (parts, body) = request.into_parts();
            let response = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            let mut out = http::Response::new(body);
            *out.status_mut() = status;
            *out.headers_mut() = headers;
            Ok::<_, HttpError>(out)
        });
        task.await?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_environment_overrides_the_file() {
        let file = OtlpFile {
            endpoint: Some("http://file:4318/".into()),
            service_name: Some("gw".into()),
        };
        let s = file.resolve(env(&[])).unwrap();
        assert_eq!(s.traces_url, "http://file:4318/v1/traces");
        assert_eq!(s.service_name, "gw");
        let s = file
            .resolve(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318")]))
            .unwrap();
        assert_eq!(s.traces_url, "http://env:4318/v1/traces");
        let full = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/x"),
            ("OTEL_SERVICE_NAME", "svc"),
        ];
        let s = file.resolve(env(&full)).unwrap();
        assert_eq!(
            (s.traces_url.as_str(), s.service_name.as_str()),
            ("http://t:1/x", "svc")
        );
        assert_eq!(OtlpFile::default().resolve(env(&[])), None);
        let s = OtlpFile::default()
            .resolve(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://e:4318")]))
            .unwrap();
        assert_eq!(s.service_name, "windlass");
    }
}
