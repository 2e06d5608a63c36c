//! Two `windlass serve` processes on one Postgres database: a file
//! uploaded and attached on one is ingested (by either worker) and listed,
//! read and searched on the other. Skipped without `WINDLASS_TEST_PG`.

use serde_json::json;

use crate::support::{pg_schema_url, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_on_one_replica_search_on_the_other() {
    let Some(db) = pg_schema_url().await else {
        eprintln!("WINDLASS_TEST_PG is not set: skipping (scripts/postgres.sh sets it)");
        return;
    };
    let (a, b) = tokio::join!(Server::start(&db, None), Server::start(&db, None));
    let (on_a, on_b) = (a.me(), b.me());
    let file = on_a
        .upload_file(
            "handbook.md",
            b"# Handbook\n\nThe lighthouse keeper winds the clock every Sunday.\n",
        )
        .await;
    let (status, store) = on_a
        .post(
            "/v1/vector_stores",
            &json!({"name": "shared", "file_ids": [file]}),
        )
        .await;
    assert_eq!(status, 200, "{store}");
    let vs = store["id"].as_str().unwrap();

    assert_eq!(on_b.settled(vs, &file).await["status"], "completed");
    let (_, files) = on_b.get("/v1/files").await;
    assert_eq!(files["data"][0]["id"], file.as_str());
    let (_, bytes) = on_b.get_bytes(&format!("/v1/files/{file}/content")).await;
    assert!(String::from_utf8_lossy(&bytes).contains("lighthouse keeper"));
    let (status, found) = on_b
        .post(
            &format!("/v1/vector_stores/{vs}/search"),
            &json!({"query": "who winds the clock?"}),
        )
        .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["data"][0]["file_id"], file.as_str());
    // And a store made on B is searched on A.
    let (_, other) = on_b
        .post("/v1/vector_stores", &json!({"file_ids": [file]}))
        .await;
    let other = other["id"].as_str().unwrap();
    on_a.settled(other, &file).await;
    let (_, found) = on_a
        .post(
            &format!("/v1/vector_stores/{other}/search"),
            &json!({"query": "lighthouse"}),
        )
        .await;
    assert_eq!(found["data"][0]["filename"], "handbook.md");
}
