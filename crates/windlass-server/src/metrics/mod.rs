//! Prometheus metrics: what the server records from the engine's run
//! events and a response's end, rendered at `GET /metrics`.
//!
//! Names follow the OpenTelemetry GenAI semantic conventions where they
//! exist, in Prometheus form (dots become underscores, the unit is a
//! suffix). Labels are bounded: model and tool names pass a [`LabelCap`],
//! key names come from the configuration, statuses and outcomes are enums;
//! never ids or user text.

mod handles;
mod labels;
pub(crate) mod sink;
pub mod store;

use std::sync::Arc;
use std::time::Duration;

use metrics::{Key, Label, Level, Metadata, Recorder};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};
use windlass_engine::{CallResult, TurnReport};

use handles::{Cache, ResponseHandles, TurnHandles};
use labels::LabelCap;
pub use labels::Surface;

use crate::config::MetricsConfig;

const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Where the exposition is served (see `http/metrics.rs`).
pub const PATH: &str = "/metrics";

pub const REQUEST_DURATION: &str = "gen_ai_server_request_duration_seconds";
pub const TIME_TO_FIRST_TOKEN: &str = "gen_ai_server_time_to_first_token_seconds";
pub const CLIENT_OPERATION_DURATION: &str = "gen_ai_client_operation_duration_seconds";
pub const CLIENT_TOKEN_USAGE: &str = "gen_ai_client_token_usage";
pub const TOOL_DURATION: &str = "windlass_tool_call_duration_seconds";
pub const RESPONSES: &str = "windlass_responses_total";
pub const INFLIGHT: &str = "windlass_inflight_responses";
pub const TURNS: &str = "windlass_agentic_turns";
pub const MCP_UP: &str = "windlass_mcp_server_up";
pub const STORE_DURATION: &str = "windlass_store_operation_duration_seconds";

/// Distinct model or tool names kept as label values before `other`.
const MAX_NAMES: usize = 200;

const DURATION_BUCKETS: &[f64] = &[
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
const TTFT_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];
const TOKEN_BUCKETS: &[f64] = &[
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0,
];
const STORE_BUCKETS: &[f64] = &[
    0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];
const TURN_BUCKETS: &[f64] = &[
    1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 50.0,
];

static META: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The server's metrics; a disabled one records nothing. Cheap to clone.
#[derive(Clone, Default)]
pub struct Metrics {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    models: LabelCap,
    tools: LabelCap,
    cache: Cache,
}

/// How a response ended, for [`Metrics::response_finished`].
pub(crate) struct Finished<'a> {
    /// The model's label (see [`Metrics::model_label`]).
    pub model: &'a Arc<str>,
    pub key: &'a Arc<str>,
    pub status: &'static str,
    pub surface: Surface,
    pub duration: Duration,
    pub turns: u32,
}

impl Metrics {
    /// A recorder of its own (not the process-wide one), so several servers
    /// in one process keep separate counts.
    pub fn enabled() -> Metrics {
        let mut builder = PrometheusBuilder::new();
        for (name, buckets) in [
            (REQUEST_DURATION, DURATION_BUCKETS),
            (TIME_TO_FIRST_TOKEN, TTFT_BUCKETS),
            (CLIENT_OPERATION_DURATION, DURATION_BUCKETS),
            (CLIENT_TOKEN_USAGE, TOKEN_BUCKETS),
            (TOOL_DURATION, DURATION_BUCKETS),
            (TURNS, TURN_BUCKETS),
            (STORE_DURATION, STORE_BUCKETS),
        ] {
            builder = match builder.set_buckets_for_metric(Matcher::Full(name.to_owned()), buckets)
            {
                Ok(b) => b,
                // Only an empty bucket list is refused; ours are constants.
                Err(e) => unreachable!("bucket list for {name}: {e}"),
            };
        }
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        Metrics {
            inner: Some(Arc::new(Inner {
                recorder,
                handle,
                models: LabelCap::new(MAX_NAMES),
                tools: LabelCap::new(MAX_NAMES),
                cache: Cache::default(),
            })),
        }
    }

    pub fn disabled() -> Metrics {
        Metrics { inner: None }
    }

    pub fn from_config(config: &MetricsConfig) -> Metrics {
        if config.enabled {
            Metrics::enabled()
        } else {
            Metrics::disabled()
        }
    }

    /// Folds histogram samples into buckets every few seconds, so memory
    /// stays flat however rarely `/metrics` is scraped.
    pub(crate) fn spawn_upkeep(&self) -> Option<tokio::task::JoinHandle<()>> {
        let metrics = self.clone();
        self.is_enabled().then(|| {
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(UPKEEP_EVERY);
                loop {
                    tick.tick().await;
                    metrics.run_upkeep();
                }
            })
        })
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The bounded label value for a model name.
    pub(crate) fn model_label(&self, model: &str) -> Arc<str> {
        match &self.inner {
            Some(i) => i.models.get(model),
            None => Arc::from(""),
        }
    }

    /// One response ended (whatever its status).
    pub(crate) fn response_finished(&self, f: &Finished<'_>) {
        let Some(i) = &self.inner else { return };
        let key = (f.model.clone(), f.key.clone(), f.status, f.surface);
        let h = i.cache.responses.get(key, || {
            let labels = || {
                vec![
                    Label::new("gen_ai_request_model", f.model.to_string()),
                    Label::new("key", f.key.to_string()),
                    Label::new("status", f.status),
                    Label::new("surface", f.surface.as_str()),
                ]
            };
            let model = vec![Label::new("gen_ai_request_model", f.model.to_string())];
            ResponseHandles {
                count: i.counter(RESPONSES, labels()),
                duration: i.histogram(REQUEST_DURATION, labels()),
                turns: i.histogram(TURNS, model),
            }
        });
        h.count.increment(1);
        h.duration.record(f.duration.as_secs_f64());
        h.turns.record(f64::from(f.turns));
    }

    /// The first output token of a streamed response reached the client.
    pub(crate) fn first_token(&self, model: &Arc<str>, key: &Arc<str>, after: Duration) {
        let Some(i) = &self.inner else { return };
        let h = i.cache.first_token.get((model.clone(), key.clone()), || {
            let labels = vec![
                Label::new("gen_ai_request_model", model.to_string()),
                Label::new("key", key.to_string()),
            ];
            i.histogram(TIME_TO_FIRST_TOKEN, labels)
        });
        h.record(after.as_secs_f64());
    }

    /// One upstream call (a model turn) ended.
    pub(crate) fn turn_finished(&self, model: &Arc<str>, turn: &TurnReport) {
        let Some(i) = &self.inner else { return };
        let h = i.cache.turns.get((model.clone(), turn.error), || {
            let chat = || {
                vec![
                    Label::new("gen_ai_operation_name", "chat"),
                    Label::new("gen_ai_request_model", model.to_string()),
                ]
            };
            let mut labels = chat();
            if let Some(error) = turn.error {
                labels.push(Label::new("error_type", error));
            }
            let tokens = |kind: &'static str| {
                let mut labels = chat();
                labels.push(Label::new("gen_ai_token_type", kind));
                i.histogram(CLIENT_TOKEN_USAGE, labels)
            };
            TurnHandles {
                duration: i.histogram(CLIENT_OPERATION_DURATION, labels),
                input_tokens: tokens("input"),
                output_tokens: tokens("output"),
            }
        });
        h.duration.record(turn.duration.as_secs_f64());
        if let Some(u) = &turn.usage {
            h.input_tokens.record(u.input_tokens as f64);
            h.output_tokens.record(u.output_tokens as f64);
        }
    }

    /// A server-handled tool call ended (run, failed or denied).
    pub(crate) fn tool_finished(&self, call: &CallResult) {
        let Some(i) = &self.inner else { return };
        let tool = i.tools.get(&call.name);
        let outcome = call.outcome.as_str();
        let h = i.cache.tools.get((tool.clone(), outcome), || {
            let labels = vec![
                Label::new("gen_ai_tool_name", tool.to_string()),
                Label::new("outcome", outcome),
            ];
            i.histogram(TOOL_DURATION, labels)
        });
        h.record(call.duration.as_secs_f64());
    }

    /// One store operation took `took`.
    pub fn store_operation(&self, operation: &'static str, took: Duration) {
        let Some(i) = &self.inner else { return };
        let h = i.cache.store.get(operation, || {
            i.histogram(STORE_DURATION, vec![Label::new("operation", operation)])
        });
        h.record(took.as_secs_f64());
    }

    /// Sets a gauge to `value` (values read at scrape time).
    pub(crate) fn gauge(&self, name: &'static str, labels: Vec<Label>, value: f64) {
        let Some(i) = &self.inner else { return };
        let key = Key::from_parts(name, labels);
        i.recorder.register_gauge(&key, &META).set(value);
    }

    /// The Prometheus text exposition of everything recorded so far.
    pub(crate) fn render(&self) -> Option<String> {
        self.inner.as_ref().map(|i| i.handle.render())
    }

    /// Folds recorded histogram samples into their buckets. Run
    /// periodically so samples do not pile up between scrapes.
    pub fn run_upkeep(&self) {
        if let Some(i) = &self.inner {
            i.handle.run_upkeep();
        }
    }
}

impl Inner {
    fn counter(&self, name: &'static str, labels: Vec<Label>) -> metrics::Counter {
        self.recorder
            .register_counter(&Key::from_parts(name, labels), &META)
    }

    fn histogram(&self, name: &'static str, labels: Vec<Label>) -> metrics::Histogram {
        self.recorder
            .register_histogram(&Key::from_parts(name, labels), &META)
    }
}
