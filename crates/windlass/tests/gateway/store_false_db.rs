//! `store: false` writes nothing, ever: after JSON, streamed, continued and
//! tool-calling responses with `store: false`, the database file holds
//! exactly what it held before, row for row, and neither the file nor its
//! WAL grew.

use serde_json::{json, Value};
use windlass_testkit::db;
use windlass_testkit::{Gateway, Reply};

/// Every row of every table, in a stable order.
fn dump(gw: &Gateway) -> String {
    let tables = ["responses", "items", "response_items", "response_traces"];
    tables
        .iter()
        .map(|t| {
            let rows = db::sqlite(&gw.db, &format!("SELECT * FROM {t} ORDER BY 1, 2;"))
                .unwrap_or_default();
            format!("{t}:\n{rows}")
        })
        .collect()
}

fn sizes(gw: &Gateway) -> (u64, u64) {
    let len = |suffix: &str| {
        let path = format!("{}{suffix}", gw.db.display());
        std::fs::metadata(path).map_or(0, |m| m.len())
    };
    (len(""), len("-wal"))
}

#[tokio::test]
async fn store_false_leaves_the_database_file_unchanged() {
    let gw = Gateway::start().await;
    gw.upstream.push(Reply::text("kept"));
    let (s, kept) = gw
        .post_json("/v1/responses", &json!({"model": "m", "input": "keep me"}))
        .await;
    assert_eq!(s, 200, "{kept}");
    let before = dump(&gw);
    assert!(before.contains("keep me"), "{before}");
    let sizes_before = sizes(&gw);

    let tool = json!([{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]);
    let bodies: [Value; 3] = [
        json!({"model": "m", "input": "secret one", "store": false}),
        json!({"model": "m", "input": "secret two", "store": false,
               "previous_response_id": kept["id"]}),
        json!({"model": "m", "input": "secret three", "store": false, "tools": tool}),
    ];
    gw.upstream.push(Reply::text("not kept"));
    gw.upstream.push(Reply::text("not kept either"));
    gw.upstream.push(Reply::tool_call("lookup", r#"{"q":1}"#));
    for body in &bodies {
        let (s, r) = gw.post_json("/v1/responses", body).await;
        assert_eq!(s, 200, "{r}");
        assert_eq!(r["store"], false);
    }
    gw.upstream.push(Reply::text("streamed, not kept"));
    let cap = gw
        .stream(&json!({"model": "m", "input": "secret four", "store": false}))
        .await;
    assert!(cap.raw.contains("response.completed"), "{}", cap.raw);
    assert_eq!(gw.upstream.request_count(), 5);

    assert_eq!(dump(&gw), before);
    assert_eq!(sizes(&gw), sizes_before);
}
