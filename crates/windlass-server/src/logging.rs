//! The log lines the gateway writes: one `fmt` layer, text or JSON, filtered
//! by `RUST_LOG` (default `info`). At `info` a request writes one line (its
//! completion or access line) plus warnings and errors; the per-turn and
//! per-tool lines are at `debug`. Kept here so `windlass serve` and the
//! benchmark harness install exactly the same layer.

use std::io::IsTerminal;

use tracing::Subscriber;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{fmt, EnvFilter, Layer};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// `RUST_LOG`, or `info` when it is unset or does not parse.
pub fn env_filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"))
}

/// The log layer, writing to stdout.
pub fn log_layer<S>(format: LogFormat) -> Box<dyn Layer<S> + Send + Sync + 'static>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    match format {
        // The span list only: the current span again would repeat it.
        LogFormat::Json => fmt::layer()
            .json()
            .with_current_span(false)
            .with_filter(env_filter())
            .boxed(),
        // Colours only on a terminal: a file or a log collector gets plain
        // text (and the escape codes cost formatting work on every line).
        LogFormat::Text => fmt::layer()
            .with_ansi(std::io::stdout().is_terminal())
            .with_filter(env_filter())
            .boxed(),
    }
}
