//! `Engine::prepare(RunContext, request)`: what the caller's context changes
//! (tenant, principal, a fixed identity, a known context, the client-tools
//! status), seen through the prepared run, the policy, the model request
//! and the saved response. The model and the store are small in-test
//! adapters: the engine crate depends on no implementation of its ports.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use windlass_engine::{
    ClientToolsStatus, Engine, EngineError, FinishReason, ItemPage, LoopBudget, ModelEvent,
    ModelInfo, ModelProvider, ModelRequest, ModelStream, NewResponse, NoEvents, PageRequest,
    Policy, PolicyContext, ProviderError, ResponseStore, RunContext, StoreError, TurnDecision,
};
use windlass_protocol::{CreateResponseRequest, Item, ResponseResource, ResponseStatus};

/// Answers every turn with one call to the client tool `lookup`, and keeps
/// the requests it was sent.
#[derive(Default)]
struct CallsLookup {
    requests: Mutex<Vec<ModelRequest>>,
}

#[async_trait::async_trait]
impl ModelProvider for CallsLookup {
    async fn start(&self, request: ModelRequest) -> Result<ModelStream, ProviderError> {
        self.requests.lock().unwrap().push(request);
        let events = vec![
            Ok(ModelEvent::ToolCallDelta {
                index: 0,
                id: Some("call_1".into()),
                name: Some("lookup".into()),
                arguments: "{}".into(),
            }),
            Ok(ModelEvent::Finished(FinishReason::ToolCalls)),
        ];
        Ok(Box::pin(futures::stream::iter(events)))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        Ok(Vec::new())
    }
}

/// Stored contexts by (tenant, response id); saves are kept in order.
#[derive(Default)]
struct Rows {
    contexts: HashMap<(String, String), Vec<Item>>,
    saved: Mutex<Vec<(String, ResponseResource)>>,
}

#[async_trait::async_trait]
impl ResponseStore for Rows {
    async fn save(&self, new: NewResponse<'_>) -> Result<(), StoreError> {
        let row = (new.tenant.to_owned(), new.response.clone());
        self.saved.lock().unwrap().push(row);
        Ok(())
    }

    async fn get(&self, _: &str, _: &str) -> Result<Option<ResponseResource>, StoreError> {
        Ok(None)
    }

    async fn load_context(&self, tenant: &str, id: &str) -> Result<Option<Vec<Item>>, StoreError> {
        Ok(self.contexts.get(&(tenant.into(), id.into())).cloned())
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

/// Remembers who the policy was told asked, and for which response.
#[derive(Default)]
struct Seen(Mutex<Vec<(Option<String>, String)>>);

#[async_trait::async_trait]
impl Policy for Seen {
    async fn before_turn(&self, ctx: &PolicyContext<'_>, _: &LoopBudget) -> TurnDecision {
        let seen = (ctx.principal.map(str::to_owned), ctx.response_id.to_owned());
        self.0.lock().unwrap().push(seen);
        TurnDecision::Continue
    }
}

struct Setup {
    engine: Engine,
    provider: Arc<CallsLookup>,
    store: Arc<Rows>,
    policy: Arc<Seen>,
}

fn setup(rows: Rows) -> Setup {
    let provider = Arc::new(CallsLookup::default());
    let store = Arc::new(rows);
    let policy = Arc::new(Seen::default());
    let engine = Engine::builder(provider.clone(), store.clone())
        .policy(policy.clone())
        .build();
    Setup {
        engine,
        provider,
        store,
        policy,
    }
}

fn request(extra: serde_json::Value) -> CreateResponseRequest {
    let mut body = json!({
        "model": "m",
        "input": "now",
        "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
    });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(body).unwrap()
}

/// The text of each message, whether its content is a string or parts.
fn texts(items: &[Item]) -> Vec<String> {
    let text = |v: &serde_json::Value| match &v["content"] {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(parts) => parts[0]["text"].as_str().map(str::to_owned),
        _ => None,
    };
    items
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .filter_map(|v| text(&v))
        .collect()
}

#[tokio::test]
async fn the_context_names_tenant_principal_and_identity() {
    let s = setup(Rows::default());
    let ctx = RunContext::for_tenant("acme")
        .principal("key-1".to_owned())
        .identity("resp_fixed", 1234);
    let prepared = s.engine.prepare(ctx, request(json!({}))).await.unwrap();
    assert_eq!(prepared.id(), "resp_fixed");
    assert_eq!(prepared.response().created_at, 1234);
    assert_eq!(prepared.tenant(), "acme");
    assert_eq!(prepared.principal(), Some("key-1"));

    let outcome = s
        .engine
        .run(prepared, &mut NoEvents, CancellationToken::new())
        .await;
    assert_eq!(outcome.response.id, "resp_fixed");
    let seen = s.policy.0.lock().unwrap().clone();
    assert_eq!(seen, [(Some("key-1".to_owned()), "resp_fixed".to_owned())]);
    let saved = s.store.saved.lock().unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(
        (saved[0].0.as_str(), saved[0].1.id.as_str()),
        ("acme", "resp_fixed")
    );
}

#[tokio::test]
async fn the_default_context_is_the_default_tenant_with_a_new_identity() {
    let s = setup(Rows::default());
    let prepared = s
        .engine
        .prepare(RunContext::default(), request(json!({})))
        .await
        .unwrap();
    assert_eq!(prepared.tenant(), windlass_engine::DEFAULT_TENANT);
    assert_eq!(prepared.principal(), None);
    assert!(prepared.id().starts_with("resp_"), "{}", prepared.id());
    assert!(prepared.response().created_at > 0);
}

#[tokio::test]
async fn a_previous_response_is_read_in_the_context_tenant_only() {
    let mut rows = Rows::default();
    let earlier = vec![Item::user_text("stored earlier")];
    rows.contexts
        .insert(("acme".into(), "resp_prev".into()), earlier);
    let s = setup(rows);
    let req = || request(json!({"previous_response_id": "resp_prev"}));

    let other = s
        .engine
        .prepare(RunContext::for_tenant("other"), req())
        .await;
    match other {
        Err(EngineError::InvalidRequest { code, .. }) => {
            assert_eq!(code.as_deref(), Some("previous_response_not_found"))
        }
        Err(e) => panic!("unexpected error {e:?}"),
        Ok(_) => panic!("another tenant's response was found"),
    }
    let mine = s
        .engine
        .prepare(RunContext::for_tenant("acme"), req())
        .await;
    let context = mine.unwrap().context();
    assert_eq!(texts(&context), ["stored earlier", "now"]);
}

#[tokio::test]
async fn a_known_context_stands_in_for_the_store() {
    let s = setup(Rows::default());
    let kept = vec![Item::user_text("kept by the socket")];
    let ctx = RunContext::default().known_context(kept);
    let req = request(json!({"previous_response_id": "resp_unstored"}));
    let prepared = s.engine.prepare(ctx, req).await.unwrap();
    assert_eq!(texts(&prepared.context()), ["kept by the socket", "now"]);

    s.engine
        .run(prepared, &mut NoEvents, CancellationToken::new())
        .await;
    let requests = s.provider.requests.lock().unwrap();
    let sent = requests[0].transcript.to_vec();
    assert_eq!(texts(&sent), ["kept by the socket", "now"]);
}

#[tokio::test]
async fn the_client_tools_status_overrides_the_engines_setting() {
    let s = setup(Rows::default());
    let run = |ctx: RunContext| {
        let engine = s.engine.clone();
        async move {
            let prepared = engine.prepare(ctx, request(json!({}))).await.unwrap();
            let cancel = CancellationToken::new();
            engine.run(prepared, &mut NoEvents, cancel).await.response
        }
    };
    let default = run(RunContext::default()).await;
    assert_eq!(default.status, ResponseStatus::Completed);
    let ctx = RunContext::default().client_tools_status(ClientToolsStatus::RequiresAction);
    let overridden = run(ctx).await;
    assert_eq!(overridden.status, ResponseStatus::RequiresAction);
    // Both paused at the client's call.
    assert!(overridden
        .output
        .iter()
        .any(|i| matches!(i, Item::FunctionCall(c) if c.name == "lookup")));
}
