//! `code_interpreter` through the gateway: the real bubblewrap sandbox
//! runs the Python the scripted model writes, in a container kept in a real
//! SQLite store; JSON and streamed, with OpenAI's item and events.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use windlass_engine::{ContainerStore, FileStore, ToolExecutor};
use windlass_store::SqliteStore;
use windlass_testkit::scenario::*;
use windlass_testkit::{Gateway, GatewayOptions, Reply, SseCapture};
use windlass_tools::hosted::code_interpreter::{
    CodeInterpreterConfig, CodeInterpreterExecutor, Runner,
};

const CODE: &str = "n = 6 * 7\nprint(f\"answer: {n}\")\n";

/// Removes the test's directory (database, work dirs) when dropped.
pub(crate) struct TempDir(pub PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A gateway serving `code_interpreter` over a SQLite file in a fresh
/// directory (the executor and the gateway share the file).
pub(crate) async fn gateway(name: &str, mut options: GatewayOptions) -> (Gateway, TempDir) {
    let dir = std::env::temp_dir().join(format!("windlass-ci-gw-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("db.sqlite");
    let store = Arc::new(SqliteStore::open(db.to_str().unwrap()).await.unwrap());
    let runner = Runner::start(CodeInterpreterConfig {
        enabled: true,
        work_root: Some(dir.join("work")),
        ..Default::default()
    })
    .await;
    assert_eq!(
        runner.unavailable(),
        None,
        "bubblewrap and python3 are needed"
    );
    let exec: Arc<dyn ToolExecutor> = Arc::new(CodeInterpreterExecutor::new(
        runner,
        store.clone() as Arc<dyn ContainerStore>,
        Some(store as Arc<dyn FileStore>),
    ));
    options.executors.push(exec);
    options.db = Some(db);
    (Gateway::start_with(options).await, TempDir(dir))
}

fn request(stream: bool, include: bool) -> Value {
    let mut body = json!({
        "model": "m",
        "input": "What is 6 times 7? Use Python.",
        "tools": [{"type": "code_interpreter", "container": {"type": "auto"}}],
        "stream": stream,
    });
    if include {
        body["include"] = json!(["code_interpreter_call.outputs"]);
    }
    body
}

fn script(gw: &Gateway) {
    let args = json!({ "code": CODE }).to_string();
    // Three characters a piece: the code arrives in many pieces.
    gw.upstream
        .push(Reply::tool_call("code_interpreter", args).chunk_chars(3));
    gw.upstream.push(Reply::text("It is 42."));
}

/// Checks the finished `code_interpreter_call` item and what the model saw.
fn check_call(gw: &Gateway, call: &Value, with_outputs: bool) {
    assert_eq!(call["type"], "code_interpreter_call", "{call}");
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["code"], CODE);
    assert!(call["id"].as_str().unwrap().starts_with("ci_"), "{call}");
    let container = call["container_id"].as_str().unwrap();
    assert!(container.starts_with("cntr_"), "{call}");
    if with_outputs {
        let outputs = call["outputs"].as_array().unwrap();
        assert_eq!(outputs[0]["type"], "logs", "{call}");
        assert!(
            outputs[0]["logs"].as_str().unwrap().contains("answer: 42"),
            "{call}"
        );
    } else {
        assert!(
            call["outputs"].is_null(),
            "outputs only with include: {call}"
        );
    }
    // The answer turn saw the printed output, whatever the client sees.
    let reqs = gw.upstream.requests();
    assert_eq!(reqs.len(), 2);
    let told = tool_messages(&reqs[1]);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].1.contains("answer: 42"), "{told:?}");
}

#[tokio::test]
async fn code_interpreter_runs_in_the_sandbox_through_the_gateway() {
    for include in [true, false] {
        let (gw, _dir) = gateway(&format!("json-{include}"), GatewayOptions::default()).await;
        script(&gw);
        let (status, resp) = gw
            .post_json("/v1/responses", &request(false, include))
            .await;
        assert_eq!(status, 200, "{resp}");
        assert_eq!(resp["status"], "completed", "{resp}");
        let output = resp["output"].as_array().unwrap();
        assert_eq!(output.len(), 2, "{resp}");
        check_call(&gw, &output[0], include);
        assert_eq!(output[1]["content"][0]["text"], "It is 42.");
        // The stored response keeps the outputs; a GET with include shows them.
        let id = resp["id"].as_str().unwrap();
        let (s, got) = gw
            .get_json(&format!(
                "/v1/responses/{id}?include[]=code_interpreter_call.outputs"
            ))
            .await;
        assert_eq!(s, 200, "{got}");
        let logs = got["output"][0]["outputs"][0]["logs"].as_str().unwrap();
        assert!(logs.contains("answer: 42"), "{got}");
        gw.stop().await;
    }
}

/// The events of the item at output index 0, by type.
fn call_events(cap: &SseCapture) -> Vec<(String, Value)> {
    cap.events
        .iter()
        .filter(|(_, d)| d["output_index"] == 0)
        .cloned()
        .collect()
}

#[tokio::test]
async fn code_interpreter_streams_the_code_as_the_model_writes_it() {
    let (gw, _dir) = gateway("stream", GatewayOptions::default()).await;
    script(&gw);
    let cap = gw.stream(&request(true, true)).await;
    assert_eq!(cap.status, 200, "{}", cap.raw);
    assert_eq!(terminal(&cap), "response.completed");
    let events = call_events(&cap);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    let deltas: Vec<&str> = events
        .iter()
        .filter(|(n, _)| n == "response.code_interpreter_call_code.delta")
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert!(deltas.len() > 3, "the code comes in pieces: {names:?}");
    assert_eq!(deltas.concat(), CODE, "the deltas, in order, are the code");
    // OpenAI's order: added, in_progress, the code's deltas and done, then
    // interpreting, completed, done.
    let mut order: Vec<&str> = names.clone();
    order.dedup();
    assert_eq!(
        order,
        [
            "response.output_item.added",
            "response.code_interpreter_call.in_progress",
            "response.code_interpreter_call_code.delta",
            "response.code_interpreter_call_code.done",
            "response.code_interpreter_call.interpreting",
            "response.code_interpreter_call.completed",
            "response.output_item.done",
        ],
        "{names:?}"
    );
    let (_, added) = &events[0];
    assert_eq!(added["item"]["type"], "code_interpreter_call");
    assert_eq!(added["item"]["status"], "in_progress");
    let item_id = added["item"]["id"].as_str().unwrap();
    assert!(events
        .iter()
        .skip(1)
        .all(|(_, d)| d["item_id"] == item_id || d["item"]["id"] == item_id));
    let (_, done_code) = &events[names
        .iter()
        .position(|n| *n == "response.code_interpreter_call_code.done")
        .unwrap()];
    assert_eq!(done_code["code"], CODE);
    let (_, done) = events.last().unwrap();
    check_call(&gw, &done["item"], true);
    // The final response agrees with the stream.
    let completed = &cap.events.last().unwrap().1["response"];
    assert_eq!(
        completed["output"][0]["container_id"],
        done["item"]["container_id"]
    );
    gw.stop().await;
}
