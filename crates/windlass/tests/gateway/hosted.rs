//! Hosted tools through the gateway: `file_search` over files ingested
//! into a real SQLite store (keyword search), `web_search` over a local
//! SearXNG-shaped server; the scripted upstream plays the model's calls.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use windlass_engine::{FileStore, NewAttachment, NewVectorStore, VectorStoreStore, DEFAULT_TENANT};
use windlass_protocol::{FileObject, FilePurpose, StaticChunking};
use windlass_retrieval::{FileSearchExecutor, Ingestor, Searcher};
use windlass_store::SqliteStore;
use windlass_testkit::scenario::*;
use windlass_testkit::search_backend::searxng;
use windlass_testkit::{Gateway, GatewayOptions, Reply};

const RETURNS: &str = "Returns policy. Refunds are paid within 30 days of the returned parcel arriving at our warehouse.";

fn temp_db() -> PathBuf {
    let n: u64 = rand_id();
    std::env::temp_dir().join(format!("windlass-hosted-{n:016x}.db"))
}

fn rand_id() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    t.as_nanos() as u64 ^ u64::from(std::process::id())
}

/// A SQLite file holding `vs_docs` (one ingested file, `returns.md`) for
/// `tenant`, and the `file_search` executor over it.
async fn store_with_docs(tenant: &str) -> (PathBuf, Arc<FileSearchExecutor>) {
    let db = temp_db();
    let s = Arc::new(SqliteStore::open(db.to_str().unwrap()).await.unwrap());
    let file = FileObject::new(
        "file-returns".into(),
        "returns.md".into(),
        RETURNS.len() as u64,
        FilePurpose::Assistants,
        1,
    );
    s.create_file(tenant, &file, RETURNS.as_bytes())
        .await
        .unwrap();
    let new = NewVectorStore {
        id: "vs_docs".into(),
        name: "docs".into(),
        description: None,
        created_at: 1,
        metadata: Default::default(),
        expires_after: None,
        embedding_model: None,
    };
    s.create_vector_store(tenant, &new).await.unwrap();
    let attach = NewAttachment {
        file_id: "file-returns".into(),
        attributes: None,
        chunking: StaticChunking::AUTO,
    };
    s.attach_files(tenant, "vs_docs", &[attach], None, 1)
        .await
        .unwrap();
    let ingested = Ingestor::new(s.clone(), s.clone(), None)
        .run_pending("w", 1, 300, 10)
        .await
        .unwrap();
    assert_eq!(ingested.len(), 1);
    let executor = Arc::new(FileSearchExecutor::new(Searcher::new(s, None)));
    (db, executor)
}

async fn gateway(db: PathBuf, executor: Arc<dyn windlass_engine::ToolExecutor>) -> Gateway {
    Gateway::start_with(GatewayOptions {
        executors: vec![executor],
        db: Some(db),
        ..Default::default()
    })
    .await
}

fn body(extra: Value) -> Value {
    let mut b = json!({
        "model": "m",
        "input": "How long do refunds take?",
        "tools": [{"type": "file_search", "vector_store_ids": ["vs_docs"]}],
    });
    b.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    b
}

/// The tool message the upstream got for `call_id`.
fn tool_text(req: &Value, call_id: &str) -> String {
    tool_messages(req)
        .into_iter()
        .find(|(id, _)| id == call_id)
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("no tool message for {call_id} in {req}"))
}

#[tokio::test]
async fn file_search_runs_in_the_loop_on_every_surface() {
    for mode in MODES {
        let (db, files) = store_with_docs(DEFAULT_TENANT).await;
        let gw = gateway(db, files).await;
        gw.upstream
            .push(Reply::tool_call("file_search", r#"{"query":"refunds"}"#));
        gw.upstream
            .push(Reply::text("Within 30 days [file-returns]."));
        let run = create(&gw, mode, &body(json!({}))).await;
        assert_eq!(run.status(), "completed", "{mode:?}: {}", run.resp);
        assert_eq!(output_types(&run.resp), ["file_search_call", "message"]);
        let call = &output(&run.resp)[0];
        let id = call["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("fs_"), "{call}");
        assert_eq!(call["status"], "completed");
        assert_eq!(call["queries"], json!(["refunds"]));
        // Not included: the client sees no results (the store keeps them).
        assert!(call["results"].is_null(), "{call}");
        let message = &output(&run.resp)[1];
        assert_eq!(
            message["content"][0]["annotations"],
            json!([{"type": "file_citation", "file_id": "file-returns", "filename": "returns.md", "index": 15}])
        );

        // The model saw `file_search` as a function, then its call (id =
        // the item's) and the rendered passages.
        let reqs = gw.upstream.requests();
        assert_eq!(upstream_tool_names(&reqs[0]), ["file_search"]);
        assert_eq!(
            assistant_calls(&reqs[1]),
            [(
                id.clone(),
                "file_search".into(),
                r#"{"query":"refunds"}"#.into()
            )]
        );
        let seen = tool_text(&reqs[1], &id);
        assert!(seen.contains("[file-returns] returns.md"), "{seen}");
        assert!(seen.contains("within 30 days"), "{seen}");

        if let Some(cap) = &run.sse {
            let types = cap.types();
            let at = |t: &str| {
                types
                    .iter()
                    .position(|x| *x == t)
                    .unwrap_or_else(|| panic!("no {t}: {types:?}"))
            };
            assert!(
                at("response.file_search_call.in_progress")
                    < at("response.file_search_call.searching")
            );
            assert!(
                at("response.file_search_call.searching")
                    < at("response.file_search_call.completed")
            );
            assert!(at("response.output_text.annotation.added") < at("response.output_text.done"));
            assert_eq!(
                item_events(cap),
                [
                    "added:file_search_call",
                    "done:file_search_call",
                    "added:message",
                    "done:message"
                ]
            );
        }

        // A chain replays the stored item: the next turn's upstream sees the
        // same call and text, and no search runs again.
        gw.upstream.clear_requests();
        gw.upstream.push(Reply::text("You're welcome."));
        let next = json!({"model": "m", "previous_response_id": run.id(), "input": "thanks",
                          "tools": [{"type": "file_search", "vector_store_ids": ["vs_docs"]}]});
        let (status, _) = gw.post_json("/v1/responses", &next).await;
        assert_eq!(status, 200);
        let reqs = gw.upstream.requests();
        assert_eq!(tool_text(&reqs[0], &id), seen);
        gw.stop().await;
    }
}

#[tokio::test]
async fn include_shows_the_results_and_get_cuts_them_again() {
    let (db, files) = store_with_docs(DEFAULT_TENANT).await;
    let gw = gateway(db, files).await;
    gw.upstream
        .push(Reply::tool_call("file_search", r#"{"query":"refunds"}"#));
    gw.upstream.push(Reply::text("30 days."));
    let (status, resp) = gw
        .post_json(
            "/v1/responses",
            &body(json!({"include": ["file_search_call.results"]})),
        )
        .await;
    assert_eq!(status, 200, "{resp}");
    let results = &output(&resp)[0]["results"];
    assert_eq!(results[0]["file_id"], "file-returns");
    assert!(results[0]["text"].as_str().unwrap().contains("30 days"));

    let id = resp["id"].as_str().unwrap();
    let (_, plain) = gw.get_json(&format!("/v1/responses/{id}")).await;
    assert!(output(&plain)[0]["results"].is_null(), "{plain}");
    let (_, with) = gw
        .get_json(&format!(
            "/v1/responses/{id}?include=file_search_call.results"
        ))
        .await;
    assert_eq!(&output(&with)[0]["results"], results);
    let (bad, err) = gw
        .get_json(&format!("/v1/responses/{id}?include=nope"))
        .await;
    assert_eq!(bad, 400, "{err}");
    gw.stop().await;
}

#[tokio::test]
async fn another_tenants_vector_store_is_not_found_in_the_tool_output() {
    let (db, files) = store_with_docs("someone-else").await;
    let gw = gateway(db, files).await;
    gw.upstream
        .push(Reply::tool_call("file_search", r#"{"query":"refunds"}"#));
    gw.upstream.push(Reply::text("I could not search."));
    let (status, resp) = gw.post_json("/v1/responses", &body(json!({}))).await;
    assert_eq!(status, 200, "{resp}");
    let call = &output(&resp)[0];
    assert_eq!(call["status"], "failed");
    assert_eq!(call["error"], "vector store not found");
    let id = call["id"].as_str().unwrap();
    let told = tool_text(&gw.upstream.requests()[1], id);
    assert_eq!(told, "Error: vector store not found");
    assert!(!told.contains("30 days"));
    gw.stop().await;
}

#[tokio::test]
async fn an_unserved_hosted_type_is_refused_and_web_search_dropped_visibly() {
    let gw = Gateway::start().await;
    let (status, err) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}]}),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["param"], "tools[0].type");
    assert_eq!(err["error"]["code"], "unsupported_tool_type");

    gw.upstream.push(Reply::text("hello"));
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&json!({"model": "m", "input": "hi", "tools": [{"type": "web_search"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["x-windlass-dropped-tools"].to_str().unwrap(),
        "web_search"
    );
    let reqs = gw.upstream.requests();
    assert!(upstream_tool_names(reqs.last().unwrap()).is_empty());
    gw.stop().await;
}

#[tokio::test]
async fn untyped_and_unknown_tool_types_are_refused_or_dropped_visibly() {
    let tools = json!([
        {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}},
        {"type": "tool_search"},
        {"type": "made_up_tool", "x": 1}
    ]);
    let gw = Gateway::start().await;
    let (status, err) = gw
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "tools": tools}),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["param"], "tools[1].type");
    assert_eq!(err["error"]["code"], "unsupported_tool_type");
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("tool_search"));
    // The operator names tool_search in the drop list: the unknown type
    // is still refused, and nothing reached the model.
    let only_unknown = json!([{"type": "tool_search"}, {"type": "made_up_tool"}]);
    let mut options = GatewayOptions::default();
    options.engine.drop_unserved_hosted = vec!["tool_search".into()];
    let named = Gateway::start_with(options).await;
    let (status, err) = named
        .post_json(
            "/v1/responses",
            &json!({"model": "m", "input": "hi", "tools": only_unknown}),
        )
        .await;
    assert_eq!(status, 400, "{err}");
    assert_eq!(err["error"]["param"], "tools[1].type");
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("made_up_tool"));
    assert!(gw.upstream.requests().is_empty() && named.upstream.requests().is_empty());
    named.stop().await;
    gw.stop().await;

    // `unserved = "drop"`: both left out, named in the header, never
    // offered to the model, kept in the response's tools.
    let mut options = GatewayOptions::default();
    options.engine.drop_unserved_hosted = vec!["*".into()];
    let gw = Gateway::start_with(options).await;
    gw.upstream.push(Reply::text("hello"));
    let resp = gw
        .client
        .post(gw.url("/v1/responses"))
        .json(&json!({"model": "m", "input": "hi", "tools": tools}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["x-windlass-dropped-tools"].to_str().unwrap(),
        "tool_search, made_up_tool"
    );
    let body: Value = resp.json().await.unwrap();
    let types: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["function", "tool_search", "made_up_tool"]);
    let reqs = gw.upstream.requests();
    assert_eq!(upstream_tool_names(reqs.last().unwrap()), ["f"]);
    gw.stop().await;
}

#[tokio::test]
async fn web_search_over_a_searxng_backend() {
    let url = searxng().await;
    let config: windlass_tools::hosted::web_search::WebSearchConfig = serde_json::from_value(
        json!({"provider": "searxng", "url": url, "allow_hosts": ["127.0.0.1"]}),
    )
    .unwrap();
    let search = Arc::new(config.build().unwrap());
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![search],
        ..Default::default()
    })
    .await;
    gw.upstream.push(Reply::tool_call(
        "web_search",
        r#"{"query":"tokio runtime"}"#,
    ));
    gw.upstream
        .push(Reply::text("See https://tokio.rs/ for details."));
    let cap = gw
        .stream(
            &json!({"model": "m", "input": "What is tokio?", "stream": true,
                        "tools": [{"type": "web_search_preview"}],
                        "include": ["web_search_call.action.sources"]}),
        )
        .await;
    let resp = cap.final_response().clone();
    assert_eq!(resp["status"], "completed", "{resp}");
    assert_eq!(output_types(&resp), ["web_search_call", "message"]);
    let call = &output(&resp)[0];
    assert_eq!(call["status"], "completed");
    assert_eq!(call["action"]["type"], "search");
    assert_eq!(call["action"]["query"], "tokio runtime");
    assert_eq!(call["action"]["sources"][0]["url"], "https://tokio.rs/");
    let types = cap.types();
    assert!(types.contains(&"response.web_search_call.searching"));
    let ann = &output(&resp)[1]["content"][0]["annotations"][0];
    assert_eq!(ann["type"], "url_citation");
    assert_eq!(ann["url"], "https://tokio.rs/");
    assert_eq!(ann["start_index"], 4);
    let id = call["id"].as_str().unwrap();
    let told = tool_text(&gw.upstream.requests()[1], id);
    assert!(told.contains("1. Tokio\n   https://tokio.rs/"), "{told}");
    gw.stop().await;
}

/// The model asks a client function and a hosted tool in one turn: the
/// search runs before the response pauses for the client (its item is
/// `completed`, the client never answers it), and the continuation's model
/// turn sees both results.
#[tokio::test]
async fn a_hosted_call_in_a_turn_that_pauses_for_the_client_runs_first() {
    let url = searxng().await;
    let config: windlass_tools::hosted::web_search::WebSearchConfig = serde_json::from_value(
        json!({"provider": "searxng", "url": url, "allow_hosts": ["127.0.0.1"]}),
    )
    .unwrap();
    let gw = Gateway::start_with(GatewayOptions {
        executors: vec![Arc::new(config.build().unwrap())],
        ..Default::default()
    })
    .await;
    let tools = json!([{"type": "web_search"}, func("lookup")]);
    for stream in [false, true] {
        gw.upstream.push(Reply::tool_calls([
            windlass_testkit::ToolCallSpec::new("web_search", r#"{"query":"tokio"}"#),
            windlass_testkit::ToolCallSpec::new("lookup", r#"{"q":"tokio"}"#).id("call_lookup"),
        ]));
        let first = json!({"model": "m", "input": "Find tokio", "tools": tools, "stream": stream});
        let resp = if stream {
            let cap = gw.stream(&first).await;
            assert_eq!(terminal(&cap), "response.completed");
            // The search ran in this stream.
            assert!(cap.types().contains(&"response.web_search_call.searching"));
            cap.final_response().clone()
        } else {
            let (status, resp) = gw.post_json("/v1/responses", &first).await;
            assert_eq!(status, 200, "{resp}");
            resp
        };
        assert_eq!(output_types(&resp), ["web_search_call", "function_call"]);
        let search = &output(&resp)[0];
        assert_eq!(search["status"], "completed", "{search}");
        assert_eq!(search["action"]["query"], "tokio");
        assert_eq!(output(&resp)[1]["call_id"], "call_lookup");
        let search_id = search["id"].as_str().unwrap().to_owned();

        // The client answers its own call only.
        gw.upstream.push(Reply::text("Tokio is a runtime."));
        let (status, next) = gw
            .post_json(
                "/v1/responses",
                &json!({"model": "m", "tools": tools, "previous_response_id": resp["id"],
                        "input": [{"type": "function_call_output", "call_id": "call_lookup",
                                   "output": "lookup says: async"}]}),
            )
            .await;
        assert_eq!(status, 200, "{next}");
        assert_eq!(next["status"], "completed", "{next}");
        assert_eq!(output_types(&next), ["message"]);
        let reqs = gw.upstream.requests();
        let last = reqs.last().unwrap();
        assert!(tool_text(last, &search_id).contains("https://tokio.rs/"));
        assert_eq!(tool_text(last, "call_lookup"), "lookup says: async");
        // The stored paused response keeps the completed search.
        let (_, stored) = gw
            .get_json(&format!("/v1/responses/{}", resp["id"].as_str().unwrap()))
            .await;
        assert_eq!(stored["output"][0]["status"], "completed");
    }
    gw.stop().await;
}
