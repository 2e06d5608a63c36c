//! The log lines the gateway writes: one `fmt` layer, text or JSON, filtered
//! by `RUST_LOG` (default `info`). At `info` a request writes one line (its
//! completion or access line) plus warnings and errors; the per-turn and
//! per-tool lines are at `debug`. Kept here so `windlass serve` and the
//! benchmark harness install exactly the same layer.

use std::io::IsTerminal;

use tracing::Subscriber;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::FormatFields;
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
            .fmt_fields(plain_fields())
            .with_ansi(std::io::stdout().is_terminal())
            .with_filter(env_filter())
            .boxed(),
    }
}

/// Fields as `name=value` (the message bare), separated by spaces: the
/// default text, written straight into the line instead of through the
/// default visitor's styled path, which cost more than the values.
fn plain_fields() -> impl for<'w> FormatFields<'w> + Send + Sync + 'static {
    fmt::format::debug_fn(|w, field, value| {
        if field.name() == "message" {
            write!(w, "{value:?}")
        } else {
            write!(w, "{}={value:?}", field.name())
        }
    })
    .delimited(" ")
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_text_line_has_the_span_the_bare_message_and_plain_fields() {
        let buf = Buf::default();
        let out = buf.clone();
        let layer = fmt::layer()
            .fmt_fields(plain_fields())
            .with_ansi(false)
            .with_writer(move || out.clone());
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("request", request_id = "req_1");
            span.in_scope(|| {
                tracing::info!(
                    key = "k",
                    status = "completed",
                    turns = 2u32,
                    "response finished"
                )
            });
        });
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert!(
            text.contains(
                "request{request_id=\"req_1\"}: windlass_server::logging::tests: \
                 response finished key=\"k\" status=\"completed\" turns=2\n"
            ),
            "{text}"
        );
        assert!(!text.contains('\u{1b}'), "no escape codes: {text}");
    }
}
