//! N concurrent idle streams: resident memory per open stream.
//!
//! The upstream sends its first chunk (the role chunk) and then nothing,
//! forever. A phase opens N streams (direct: to the upstream; Windlass: to
//! `/v1/responses` with `stream: true`, which holds one upstream stream
//! each), waits until every one has delivered its first bytes and the
//! upstream has seen all N requests, and reads VmRSS (after `malloc_trim`)
//! and the live heap bytes before and after. Windlass's share per stream is
//! (Windlass phase delta - direct phase delta) / N: both phases hold the
//! same client-side and upstream-side state.
//!
//! Closing: the client drops every stream; the phase then waits for the
//! upstream to see its N streams abandoned (Windlass must cancel the upstream
//! call when its client leaves), and cancels leftovers through
//! `POST /v1/responses/{id}/cancel` so the next phase starts clean.

use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::CONTENT_TYPE;
use serde_json::json;
use windlass_testkit::Reply;

use super::{Outcome, MODEL};
use crate::env::Bench;
use crate::measure::{heap_counting_start, heap_counting_stop, heap_live, rss_bytes, trim_heap};
use crate::report::progress;
use crate::report::Row;
use crate::settings::Settings;
use crate::stats::median;

type Body = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Streams opened at once (keeps the listen backlogs from overflowing).
const BATCH: usize = 100;

#[derive(Debug, Clone, Copy, serde::Serialize)]
struct MemPhase {
    opened: usize,
    rss_delta: i64,
    heap_delta: i64,
    /// Upstream streams seen abandoned within the timeout after the client left.
    released: usize,
    /// Time to release all streams after the client left (or the timeout).
    release_ms: f64,
    /// Responses cancelled through the API because they were still running.
    cancelled_via_api: usize,
    /// Upstream streams released once those were cancelled (checks that the
    /// upstream does count Windlass's abandoned streams).
    released_after_cancel: usize,
    open_ms: f64,
}

/// Opens one stream and reads its first chunk; returns the body and the
/// response id when the first chunk names one.
async fn open_one(client: reqwest::Client, url: Arc<str>, body: Bytes) -> Option<(Body, String)> {
    let resp = client
        .post(&*url)
        .header(CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let mut stream: Body = Box::pin(resp.bytes_stream());
    let first = stream.next().await?.ok()?;
    let text = String::from_utf8_lossy(&first);
    let id = text
        .find("\"id\":\"resp")
        .and_then(|i| {
            let rest = &text[i + 6..];
            rest.find('"').map(|e| rest[..e].to_owned())
        })
        .unwrap_or_default();
    Some((stream, id))
}

async fn phase(bench: &Bench, s: &Settings, n: usize, windlass: bool) -> Result<MemPhase, String> {
    let (url, body) = if windlass {
        (
            bench.windlass_url.clone(),
            json!({"model": MODEL, "input": "Wait.", "stream": true, "store": false}),
        )
    } else {
        (
            bench.direct_url.clone(),
            json!({"model": MODEL, "messages": [{"role": "user", "content": "Wait."}], "stream": true, "stream_options": {"include_usage": true}}),
        )
    };
    let body = Bytes::from(body.to_string());
    tokio::time::sleep(Duration::from_millis(200)).await;
    trim_heap();
    let rss0 = rss_bytes();
    heap_counting_start();
    let requests0 = bench.upstream.request_count();
    let disconnects0 = bench.upstream.disconnects();

    let started = Instant::now();
    let mut open: Vec<(Body, String)> = Vec::with_capacity(n);
    let mut failures = 0;
    while open.len() + failures < n {
        let batch = BATCH.min(n - open.len() - failures);
        let tasks: Vec<_> = (0..batch)
            .map(|_| tokio::spawn(open_one(bench.client.clone(), url.clone(), body.clone())))
            .collect();
        for t in tasks {
            match t.await {
                Ok(Some(s)) => open.push(s),
                _ => failures += 1,
            }
        }
    }
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    if failures > 0 {
        heap_counting_stop();
        return Err(format!("{failures} of {n} idle streams failed to open"));
    }
    if !bench
        .upstream
        .wait_for_requests(requests0 + n, Duration::from_secs(30))
        .await
    {
        heap_counting_stop();
        return Err("the upstream did not see every idle stream".into());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    trim_heap();
    let rss1 = rss_bytes();
    let heap1 = heap_live();
    heap_counting_stop();

    let ids: Vec<String> = open.iter().map(|(_, id)| id.clone()).collect();
    let closed = Instant::now();
    drop(open);
    let all_released = bench
        .upstream
        .wait_for_disconnects(disconnects0 + n, s.release_timeout)
        .await;
    let release_ms = closed.elapsed().as_secs_f64() * 1000.0;
    let released = bench.upstream.disconnects().saturating_sub(disconnects0);
    let mut cancelled_via_api = 0;
    if !all_released && windlass {
        // Clean up what Windlass left running, so the next phase starts clean.
        let base = bench.windlass_url.clone();
        let tasks: Vec<_> = ids
            .into_iter()
            .filter(|id| !id.is_empty())
            .map(|id| {
                let client = bench.client.clone();
                let url = format!("{base}/{id}/cancel");
                tokio::spawn(async move {
                    client
                        .post(url)
                        .send()
                        .await
                        .map(|r| r.status().is_success())
                        .unwrap_or(false)
                })
            })
            .collect();
        for t in tasks {
            if matches!(t.await, Ok(true)) {
                cancelled_via_api += 1;
            }
        }
        bench
            .upstream
            .wait_for_disconnects(disconnects0 + n, Duration::from_secs(10))
            .await;
    }
    let released_after_cancel = bench.upstream.disconnects().saturating_sub(disconnects0);
    Ok(MemPhase {
        opened: n,
        rss_delta: rss1 as i64 - rss0 as i64,
        heap_delta: heap1 as i64,
        released,
        release_ms,
        cancelled_via_api,
        released_after_cancel,
        open_ms,
    })
}

pub(crate) async fn run(bench: &Bench, s: &Settings) -> Outcome {
    bench
        .upstream
        .set_default(Reply::text("This stream never ends.").stall_after(1));
    let n = s.idle_streams;
    let mut direct = Vec::new();
    let mut windlass = Vec::new();
    for round in 1..=s.rounds {
        for w in [false, true] {
            let p = phase(bench, s, n, w).await?;
            progress(format!(
                "  idle round {round}/{} {:8}: {} streams open in {:.0} ms, RSS +{:.1} MiB, heap +{:.1} MiB, released {}/{} in {:.0} ms{}",
                s.rounds,
                if w { "windlass" } else { "direct" },
                p.opened,
                p.open_ms,
                p.rss_delta as f64 / 1048576.0,
                p.heap_delta as f64 / 1048576.0,
                p.released,
                n,
                p.release_ms,
                if p.cancelled_via_api > 0 {
                    format!(
                        ", {} cancelled via the API, then {} released",
                        p.cancelled_via_api, p.released_after_cancel
                    )
                } else {
                    String::new()
                }
            ));
            if w {
                windlass.push(p);
            } else {
                direct.push(p);
            }
        }
    }
    let kib = |v: i64| v as f64 / 1024.0 / n as f64;
    let rss_d = median(direct.iter().map(|p| kib(p.rss_delta)));
    let rss_w = median(windlass.iter().map(|p| kib(p.rss_delta)));
    let heap_d = median(direct.iter().map(|p| kib(p.heap_delta)));
    let heap_w = median(windlass.iter().map(|p| kib(p.heap_delta)));
    let released_w = windlass.iter().map(|p| p.released).min().unwrap_or(0);
    let release_ms_w = median(windlass.iter().map(|p| p.release_ms));
    let rows = vec![
        Row::compare(
            "idle",
            &format!("RSS per open stream ({n} streams)"),
            "KiB",
            rss_d,
            rss_w,
        )
        .target_max(100.0),
        Row::compare("idle", "live heap per open stream", "KiB", heap_d, heap_w),
        Row::value(
            "idle",
            "upstream streams released after client left",
            "count",
            released_w as f64,
        ),
        Row::value("idle", "time to release them", "ms", release_ms_w),
    ];
    let details = json!({
        "streams": n,
        "direct": direct,
        "windlass": windlass,
        "note": "direct column: client + upstream state per stream; windlass column: the same plus Windlass; added: Windlass alone",
    });
    Ok((rows, details))
}
