//! The resource APIs through the real `windlass` binary (`serve` with its
//! ingestion worker): files, vector stores, containers, embeddings,
//! ingestion across restarts and replicas. Every test runs on a SQLite
//! file and, when `WINDLASS_TEST_PG` is set (`scripts/postgres.sh`), on
//! Postgres too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod containers;
mod embeddings;
mod expiry;
mod fake_embed;
mod files;
mod measure;
#[path = "../common/ports.rs"]
mod ports;
mod replicas;
mod restart;
mod search_latency;
mod support;
mod vector_stores;
