//! The scenarios, and the direct/Windlass alternation they share.

pub(crate) mod agent_loop;
pub(crate) mod chain;
pub(crate) mod idle;
pub(crate) mod json;
pub(crate) mod parallel_tools;
pub(crate) mod payload;
pub(crate) mod stream;

use std::future::Future;
use std::time::Duration;

use serde_json::{json, Value};

use crate::env::Bench;
use crate::load::{run_phase, Phase, Sample};
use crate::report::progress;
use crate::report::Row;
use crate::settings::Settings;
use crate::stats::{median, Dist};

pub(crate) const MODEL: &str = "fake-model";

/// Sends one request through Windlass and checks the response is what the
/// scenario expects (so a broken setup fails loudly instead of timing errors).
pub(crate) async fn check_windlass(bench: &Bench, body: &Value) -> Result<Value, String> {
    let resp = bench
        .client
        .post(&*bench.windlass_url)
        .json(body)
        .send()
        .await
        .map_err(|e| format!("windlass request: {e}"))?;
    let status = resp.status();
    let text = resp.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("windlass answered {status}: {text}"));
    }
    serde_json::from_str(&text).map_err(|e| format!("windlass body: {e}: {text}"))
}

/// What a scenario hands back: its table rows and its raw details (JSON).
pub(crate) type Outcome = Result<(Vec<Row>, Value), String>;

/// The phases of both modes, round by round.
pub(crate) struct Rounds {
    pub direct: Vec<Phase>,
    pub windlass: Vec<Phase>,
}

/// Direct then Windlass, `rounds` times, after one warm-up phase of each.
pub(crate) async fn alternate<FD, FutD, FW, FutW>(
    label: &str,
    s: &Settings,
    concurrency: usize,
    duration: Duration,
    direct: FD,
    windlass: FW,
) -> Result<Rounds, String>
where
    FD: Fn() -> FutD + Clone + Send + Sync + 'static,
    FutD: Future<Output = Sample> + Send + 'static,
    FW: Fn() -> FutW + Clone + Send + Sync + 'static,
    FutW: Future<Output = Sample> + Send + 'static,
{
    let warm_d = run_phase(concurrency, s.warmup, direct.clone()).await;
    let warm_w = run_phase(concurrency, s.warmup, windlass.clone()).await;
    if warm_d.count() == 0 || warm_w.count() == 0 {
        return Err(format!(
            "{label}: warm-up failed (direct {} ok / {} errors, windlass {} ok / {} errors)",
            warm_d.count(),
            warm_d.errors,
            warm_w.count(),
            warm_w.errors
        ));
    }
    let mut r = Rounds {
        direct: Vec::new(),
        windlass: Vec::new(),
    };
    for round in 1..=s.rounds {
        for is_windlass in [false, true] {
            let phase = if is_windlass {
                run_phase(concurrency, duration, windlass.clone()).await
            } else {
                run_phase(concurrency, duration, direct.clone()).await
            };
            progress(format!(
                "  {label} round {round}/{} {:8}: {:6} ok, {} errors, {:8.1}/s, p50 {:.3} ms, cpu {:.0} ms (windlass threads {:.0} ms)",
                s.rounds,
                if is_windlass { "windlass" } else { "direct" },
                phase.count(),
                phase.errors,
                phase.rate(),
                Dist::of(phase.ok().map(|x| x.total_ms)).p50,
                phase.cpu_process.as_secs_f64() * 1000.0,
                phase.cpu_windlass.as_secs_f64() * 1000.0,
            ));
            if phase.count() == 0 {
                return Err(format!("{label}: no successful request in a phase"));
            }
            if is_windlass {
                r.windlass.push(phase);
            } else {
                r.direct.push(phase);
            }
        }
    }
    Ok(r)
}

impl Rounds {
    fn phases(&self, windlass: bool) -> &[Phase] {
        if windlass {
            &self.windlass
        } else {
            &self.direct
        }
    }

    /// Distribution of `f` over every successful sample of every round.
    pub(crate) fn pooled(&self, windlass: bool, f: impl Fn(&Sample) -> f64) -> Dist {
        Dist::of(self.phases(windlass).iter().flat_map(|p| p.ok()).map(f))
    }

    pub(crate) fn errors(&self, windlass: bool) -> usize {
        self.phases(windlass).iter().map(|p| p.errors).sum()
    }

    /// Median over rounds of successful requests per second.
    pub(crate) fn rate(&self, windlass: bool) -> f64 {
        median(self.phases(windlass).iter().map(Phase::rate))
    }

    /// Median over rounds of the process's peak RSS during a phase, MiB.
    pub(crate) fn rss_peak_mib(&self, windlass: bool) -> f64 {
        median(
            self.phases(windlass)
                .iter()
                .map(|p| p.rss_peak as f64 / (1024.0 * 1024.0)),
        )
    }

    /// Median over rounds of events delivered per second.
    pub(crate) fn event_rate(&self, windlass: bool) -> f64 {
        median(
            self.phases(windlass)
                .iter()
                .map(|p| p.events() as f64 / p.wall.as_secs_f64()),
        )
    }

    /// Windlass CPU per unit (µs), subtraction method: per round, process
    /// CPU per unit in the Windlass phase minus the same in the direct phase;
    /// median over rounds. `units` counts requests or events of a phase.
    pub(crate) fn cpu_subtraction_us(&self, units: impl Fn(&Phase) -> f64) -> f64 {
        median(self.direct.iter().zip(&self.windlass).map(|(d, w)| {
            let per_w = w.cpu_process.as_secs_f64() / units(w);
            let per_d = d.cpu_process.as_secs_f64() / units(d);
            (per_w - per_d) * 1e6
        }))
    }

    /// Windlass CPU per unit (µs), thread method: CPU of the Windlass
    /// runtime threads in the Windlass phase; median over rounds.
    pub(crate) fn cpu_threads_us(&self, units: impl Fn(&Phase) -> f64) -> f64 {
        median(
            self.windlass
                .iter()
                .map(|w| w.cpu_windlass.as_secs_f64() / units(w) * 1e6),
        )
    }

    /// Context switches of the Windlass threads per unit, median over rounds.
    pub(crate) fn switches_per(&self, units: impl Fn(&Phase) -> f64) -> f64 {
        median(
            self.windlass
                .iter()
                .map(|w| w.context_switches as f64 / units(w)),
        )
    }

    /// The Windlass threads' CPU during the direct phases (should be ~0: a
    /// sanity check that attribution works).
    pub(crate) fn idle_windlass_cpu_ms(&self) -> f64 {
        median(
            self.direct
                .iter()
                .map(|d| d.cpu_windlass.as_secs_f64() * 1000.0),
        )
    }

    /// Per-round raw figures for the JSON details.
    pub(crate) fn details(&self) -> Value {
        let phase = |p: &Phase| {
            let total = Dist::of(p.ok().map(|x| x.total_ms));
            json!({
                "ok": p.count(),
                "errors": p.errors,
                "wall_s": p.wall.as_secs_f64(),
                "rate_per_s": p.rate(),
                "events": p.events(),
                "cpu_process_ms": p.cpu_process.as_secs_f64() * 1000.0,
                "cpu_windlass_threads_ms": p.cpu_windlass.as_secs_f64() * 1000.0,
                "windlass_context_switches": p.context_switches,
                "rss_peak_bytes": p.rss_peak,
                "total_ms": total,
            })
        };
        json!({
            "direct": self.direct.iter().map(phase).collect::<Vec<_>>(),
            "windlass": self.windlass.iter().map(phase).collect::<Vec<_>>(),
        })
    }
}

/// Requests of a phase, as a CPU divisor.
pub(crate) fn requests(p: &Phase) -> f64 {
    p.count().max(1) as f64
}

/// SSE events of a phase, as a CPU divisor.
pub(crate) fn events(p: &Phase) -> f64 {
    p.events().max(1) as f64
}

/// Latency rows (p50, p99) comparing both modes on `f`.
pub(crate) fn latency_rows(
    scenario: &'static str,
    what: &str,
    r: &Rounds,
    f: impl Fn(&Sample) -> f64 + Copy,
) -> (Row, Row) {
    let d = r.pooled(false, f);
    let w = r.pooled(true, f);
    (
        Row::compare(scenario, &format!("{what} p50"), "ms", d.p50, w.p50),
        Row::compare(scenario, &format!("{what} p99"), "ms", d.p99, w.p99),
    )
}

/// How many items of `kind` a response's `output` holds.
pub(crate) fn count_output(response: &Value, kind: &str) -> usize {
    response["output"]
        .as_array()
        .map_or(0, |o| o.iter().filter(|i| i["type"] == kind).count())
}
