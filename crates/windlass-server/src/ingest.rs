//! The background ingestion worker: claims files attached to vector stores
//! (of every tenant) and runs the `Ingestor` on them, a few at a time; and
//! sweeps expiry: idle containers, and vector stores whose `expires_after`
//! has passed (marked `expired`, their chunks deleted), every
//! `[retrieval] expiry_sweep_secs`, across tenants. Every replica sweeps;
//! the store makes each expiry happen once.
//!
//! - Claims are leases (`[retrieval] lease_secs`), renewed while a file is
//!   worked on. A process that dies mid-file leaves the file `in_progress`
//!   with a lease that runs out; the next claim, by any replica or by this
//!   server after a restart, takes it again. At start the worker claims at
//!   once, so files a previous process left are picked up as soon as their
//!   lease ends.
//! - Bounded: at most `[retrieval] ingest_concurrency` files at once.
//! - Woken when files are attached on this replica; otherwise it looks for
//!   pending files every `poll_secs` (files attached on another replica).
//! - Draining (the server stops): no new claims; files in progress get
//!   `drain` to finish, then are stopped and their claims released, so the
//!   next process takes them at once. Outcomes are written in one
//!   transaction (`finish_ingestion`): a file is completed, failed, or
//!   still `in_progress` and claimable, never half-indexed.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use windlass_engine::IngestionJob;
use windlass_retrieval::{Ingested, Ingestor};

use crate::resources::{now_secs, Resources};

/// Runs until `stop` is cancelled, then drains.
pub async fn run(res: Arc<Resources>, replica: String, stop: CancellationToken) {
    let worker = format!("{replica}-ingest");
    let cfg = res.ingest.clone();
    let ingestor = res.ingestor();
    let lease_secs = cfg.lease.as_secs().max(1);
    let slots = cfg.concurrency.max(1);
    let mut running = JoinSet::new();
    let mut renew = tokio::time::interval((cfg.lease / 3).max(Duration::from_millis(200)));
    let mut poll = tokio::time::interval(cfg.poll.max(Duration::from_millis(50)));
    let mut expiry = tokio::time::interval(cfg.expiry_sweep.max(Duration::from_millis(100)));
    loop {
        if running.len() < slots {
            claim(
                &res,
                &ingestor,
                &worker,
                lease_secs,
                slots - running.len(),
                &mut running,
            )
            .await;
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = res.attached.notified() => {}
            Some(_) = running.join_next(), if !running.is_empty() => {}
            _ = poll.tick() => {}
            _ = renew.tick() => {
                if !running.is_empty() {
                    renew_claims(&res, &worker, lease_secs).await;
                }
            }
            _ = expiry.tick() => {
                expire_containers(&res).await;
                expire_vector_stores(&res).await;
            }
        }
    }
    drain(&res, &worker, lease_secs, cfg.drain, running).await;
}

/// Claims up to `free` files and starts them.
async fn claim(
    res: &Resources,
    ingestor: &Ingestor,
    worker: &str,
    lease_secs: u64,
    free: usize,
    running: &mut JoinSet<()>,
) {
    let jobs = match res
        .vector_stores
        .claim_ingestions(worker, now_secs(), lease_secs, free)
        .await
    {
        Ok(jobs) => jobs,
        Err(e) => {
            tracing::warn!(error = %e, "cannot claim files to ingest");
            return;
        }
    };
    for job in jobs {
        let ingestor = ingestor.clone();
        running.spawn(async move { ingest_one(&ingestor, job).await });
    }
}

async fn ingest_one(ingestor: &Ingestor, job: IngestionJob) {
    let (store, file) = (&job.vector_store_id, &job.file_id);
    match ingestor.ingest(&job).await {
        Ok(Ingested::Completed { chunks }) => {
            tracing::info!(vector_store = %store, file = %file, chunks, "file ingested");
        }
        Ok(Ingested::Failed(e)) => {
            tracing::info!(vector_store = %store, file = %file, code = ?e.code, error = %e.message, "file ingestion failed");
        }
        Ok(Ingested::Dropped) => {
            tracing::debug!(vector_store = %store, file = %file, "file detached or cancelled during ingestion");
        }
        // The store failed: the file stays `in_progress` and is claimed
        // again when the lease ends.
        Err(e) => {
            tracing::warn!(vector_store = %store, file = %file, error = %e, "cannot write ingestion outcome")
        }
    }
}

async fn renew_claims(res: &Resources, worker: &str, lease_secs: u64) {
    let until = now_secs().saturating_add(lease_secs);
    if let Err(e) = res
        .vector_stores
        .renew_ingestion_claims(worker, until)
        .await
    {
        tracing::warn!(error = %e, "cannot renew ingestion claims");
    }
}

async fn expire_containers(res: &Resources) {
    match res.containers.expire_containers(now_secs()).await {
        Ok(expired) if !expired.is_empty() => {
            tracing::info!(count = expired.len(), "containers expired");
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot expire containers"),
    }
}

async fn expire_vector_stores(res: &Resources) {
    match res.vector_stores.expire_vector_stores(now_secs()).await {
        Ok(expired) => {
            for store in &expired {
                tracing::info!(tenant = %store.tenant, vector_store = %store.id, "vector store expired; its chunks were deleted");
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot expire vector stores"),
    }
}

/// Lets files in progress finish within `grace`; stops the rest and
/// releases their claims (a lease ending now) for the next process.
async fn drain(
    res: &Resources,
    worker: &str,
    lease_secs: u64,
    grace: Duration,
    mut running: JoinSet<()>,
) {
    if running.is_empty() {
        return;
    }
    tracing::info!(files = running.len(), "draining ingestion");
    let finished = tokio::time::timeout(grace, async {
        let mut renew = tokio::time::interval(Duration::from_secs(lease_secs.max(3) / 3));
        loop {
            tokio::select! {
                next = running.join_next() => if next.is_none() { break },
                _ = renew.tick() => renew_claims(res, worker, lease_secs).await,
            }
        }
    })
    .await;
    if finished.is_err() {
        running.abort_all();
        while running.join_next().await.is_some() {}
        if let Err(e) = res.vector_stores.renew_ingestion_claims(worker, 0).await {
            tracing::warn!(error = %e, "cannot release ingestion claims; they end with their lease");
        }
        tracing::info!("ingestion stopped; unfinished files left claimable");
    }
}
