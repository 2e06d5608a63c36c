//! `GET /metrics`: the Prometheus text exposition. Gauges that mirror live
//! state (responses in flight, MCP servers up) are read at scrape time.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use metrics::Label;

use crate::metrics::{INFLIGHT, MCP_UP};
use crate::state::AppState;

const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

pub(crate) async fn scrape(State(app): State<AppState>) -> Response {
    let metrics = &app.metrics;
    metrics.gauge(INFLIGHT, Vec::new(), app.inflight.len() as f64);
    if let Some(directory) = &app.mcp {
        for server in directory.servers() {
            // Configured servers only: their labels come from the operator.
            let Some(label) = server.get("label").and_then(|v| v.as_str()) else {
                continue;
            };
            let up = server.get("state").and_then(|v| v.as_str()) == Some("connected");
            let labels = vec![Label::new("server", label.to_owned())];
            metrics.gauge(MCP_UP, labels, if up { 1.0 } else { 0.0 });
        }
    }
    match metrics.render() {
        Some(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
