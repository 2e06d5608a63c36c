//! Vector store `description` and expiry through the real binary: a store
//! created with `expires_after` is pushed past its day (its
//! `last_active_at` moved back in the database, the one thing a test cannot
//! wait for), and the server's own expiry sweep (`expiry_sweep_secs = 1`)
//! marks it `expired` and deletes its chunks, on SQLite and Postgres. A
//! store past its day is refused by the search route and the `file_search`
//! tool at once, before any sweep has run.

use std::time::Duration;

use serde_json::json;
use windlass_testkit::{FakeUpstream, Reply};

use crate::support::{config, databases, As, Server};

const DAY: i64 = 86_400;

/// Moves the store's last use two days back, as if nobody had used it.
async fn age(db: &str, store: &str) {
    age_by(db, store, 2 * DAY).await;
}

/// Moves the store's last use `secs` back.
async fn age_by(db: &str, store: &str, secs: i64) {
    let sql = "UPDATE vector_stores SET last_active_at = last_active_at - $1 WHERE id = $2";
    if db.starts_with("postgres") {
        let (client, connection) = tokio_postgres::connect(db, tokio_postgres::NoTls)
            .await
            .expect("connect");
        let driver = tokio::spawn(connection);
        let n = client.execute(sql, &[&secs, &store]).await.expect("age");
        assert_eq!(n, 1);
        drop(client);
        let _ = driver.await;
    } else {
        let conn = rusqlite::Connection::open(db).expect("open sqlite");
        conn.busy_timeout(Duration::from_secs(10)).expect("busy");
        let n = conn
            .execute(&sql.replace('$', "?"), rusqlite::params![secs, store])
            .expect("age");
        assert_eq!(n, 1);
    }
}

/// Polls until the sweep has emptied the store (its file has no chunks).
async fn swept(me: &As<'_>, store: &str, file: &str) {
    for _ in 0..300 {
        let (status, content) = me
            .get(&format!("/v1/vector_stores/{store}/files/{file}/content"))
            .await;
        assert_eq!(status, 200, "{content}");
        if content["data"].as_array().is_some_and(|d| d.is_empty()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the expiry sweep did not empty {store}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_store_is_swept_and_refuses_search() {
    let cfg = config(
        "[upstream]\nurl = \"http://127.0.0.1:1/v1\"\n\
         [retrieval]\nexpiry_sweep_secs = 1\npoll_secs = 1\n",
    );
    for db in databases().await {
        let server = Server::start(&db, Some(&cfg)).await;
        let me = server.me();
        let file = me
            .upload_file("notes.txt", b"The office cat is named Biscuit.\n")
            .await;
        let (status, store) = me
            .post(
                "/v1/vector_stores",
                &json!({
                    "name": "short",
                    "description": "notes that expire",
                    "file_ids": [file],
                    "expires_after": {"anchor": "last_active_at", "days": 1},
                }),
            )
            .await;
        assert_eq!(status, 200, "{store}");
        assert_eq!(store["description"], "notes that expire");
        let vs = store["id"].as_str().expect("id").to_owned();
        let (_, forever) = me
            .post("/v1/vector_stores", &json!({"file_ids": [file]}))
            .await;
        let keep = forever["id"].as_str().expect("id").to_owned();
        assert_eq!(forever["description"], serde_json::Value::Null);
        for s in [&vs, &keep] {
            assert_eq!(me.settled(s, &file).await["status"], "completed");
        }
        let path = format!("/v1/vector_stores/{vs}/search");
        let (status, page) = me.post(&path, &json!({"query": "cat"})).await;
        assert_eq!(
            (status, page["data"].as_array().map(Vec::len)),
            (200, Some(1))
        );

        age(&db, &vs).await;
        swept(&me, &vs, &file).await;

        let (status, got) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(status, 200);
        assert_eq!(got["status"], "expired", "{got}");
        assert_eq!(got["usage_bytes"], 0);
        assert_eq!(got["description"], "notes that expire");
        let (status, err) = me.post(&path, &json!({"query": "cat"})).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["code"], "vector_store_expired");
        let (status, err) = me
            .post(
                &format!("/v1/vector_stores/{vs}/files"),
                &json!({"file_id": file}),
            )
            .await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["code"], "vector_store_expired");
        // Removing the policy does not bring it back.
        let (_, modified) = me
            .post(
                &format!("/v1/vector_stores/{vs}"),
                &json!({"expires_after": null, "description": "gone"}),
            )
            .await;
        assert_eq!(modified["status"], "expired", "{modified}");
        assert_eq!(modified["description"], "gone");

        // The store without a policy kept its chunks.
        let (_, page) = me
            .post(
                &format!("/v1/vector_stores/{keep}/search"),
                &json!({"query": "cat"}),
            )
            .await;
        assert_eq!(page["data"].as_array().map(Vec::len), Some(1), "{page}");
        let (status, _) = me.delete(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(status, 200);
    }
}

/// One `file_search` turn over `store` (the results included), the
/// scripted model asking and then answering.
async fn ask(upstream: &FakeUpstream, me: &As<'_>, store: &str) -> (u16, serde_json::Value) {
    upstream.push(Reply::tool_call("file_search", r#"{"query":"cat"}"#));
    upstream.push(Reply::text("Done."));
    me.post(
        "/v1/responses",
        &json!({
            "model": "m",
            "input": "What is the office cat called?",
            "tools": [{"type": "file_search", "vector_store_ids": [store]}],
            "include": ["file_search_call.results"],
        }),
    )
    .await
}

fn now() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    i64::try_from(secs).expect("secs")
}

/// The sweep runs at start and then once an hour: every refusal below is
/// the search's own judgement of `expires_after` at the moment it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_past_its_day_is_not_searched_before_any_sweep() {
    let upstream = FakeUpstream::start().await;
    let cfg = config(&format!(
        "[upstream]\nurl = \"{}\"\n[retrieval]\nexpiry_sweep_secs = 3600\npoll_secs = 1\n",
        upstream.base_url()
    ));
    for db in databases().await {
        let server = Server::start(&db, Some(&cfg)).await;
        let me = server.me();
        let file = me
            .upload_file("notes.txt", b"The office cat is named Biscuit.\n")
            .await;
        let (status, store) = me
            .post(
                "/v1/vector_stores",
                &json!({
                    "file_ids": [file],
                    "expires_after": {"anchor": "last_active_at", "days": 1},
                }),
            )
            .await;
        assert_eq!(status, 200, "{store}");
        let vs = store["id"].as_str().expect("id").to_owned();
        assert_eq!(me.settled(&vs, &file).await["status"], "completed");
        let path = format!("/v1/vector_stores/{vs}/search");
        let (status, page) = me.post(&path, &json!({"query": "cat"})).await;
        assert_eq!(
            (status, page["data"][0]["file_id"].as_str()),
            (200, Some(file.as_str()))
        );

        // A file_search call is use too: half a day idle, then searched by
        // the tool, the store's day starts again.
        age_by(&db, &vs, DAY / 2).await;
        upstream.clear_requests();
        let (status, resp) = ask(&upstream, &me, &vs).await;
        assert_eq!(status, 200, "{resp}");
        assert_eq!(resp["output"][0]["status"], "completed", "{resp}");
        assert!(upstream.tool_messages(1)[0].contains("Biscuit"));
        let (_, got) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        let idle = now() - got["last_active_at"].as_i64().expect("last_active_at");
        assert!(
            idle < DAY / 4,
            "the tool's search moved last_active_at: {got}"
        );

        age(&db, &vs).await;
        let (_, got) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(got["status"], "expired", "{got}");
        let (status, err) = me.post(&path, &json!({"query": "cat"})).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["code"], "vector_store_expired");
        assert_eq!(err["error"]["param"], "vector_store_id");

        // The tool: the call fails with a reason the model reads, and none
        // of the store's text reaches it.
        upstream.clear_requests();
        let (status, resp) = ask(&upstream, &me, &vs).await;
        assert_eq!(status, 200, "{resp}");
        let call = &resp["output"][0];
        assert_eq!(call["type"], "file_search_call", "{resp}");
        assert_eq!(call["status"], "failed", "{call}");
        let reason = format!("vector store {vs} has expired: its files can no longer be searched");
        assert_eq!(call["error"], reason.as_str(), "{call}");
        assert!(call["results"].is_null(), "{call}");
        let told = upstream.tool_messages(1);
        assert_eq!(told, [format!("Error: {reason}")], "{db}");
        assert_eq!(resp["status"], "completed", "{resp}");

        // No sweep ran: the chunks are still stored, just not searchable.
        let (_, content) = me
            .get(&format!("/v1/vector_stores/{vs}/files/{file}/content"))
            .await;
        assert_eq!(
            content["data"].as_array().map(Vec::len),
            Some(1),
            "{content}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn description_is_bounded() {
    for db in databases().await {
        let server = Server::start(&db, None).await;
        let me = server.me();
        let long = "d".repeat(513);
        let (status, err) = me
            .post("/v1/vector_stores", &json!({"description": long}))
            .await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["param"], "description");
        let (_, listed) = me.get("/v1/vector_stores").await;
        assert_eq!(listed["data"], json!([]), "nothing stored");
    }
}
