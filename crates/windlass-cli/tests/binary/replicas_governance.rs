//! Governance counters shared by replicas: two real `windlass serve`
//! processes on one Postgres database count one per-key tool rate limit,
//! not one each. Skipped when `WINDLASS_TEST_PG` is unset.

use serde_json::{json, Value};
use windlass_testkit::{FakeUpstream, Reply};

use crate::replica_support::{pg_schema_url, Replica};

/// The `mcp_call` items of a response.
fn mcp_calls(resp: &Value) -> Vec<Value> {
    resp["output"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "mcp_call")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_rate_limit_holds_once_across_two_replicas() {
    let Some(db) = pg_schema_url().await else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("windlass-gov-replicas-{}", std::process::id()));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("a.txt"), "hello").unwrap();
    let config = dir.join("windlass.toml");
    std::fs::write(
        &config,
        format!(
            "[builtins]\nenabled = [\"read_file\"]\nwork_dir = {:?}\n\n\
             [governance]\ntool_rate_limit = {{ per_minute = 1, burst = 1 }}\n",
            work.display().to_string()
        ),
    )
    .unwrap();
    let upstream = FakeUpstream::start().await;
    let up = upstream.base_url();
    let args = ["--config", config.to_str().unwrap()];
    let a = Replica::start(&db, &up, &args).await;
    let b = Replica::start(&db, &up, &args).await;
    let request = json!({
        "model": "m",
        "input": "read a.txt",
        "tools": [{"type": "mcp", "server_label": "windlass"}],
    });

    // One call on A: the only unit of the minute.
    upstream.push(Reply::tool_call(
        "windlass__read_file",
        r#"{"path":"a.txt"}"#,
    ));
    upstream.push(Reply::text("read it"));
    let (status, first) = a.post("/v1/responses", &request).await;
    assert_eq!(status, 200, "{first}");
    let calls = mcp_calls(&first);
    assert_eq!(calls.len(), 1, "{first}");
    assert_eq!(calls[0]["output"], "hello", "{first}");

    // The same caller and tool on B: refused, because A spent the unit
    // (with counters in each process B would have its own).
    upstream.push(Reply::tool_call(
        "windlass__read_file",
        r#"{"path":"a.txt"}"#,
    ));
    upstream.push(Reply::text("could not"));
    let (status, second) = b.post("/v1/responses", &request).await;
    assert_eq!(status, 200, "{second}");
    let calls = mcp_calls(&second);
    assert_eq!(calls.len(), 1, "{second}");
    assert!(
        calls[0]["error"].to_string().contains("rate limit"),
        "{second}"
    );
    assert!(calls[0]["output"].is_null(), "{second}");
    let _ = std::fs::remove_dir_all(&dir);
}
