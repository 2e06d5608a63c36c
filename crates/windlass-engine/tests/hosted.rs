//! Hosted tools in the loop, with an in-test `file_search` executor: the
//! call's item and its events, the text the model reads, replay across
//! `previous_response_id`, `include`, governance, and refusal when no
//! executor serves a hosted type. The model and the store are small
//! in-test adapters.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use windlass_engine::{
    CallDecision, Engine, EngineConfig, EngineError, EventSink, FinishReason, HostedProgress,
    ItemPage, ModelEvent, ModelInfo, ModelProvider, ModelRequest, ModelStream, NewResponse,
    PageRequest, Policy, PolicyContext, ProviderError, ResponseStore, RunContext, SinkClosed,
    StoreError, ToolCall, ToolContext, ToolDefinition, ToolError, ToolExecutor, ToolKind,
    ToolOrigin, ToolResult,
};
use windlass_protocol::hosted_replay::HostedKind;
use windlass_protocol::{
    CreateResponseRequest, FileSearchCall, FileSearchCallStatus, FileSearchResult, Item,
    ResponseResource, StreamEvent, Tool, ToolOutput,
};

/// One scripted model turn: a call `(name, arguments)` or a text answer.
enum Turn {
    Call(&'static str, &'static str),
    Text(&'static str),
}

/// Plays its turns in order and keeps every request.
#[derive(Default)]
struct Script {
    turns: Mutex<VecDeque<Turn>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl Script {
    fn new(turns: Vec<Turn>) -> Arc<Script> {
        Arc::new(Script {
            turns: Mutex::new(turns.into()),
            requests: Mutex::default(),
        })
    }

    fn push(&self, turns: Vec<Turn>) {
        self.turns.lock().unwrap().extend(turns);
    }
}

#[async_trait::async_trait]
impl ModelProvider for Script {
    async fn start(&self, request: ModelRequest) -> Result<ModelStream, ProviderError> {
        self.requests.lock().unwrap().push(request);
        let turn = self.turns.lock().unwrap().pop_front();
        let events = match turn {
            Some(Turn::Call(name, arguments)) => vec![
                Ok(ModelEvent::ToolCallDelta {
                    index: 0,
                    id: Some("call_model_1".into()),
                    name: Some(name.into()),
                    arguments: String::new(),
                }),
                Ok(ModelEvent::ToolCallDelta {
                    index: 0,
                    id: None,
                    name: None,
                    arguments: arguments.into(),
                }),
                Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
            ],
            Some(Turn::Text(t)) => vec![
                Ok(ModelEvent::TextDelta(t.into())),
                Ok(ModelEvent::Finished(FinishReason::Stop)),
            ],
            None => vec![Ok(ModelEvent::Finished(FinishReason::Stop))],
        };
        Ok(Box::pin(futures::stream::iter(events)))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        Ok(Vec::new())
    }
}

/// Saved responses by (tenant, id); a context is the input and output of
/// the chain up to a response.
#[derive(Default)]
struct Rows {
    contexts: Mutex<HashMap<(String, String), Vec<Item>>>,
    saved: Mutex<Vec<ResponseResource>>,
}

#[async_trait::async_trait]
impl ResponseStore for Rows {
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        let parent = new.response.previous_response_id.clone();
        let mut contexts = self.contexts.lock().unwrap();
        let mut context = parent
            .and_then(|p| contexts.get(&(new.tenant.to_owned(), p)).cloned())
            .unwrap_or_default();
        context.extend(new.input.iter().cloned());
        context.extend(new.response.output.iter().cloned());
        contexts.insert((new.tenant.to_owned(), new.response.id.clone()), context);
        self.saved.lock().unwrap().push(new.response.clone());
        Ok(())
    }

    async fn get(&self, _: &str, _: &str) -> Result<Option<ResponseResource>, StoreError> {
        Ok(None)
    }

    async fn load_context(&self, tenant: &str, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        let contexts = self.contexts.lock().unwrap();
        Ok(contexts.get(&(tenant.into(), id.into())).cloned())
    }

    async fn input_items(
        &self,
        _: &str,
        _: &str,
        _: &PageRequest,
    ) -> Result<Option<ItemPage>, StoreError> {
        Ok(None)
    }

    async fn delete(&self, _: &str, _: &str) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn find_item(&self, _: &str, _: &str) -> Result<Option<Item>, StoreError> {
        Ok(None)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What one call got: (tenant, item id, vector store ids, query).
type Seen = (String, String, Vec<String>, String);

/// A `file_search` executor over one in-memory "vector store" per tenant:
/// it answers with the passages whose text contains the query.
#[derive(Default)]
struct Files {
    seen: Mutex<Vec<Seen>>,
}

#[async_trait::async_trait]
impl ToolExecutor for Files {
    fn kind(&self) -> ToolKind {
        ToolKind::Hosted
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        matches!(&tool.origin, ToolOrigin::Hosted(h) if h.kind == HostedKind::FileSearch)
    }

    async fn execute(&self, ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError> {
        let hosted = ctx.hosted.as_ref().expect("a hosted call");
        let Tool::FileSearch(tool) = &hosted.tool.tool else {
            return Err(ToolError::Failed("not file_search".into()));
        };
        let args: serde_json::Value = serde_json::from_str(&call.arguments)
            .map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        let query = args["query"].as_str().unwrap_or_default().to_owned();
        self.seen.lock().unwrap().push((
            ctx.tenant.clone(),
            hosted.item_id.clone(),
            tool.vector_store_ids.clone(),
            query.clone(),
        ));
        // Progress on a non-code item is dropped by nobody's harm.
        hosted
            .progress
            .report(HostedProgress::CodeDelta(String::new()));
        let passage = "Refunds take 30 days from delivery.";
        let results = passage.contains(&query).then(|| FileSearchResult {
            file_id: Some("file-1".into()),
            filename: Some("returns.md".into()),
            score: Some(0.9),
            text: Some(passage.into()),
            attributes: None,
        });
        Ok(ToolResult::hosted(Item::FileSearchCall(FileSearchCall {
            id: hosted.item_id.clone(),
            queries: vec![query],
            status: FileSearchCallStatus::Completed,
            results: Some(results.into_iter().collect()),
            error: None,
        })))
    }
}

/// Keeps every stream event.
#[derive(Default)]
struct Events(Vec<StreamEvent>);

#[async_trait::async_trait]
impl EventSink for Events {
    fn wants_events(&self) -> bool {
        true
    }

    async fn send(&mut self, event: StreamEvent) -> Result<(), SinkClosed> {
        self.0.push(event);
        Ok(())
    }
}

impl Events {
    fn types(&self) -> Vec<String> {
        self.0.iter().map(|e| e.event_type().to_owned()).collect()
    }
}

/// Denies every `file_search` call.
struct DenySearch;

#[async_trait::async_trait]
impl Policy for DenySearch {
    async fn before_call(
        &self,
        _: &PolicyContext<'_>,
        call: &ToolCall,
        _: Option<&ToolDefinition>,
    ) -> CallDecision {
        match call.name.as_str() {
            "file_search" => CallDecision::Deny {
                reason: "searching files is not allowed".into(),
            },
            _ => CallDecision::Allow,
        }
    }
}

struct Setup {
    engine: Engine,
    script: Arc<Script>,
    files: Arc<Files>,
    rows: Arc<Rows>,
}

fn setup(turns: Vec<Turn>, policy: Option<Arc<dyn Policy>>) -> Setup {
    let script = Script::new(turns);
    let files = Arc::new(Files::default());
    let rows = Arc::new(Rows::default());
    let mut builder = Engine::builder(script.clone(), rows.clone()).executor(files.clone());
    if let Some(p) = policy {
        builder = builder.policy(p);
    }
    Setup {
        engine: builder.build(),
        script,
        files,
        rows,
    }
}

fn request(extra: serde_json::Value) -> CreateResponseRequest {
    let mut body = json!({
        "model": "m",
        "input": "How long do refunds take?",
        "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}],
    });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(body).unwrap()
}

async fn run(
    engine: &Engine,
    tenant: &str,
    req: CreateResponseRequest,
    sink: &mut Events,
) -> windlass_engine::RunOutcome {
    let prepared = engine
        .prepare(RunContext::for_tenant(tenant), req)
        .await
        .expect("prepared");
    engine.run(prepared, sink, CancellationToken::new()).await
}

/// The function-call/output pairs of a transcript: (name or output text, call_id).
fn calls_sent(req: &ModelRequest) -> Vec<(String, String)> {
    req.transcript
        .to_vec()
        .iter()
        .filter_map(|i| match i {
            Item::FunctionCall(c) => {
                Some((format!("{}({})", c.name, c.arguments), c.call_id.clone()))
            }
            Item::FunctionCallOutput(o) => match &o.output {
                ToolOutput::Text(t) => Some((t.clone(), o.call_id.clone())),
                ToolOutput::Parts(_) => None,
            },
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_file_search_call_is_its_own_item_with_its_events() {
    let s = setup(
        vec![
            Turn::Call("file_search", r#"{"query":"Refunds"}"#),
            Turn::Text("30 days [file-1]."),
        ],
        None,
    );
    let mut events = Events::default();
    let req = request(json!({"stream": true}));
    let outcome = run(&s.engine, "acme", req, &mut events).await;

    // The model saw a `file_search(query)` function.
    let first = s.script.requests.lock().unwrap()[0].clone();
    assert_eq!(first.tools.len(), 1);
    assert_eq!(first.tools[0].name, "file_search");
    assert_eq!(first.tools[0].parameters["required"], json!(["query"]));

    // The executor got the tenant, the item id and the tool's settings.
    let seen = s.files.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let (tenant, item_id, stores, query) = &seen[0];
    assert_eq!((tenant.as_str(), query.as_str()), ("acme", "Refunds"));
    assert_eq!(stores, &["vs_1"]);
    assert!(item_id.starts_with("fs_"), "{item_id}");

    // Output: the complete file_search_call (no function_call items), then
    // the answer. The stored response keeps the results.
    let out = &outcome.response.output;
    assert_eq!(out.len(), 2, "{out:?}");
    let Item::FileSearchCall(call) = &out[0] else {
        panic!("not a file_search_call: {:?}", out[0]);
    };
    assert_eq!(&call.id, item_id);
    assert_eq!(call.status, FileSearchCallStatus::Completed);
    assert_eq!(call.queries, ["Refunds"]);
    assert_eq!(call.results.as_ref().unwrap().len(), 1);
    let saved = s.rows.saved.lock().unwrap();
    assert!(
        matches!(&saved[0].output[0], Item::FileSearchCall(c) if c.results.as_ref().is_some_and(|r| r.len() == 1))
    );

    // The answer's `[file-1]` marker became a file_citation.
    let Item::Message(answer) = &out[1] else {
        panic!("{:?}", out[1]);
    };
    let cited = serde_json::to_value(answer).unwrap();
    assert_eq!(
        cited["content"][0]["annotations"],
        json!([{"type": "file_citation", "file_id": "file-1", "filename": "returns.md", "index": 8}])
    );

    // Events in OpenAI's order for the call's item.
    let types = events.types();
    let at = |t: &str| {
        types
            .iter()
            .position(|x| x == t)
            .unwrap_or_else(|| panic!("no {t} in {types:?}"))
    };
    assert!(at("response.output_item.added") < at("response.file_search_call.in_progress"));
    assert!(
        at("response.file_search_call.in_progress") < at("response.file_search_call.searching")
    );
    assert!(at("response.file_search_call.searching") < at("response.file_search_call.completed"));
    assert!(at("response.file_search_call.completed") < at("response.output_item.done"));
    assert!(at("response.output_text.annotation.added") < at("response.output_text.done"));
    assert!(
        !types.iter().any(|t| t.contains("function_call")),
        "{types:?}"
    );

    // Without include, the client sees no results: events and the answer.
    let client = outcome.client_response();
    assert!(matches!(&client.output[0], Item::FileSearchCall(c) if c.results.is_none()));
    let done = events.0.iter().find_map(|e| match &e.data {
        windlass_protocol::EventData::OutputItemDone {
            item: Item::FileSearchCall(c),
            ..
        } => Some(c.clone()),
        _ => None,
    });
    assert_eq!(done.unwrap().results, None);

    // The second turn read the call as a function call and its rendered output.
    let second = s.script.requests.lock().unwrap()[1].clone();
    let sent = calls_sent(&second);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].0, r#"file_search({"query":"Refunds"})"#);
    assert_eq!(sent[0].1, *item_id);
    assert!(sent[1].0.contains("[file-1] returns.md"), "{}", sent[1].0);
    assert!(sent[1].0.contains("Refunds take 30 days"), "{}", sent[1].0);
}

#[tokio::test]
async fn include_keeps_the_results_for_the_client() {
    let s = setup(
        vec![
            Turn::Call("file_search", r#"{"query":"Refunds"}"#),
            Turn::Text("ok"),
        ],
        None,
    );
    let mut events = Events::default();
    let req = request(json!({"stream": true, "include": ["file_search_call.results"]}));
    let outcome = run(&s.engine, "acme", req, &mut events).await;
    let client = outcome.client_response();
    assert!(
        matches!(&client.output[0], Item::FileSearchCall(c) if c.results.as_ref().is_some_and(|r| r[0].text.is_some()))
    );
    let completed = events.0.iter().rev().find_map(|e| match &e.data {
        windlass_protocol::EventData::Completed { response } => Some(response.clone()),
        _ => None,
    });
    assert!(
        matches!(&completed.unwrap().output[0], Item::FileSearchCall(c) if c.results.is_some())
    );
}

#[tokio::test]
async fn a_chain_replays_what_the_model_saw() {
    let s = setup(
        vec![
            Turn::Call("file_search", r#"{"query":"Refunds"}"#),
            Turn::Text("30 days"),
        ],
        None,
    );
    let first = run(
        &s.engine,
        "acme",
        request(json!({})),
        &mut Events::default(),
    )
    .await;
    let seen_first = calls_sent(&s.script.requests.lock().unwrap()[1]);

    s.script.push(vec![Turn::Text("you're welcome")]);
    let next = request(json!({"previous_response_id": first.response.id, "input": "thanks"}));
    run(&s.engine, "acme", next, &mut Events::default()).await;
    let replayed = calls_sent(&s.script.requests.lock().unwrap()[2]);
    assert_eq!(replayed, seen_first);
    // Only one search ran: the replay is from the stored item.
    assert_eq!(s.files.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_hosted_item_in_the_input_is_replayed_too() {
    let s = setup(vec![Turn::Text("fine")], None);
    let req = request(json!({"input": [
        {"type": "message", "role": "user", "content": "q"},
        {"type": "file_search_call", "id": "fs_given", "queries": ["tents"], "status": "completed",
         "results": [{"file_id": "file-9", "filename": "tents.md", "text": "Tents are green.", "score": 0.5}]}
    ]}));
    run(&s.engine, "acme", req, &mut Events::default()).await;
    let sent = calls_sent(&s.script.requests.lock().unwrap()[0]);
    assert_eq!(
        sent[0],
        (
            r#"file_search({"query":"tents"})"#.to_owned(),
            "fs_given".to_owned()
        )
    );
    assert!(sent[1].0.contains("Tents are green."));
}

#[tokio::test]
async fn a_denied_call_is_a_failed_item_the_model_is_told_about() {
    let s = setup(
        vec![
            Turn::Call("file_search", r#"{"query":"Refunds"}"#),
            Turn::Text("sorry"),
        ],
        Some(Arc::new(DenySearch)),
    );
    let mut events = Events::default();
    let outcome = run(
        &s.engine,
        "acme",
        request(json!({"stream": true})),
        &mut events,
    )
    .await;
    assert!(s.files.seen.lock().unwrap().is_empty(), "the executor ran");
    let Item::FileSearchCall(call) = &outcome.response.output[0] else {
        panic!("{:?}", outcome.response.output);
    };
    assert_eq!(call.status, FileSearchCallStatus::Failed);
    assert!(
        call.error.as_deref().unwrap().contains("not allowed"),
        "{call:?}"
    );
    // Not run: no `searching` event.
    assert!(!events.types().iter().any(|t| t.ends_with("searching")));
    let sent = calls_sent(&s.script.requests.lock().unwrap()[1]);
    assert!(
        sent[1].0.starts_with("Error: ") && sent[1].0.contains("blocked"),
        "{sent:?}"
    );
}

#[tokio::test]
async fn a_hosted_type_without_an_executor_is_refused_or_dropped() {
    let s = setup(vec![], None);
    let req = request(json!({"tools": [
        {"type": "function", "name": "f"},
        {"type": "code_interpreter", "container": {"type": "auto"}}
    ]}));
    let refused = s.engine.prepare(RunContext::default(), req).await;
    match refused {
        Err(EngineError::InvalidRequest {
            param,
            code,
            message,
        }) => {
            assert_eq!(param.as_deref(), Some("tools[1].type"));
            assert_eq!(code.as_deref(), Some("unsupported_tool_type"));
            assert!(message.contains("code_interpreter"), "{message}");
        }
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("accepted a hosted type nobody serves"),
    }

    // web_search is dropped by default (Codex sends it), and said so.
    let req = request(json!({"tools": [{"type": "web_search_preview"}]}));
    let prepared = s.engine.prepare(RunContext::default(), req).await.unwrap();
    assert_eq!(prepared.dropped_tools(), ["web_search_preview"]);

    // An operator who refuses every unserved type.
    let strict = Engine::builder(Script::new(vec![]), Arc::new(Rows::default()))
        .config(EngineConfig {
            drop_unserved_hosted: Vec::new(),
            ..EngineConfig::default()
        })
        .build();
    let req = request(json!({"tools": [{"type": "web_search"}]}));
    assert!(matches!(
        strict.prepare(RunContext::default(), req).await,
        Err(EngineError::InvalidRequest { .. })
    ));
}
