//! Ingestion survives the process: a server killed (SIGKILL) mid-file, or
//! stopped (SIGTERM) while files are being embedded, leaves every file
//! `in_progress` and claimable, never half-indexed; the next server takes
//! them and every file ends `completed` or `failed`. The embedding upstream
//! is held (the stand-in hangs) so ingestion is surely mid-file.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use crate::fake_embed::FakeEmbed;
use crate::support::{config, databases, As, Server};

fn settings(embed: &FakeEmbed) -> std::path::PathBuf {
    config(&format!(
        "[[upstreams]]\nname = \"embedder\"\nurl = \"{}\"\n\
         [retrieval]\nembedding_model = \"mini\"\nlease_secs = 1\npoll_secs = 1\ndrain_secs = 1\n",
        embed.url()
    ))
}

/// Uploads three files into a new store; the store and file ids.
async fn three_files(me: &As<'_>) -> (String, Vec<String>) {
    let mut files = Vec::new();
    for (name, text) in [
        ("a.txt", "alpha apples"),
        ("b.txt", "beta bananas"),
        ("c.txt", "gamma grapes"),
    ] {
        files.push(me.upload_file(name, text.as_bytes()).await);
    }
    let (status, store) = me
        .post("/v1/vector_stores", &json!({"file_ids": files}))
        .await;
    assert_eq!(status, 200, "{store}");
    (store["id"].as_str().unwrap().to_owned(), files)
}

/// Waits until the held embedding upstream has been asked (a file is mid-ingestion).
async fn until_embedding_starts(embed: &FakeEmbed) {
    for _ in 0..400 {
        if embed.requests.load(Ordering::SeqCst) > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("ingestion never reached the embedding upstream");
}

async fn assert_in_progress_without_chunks(me: &As<'_>, vs: &str, files: &[String]) {
    for f in files {
        let (_, file) = me.get(&format!("/v1/vector_stores/{vs}/files/{f}")).await;
        assert_eq!(file["status"], "in_progress", "{file}");
        let (_, chunks) = me
            .get(&format!("/v1/vector_stores/{vs}/files/{f}/content"))
            .await;
        assert_eq!(chunks["data"], json!([]), "half-indexed: {chunks}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_ingestion_leaves_nothing_stuck() {
    for db in databases().await {
        let embed = FakeEmbed::start().await;
        embed.stall.store(true, Ordering::SeqCst);
        let cfg = settings(&embed);
        let mut server = Server::start(&db, Some(&cfg)).await;
        let (vs, files) = three_files(&server.me()).await;
        until_embedding_starts(&embed).await;
        server.kill();

        let server = Server::start(&db, Some(&cfg)).await;
        let me = server.me();
        assert_in_progress_without_chunks(&me, &vs, &files).await;
        embed.stall.store(false, Ordering::SeqCst);
        for f in &files {
            let file = me.settled(&vs, f).await;
            assert_eq!(file["status"], "completed", "{file}");
        }
        let (_, store) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(store["file_counts"]["completed"], 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_server_leaves_unfinished_files_claimable() {
    for db in databases().await {
        let embed = FakeEmbed::start().await;
        embed.stall.store(true, Ordering::SeqCst);
        let cfg = settings(&embed);
        let mut server = Server::start(&db, Some(&cfg)).await;
        let (vs, files) = three_files(&server.me()).await;
        until_embedding_starts(&embed).await;
        // SIGTERM: the worker waits `drain_secs`, stops the held files and
        // releases their claims; the process exits.
        server.terminate().await;

        let server = Server::start(&db, Some(&cfg)).await;
        let me = server.me();
        assert_in_progress_without_chunks(&me, &vs, &files).await;
        embed.stall.store(false, Ordering::SeqCst);
        for f in &files {
            assert_eq!(me.settled(&vs, f).await["status"], "completed");
        }
    }
}
