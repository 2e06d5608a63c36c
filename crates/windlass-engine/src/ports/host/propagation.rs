//! Called by the server and the model/MCP clients, never the loop; the binary picks the exporter.
//!
//! Trace context across process boundaries (W3C `traceparent`).
//!
//! The engine and its adapters see only this port: the server asks it to
//! continue a client's trace, the model and MCP clients ask it for the
//! headers of an outbound call. The binary installs an implementation
//! backed by its trace exporter; without one, nothing is read or sent.
//! It is process-wide, like the exporter it stands for.

use std::sync::OnceLock;

/// Reads and writes trace context for the current `tracing` span.
pub trait TracePropagation: Send + Sync {
    /// Headers (e.g. `traceparent`) that make the current span the parent
    /// of an outbound call.
    fn outbound_headers(&self) -> Vec<(String, String)>;

    /// Makes `span` a child of the trace context in a client's headers;
    /// `header` reads one header by its lowercase name.
    fn adopt_parent(&self, span: &tracing::Span, header: &dyn Fn(&str) -> Option<String>);
}

static PROPAGATION: OnceLock<Box<dyn TracePropagation>> = OnceLock::new();

/// Installs the process's propagation; false if one was installed already.
pub fn set_trace_propagation(p: Box<dyn TracePropagation>) -> bool {
    PROPAGATION.set(p).is_ok()
}

/// The trace headers for an outbound call made in the current span; empty
/// when no propagation is installed.
pub fn trace_headers() -> Vec<(String, String)> {
    PROPAGATION
        .get()
        .map(|p| p.outbound_headers())
        .unwrap_or_default()
}

/// Continues the client's trace in `span`, when propagation is installed.
pub fn adopt_trace_parent(span: &tracing::Span, header: &dyn Fn(&str) -> Option<String>) {
    if let Some(p) = PROPAGATION.get() {
        p.adopt_parent(span, header);
    }
}
