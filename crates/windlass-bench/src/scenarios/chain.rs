//! `previous_response_id` chain: the time to load a history of depth N
//! (`ResponseStore::load_context` called directly, on Windlass's runtime),
//! and the end-to-end latency of a request continuing a chain of depth N
//! against one with no history — each against the direct request carrying
//! the same transcript as `messages`.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};
use windlass_engine::{NewResponse, ResponseStore, DEFAULT_TENANT};
use windlass_testkit::Reply;

use super::{alternate, check_windlass, Outcome, Rounds, MODEL};
use crate::env::Bench;
use crate::load::{ms, post_json};
use crate::report::progress;
use crate::report::Row;
use crate::settings::Settings;
use crate::stats::Dist;

const ANSWER: &str = "Noted.";

fn message(i: usize) -> String {
    format!("This is message number {i} of a long conversation.")
}

/// `iters` calls of `load_context(id)` on Windlass's runtime: (timings in ms, items).
async fn load_context_times(
    bench: &Bench,
    id: &str,
    iters: usize,
) -> Result<(Dist, usize), String> {
    let store: Arc<dyn ResponseStore> = bench.store.clone();
    let id = id.to_owned();
    bench
        .wl
        .spawn(async move {
            let mut times = Vec::with_capacity(iters);
            let mut items = 0;
            for _ in 0..iters {
                let t = Instant::now();
                let ctx = store
                    .load_context(DEFAULT_TENANT, &id)
                    .await
                    .map_err(|e| format!("load_context: {e}"))?
                    .ok_or("load_context: unknown id")?;
                times.push(ms(t.elapsed()));
                items = ctx.len();
            }
            Ok::<_, String>((Dist::of(times), items))
        })
        .await
        .map_err(|e| format!("load_context task: {e}"))?
}

/// `iters` calls of `save` on Windlass's runtime, re-saving the stored
/// response `template_id` (same input, output and `previous_response_id`)
/// under fresh ids, one at a time: the persistence step each stored
/// response pays before its terminal event. Timings in ms.
pub(crate) async fn save_times(
    bench: &Bench,
    template_id: &str,
    iters: usize,
) -> Result<Dist, String> {
    let store: Arc<dyn ResponseStore> = bench.store.clone();
    let id = template_id.to_owned();
    bench
        .wl
        .spawn(async move {
            let mut resource = store
                .get(DEFAULT_TENANT, &id)
                .await
                .map_err(|e| format!("get: {e}"))?
                .ok_or("get: unknown id")?;
            let ctx = store
                .load_context(DEFAULT_TENANT, &id)
                .await
                .map_err(|e| format!("load_context: {e}"))?
                .ok_or("load_context: unknown id")?;
            // The bench's requests carry exactly one input item.
            let out = resource.output.len();
            let input = ctx[ctx.len() - out - 1..ctx.len() - out].to_vec();
            let mut times = Vec::with_capacity(iters);
            for i in 0..iters {
                resource.id = format!("{id}_bench{i}");
                let t = Instant::now();
                store
                    .save(NewResponse {
                        tenant: DEFAULT_TENANT,
                        response: &resource,
                        input: &input,
                        trace: None,
                    })
                    .await
                    .map_err(|e| format!("save: {e}"))?;
                times.push(ms(t.elapsed()));
            }
            Ok::<_, String>(Dist::of(times))
        })
        .await
        .map_err(|e| format!("save task: {e}"))?
}

async fn e2e(
    bench: &Bench,
    s: &Settings,
    label: &str,
    direct_body: Value,
    wl_body: Value,
) -> Result<Rounds, String> {
    let (client, url, body) = (
        bench.client.clone(),
        bench.direct_url.clone(),
        Bytes::from(direct_body.to_string()),
    );
    let direct = move || post_json(client.clone(), url.clone(), body.clone());
    let (client, url, body) = (
        bench.client.clone(),
        bench.windlass_url.clone(),
        Bytes::from(wl_body.to_string()),
    );
    let windlass = move || post_json(client.clone(), url.clone(), body.clone());
    alternate(label, s, 1, s.duration / 2, direct, windlass).await
}

pub(crate) async fn run(bench: &Bench, s: &Settings) -> Outcome {
    bench.upstream.set_default(Reply::text(ANSWER));
    let depth = s.chain_depth;

    progress(format!("  building a chain of {depth} stored responses"));
    let built = Instant::now();
    let mut ids: Vec<String> = Vec::with_capacity(depth);
    for i in 0..depth {
        let mut body = json!({"model": MODEL, "input": message(i), "store": true});
        if let Some(prev) = ids.last() {
            body["previous_response_id"] = Value::String(prev.clone());
        }
        let v = check_windlass(bench, &body).await?;
        let id = v["id"].as_str().ok_or("response without id")?.to_owned();
        ids.push(id);
    }
    let build_time = built.elapsed();
    let last = ids.last().cloned().ok_or("empty chain")?;

    let (ctx_n, items_n) = load_context_times(bench, &last, s.load_context_iters).await?;
    let (ctx_1, items_1) = load_context_times(bench, &ids[0], s.load_context_iters).await?;
    let save_n = save_times(bench, &last, s.load_context_iters).await?;
    progress(format!(
        "  load_context: depth {depth} ({items_n} items) p50 {:.3} ms, depth 1 ({items_1} items) p50 {:.3} ms; save at depth {depth} p50 {:.3} ms",
        ctx_n.p50, ctx_1.p50, save_n.p50
    ));

    let next = "And now the next question.";
    let wl0 = json!({"model": MODEL, "input": next, "store": true});
    let d0 = json!({"model": MODEL, "messages": [{"role": "user", "content": next}]});
    let wln = json!({"model": MODEL, "input": next, "store": true, "previous_response_id": last});
    let mut messages: Vec<Value> = Vec::with_capacity(2 * depth + 1);
    for i in 0..depth {
        messages.push(json!({"role": "user", "content": message(i)}));
        messages.push(json!({"role": "assistant", "content": ANSWER}));
    }
    messages.push(json!({"role": "user", "content": next}));
    let dn = json!({"model": MODEL, "messages": messages});

    let r0 = e2e(bench, s, "chain-depth-0", d0, wl0).await?;
    let rn = e2e(bench, s, &format!("chain-depth-{depth}"), dn, wln).await?;

    let lat = |r: &Rounds, w: bool| r.pooled(w, |x| x.total_ms);
    let (d0p, w0p, dnp, wnp) = (
        lat(&r0, false),
        lat(&r0, true),
        lat(&rn, false),
        lat(&rn, true),
    );
    let rows = vec![
        Row::value(
            "chain",
            &format!("load_context depth {depth} ({items_n} items) p50"),
            "ms",
            ctx_n.p50,
        )
        .target_max(10.0),
        Row::value(
            "chain",
            &format!("load_context depth {depth} p99"),
            "ms",
            ctx_n.p99,
        ),
        Row::value(
            "chain",
            &format!("load_context depth 1 ({items_1} items) p50"),
            "ms",
            ctx_1.p50,
        ),
        Row::value(
            "chain",
            &format!("store.save at depth {depth} p50 (direct call)"),
            "ms",
            save_n.p50,
        ),
        Row::compare(
            "chain",
            "request latency depth 0 p50",
            "ms",
            d0p.p50,
            w0p.p50,
        ),
        Row::compare(
            "chain",
            &format!("request latency depth {depth} p50"),
            "ms",
            dnp.p50,
            wnp.p50,
        ),
        Row::compare(
            "chain",
            &format!("request latency depth {depth} p99"),
            "ms",
            dnp.p99,
            wnp.p99,
        ),
        Row::overhead(
            "chain",
            &format!("history cost at depth {depth} p50"),
            "ms",
            (wnp.p50 - dnp.p50) - (w0p.p50 - d0p.p50),
        ),
    ];
    let details = json!({
        "depth": depth,
        "chain_build_s": build_time.as_secs_f64(),
        "load_context_ms": {
            "depth_n": ctx_n, "items_n": items_n,
            "depth_1": ctx_1, "items_1": items_1,
            "iterations": s.load_context_iters,
        },
        "save_ms_depth_n": save_n,
        "e2e_ms": {
            "depth_0": {"direct": d0p, "windlass": w0p},
            "depth_n": {"direct": dnp, "windlass": wnp},
        },
        "rounds_depth_0": r0.details(),
        "rounds_depth_n": rn.details(),
        "phase_s": (s.duration / 2).as_secs_f64(),
        "note": "e2e phases run one request at a time (concurrency 1) with no upstream delay",
    });
    Ok((rows, details))
}
