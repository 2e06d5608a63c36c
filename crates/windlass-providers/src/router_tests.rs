use std::sync::Mutex;

use futures::StreamExt;
use windlass_engine::{FinishReason, ModelEvent};

use super::*;

/// Records the model names it is asked for and answers with `outcome`.
struct Stub {
    seen: Mutex<Vec<String>>,
    outcome: Option<ProviderError>,
}

impl Stub {
    fn new(outcome: Option<ProviderError>) -> Arc<Stub> {
        Arc::new(Stub {
            seen: Mutex::new(Vec::new()),
            outcome,
        })
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl ModelProvider for Stub {
    async fn start(&self, request: ModelRequest) -> Result<ModelStream, ProviderError> {
        self.seen.lock().unwrap().push(request.model);
        match &self.outcome {
            Some(e) => Err(e.clone()),
            None => Ok(Box::pin(futures::stream::iter([Ok(ModelEvent::Finished(
                FinishReason::Stop,
            ))]))),
        }
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        Ok(Vec::new())
    }
}

fn upstream(
    name: &str,
    stub: &Arc<Stub>,
    models: &[(&str, Option<&str>)],
    fallbacks: &[&str],
) -> Upstream {
    Upstream {
        name: name.into(),
        provider: stub.clone(),
        models: models
            .iter()
            .map(|(p, u)| ModelRoute {
                pattern: (*p).into(),
                upstream_name: u.map(Into::into),
            })
            .collect(),
        fallbacks: fallbacks.iter().map(|f| (*f).into()).collect(),
    }
}

fn request(model: &str) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        ..ModelRequest::default()
    }
}

#[test]
fn exact_names_beat_globs_and_a_catch_all_comes_last() {
    let s = Stub::new(None);
    let router = RouterProvider::new(vec![
        upstream("globs", &s, &[("gpt-*", None)], &[]),
        upstream("exact", &s, &[("gpt-4o", Some("gpt-4o-2024-08-06"))], &[]),
        upstream("rest", &s, &[], &[]),
    ])
    .unwrap();
    assert_eq!(
        router.route("gpt-4o"),
        Some((1, "gpt-4o-2024-08-06".into()))
    );
    assert_eq!(router.route("gpt-5"), Some((0, "gpt-5".into())));
    assert_eq!(router.route("llama"), Some((2, "llama".into())));
    let only = RouterProvider::new(vec![upstream("a", &s, &[("m", None)], &[])]).unwrap();
    assert_eq!(only.route("other"), None);
    let err = only.check(&request("other")).unwrap_err();
    assert!(
        matches!(err, ProviderError::Unsupported { ref param, .. } if param.as_deref() == Some("model"))
    );
}

#[tokio::test]
async fn first_byte_timeouts_fail_over_under_the_fallback_s_own_name() {
    let slow = Stub::new(Some(ProviderError::Timeout(TimeoutPhase::FirstByte)));
    let good = Stub::new(None);
    let router = RouterProvider::new(vec![
        upstream("slow", &slow, &[("fast", Some("qwen-0.5b"))], &["good"]),
        upstream("good", &good, &[("fast", Some("gpt-4o-mini"))], &[]),
    ])
    .unwrap();
    let mut failovers = router.failovers();
    let events: Vec<_> = router.start(request("fast")).await.unwrap().collect().await;
    assert_eq!(events, [Ok(ModelEvent::Finished(FinishReason::Stop))]);
    assert_eq!(slow.seen(), ["qwen-0.5b"]);
    assert_eq!(good.seen(), ["gpt-4o-mini"]);
    let f = failovers.try_recv().unwrap();
    assert_eq!(
        (f.from.as_str(), f.to.as_str(), f.model.as_str()),
        ("slow", "good", "fast")
    );
}

#[tokio::test]
async fn mid_stream_and_client_errors_do_not_fail_over() {
    for error in [
        ProviderError::Timeout(TimeoutPhase::Idle),
        ProviderError::Interrupted("reset".into()),
        ProviderError::Status {
            status: 404,
            message: "no such model".into(),
            code: None,
        },
    ] {
        let bad = Stub::new(Some(error.clone()));
        let good = Stub::new(None);
        let router = RouterProvider::new(vec![
            upstream("bad", &bad, &[], &["good"]),
            upstream("good", &good, &[("never", None)], &[]),
        ])
        .unwrap();
        let got = router.start(request("m")).await.err();
        assert_eq!(got, Some(error));
        assert!(good.seen().is_empty());
    }
}

#[test]
fn duplicate_names_and_unknown_fallbacks_are_refused() {
    let s = Stub::new(None);
    let dup = RouterProvider::new(vec![
        upstream("a", &s, &[], &[]),
        upstream("a", &s, &[], &[]),
    ]);
    assert_eq!(dup.err(), Some(RouterError::DuplicateName("a".into())));
    let unknown = RouterProvider::new(vec![upstream("a", &s, &[], &["z"])]);
    assert!(matches!(
        unknown.err(),
        Some(RouterError::UnknownFallback { .. })
    ));
    assert_eq!(
        RouterProvider::new(Vec::new()).err(),
        Some(RouterError::Empty)
    );
}
