//! [`RouterProvider`]: several upstreams behind the one model port. The
//! request's `model` picks the upstream (exact names first, then globs, in
//! declaration order); connection failures and 5xx answers before the first
//! byte move the turn to the upstream's fallbacks.

use std::sync::Arc;

use tokio::sync::broadcast;
use windlass_engine::{
    ModelInfo, ModelProvider, ModelRequest, ModelStream, ProviderError, TimeoutPhase, TokenCount,
};

use crate::glob::glob_match;

/// One upstream the router can send turns to.
pub struct Upstream {
    pub name: String,
    pub provider: Arc<dyn ModelProvider>,
    /// What it serves; empty means every model.
    pub models: Vec<ModelRoute>,
    /// Names of the upstreams tried, in order, when this one fails before
    /// answering.
    pub fallbacks: Vec<String>,
}

/// A model name or glob (`*`, `?`) an upstream serves, optionally under
/// another name upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRoute {
    pub pattern: String,
    /// The name sent upstream; `None` keeps the client's.
    pub upstream_name: Option<String>,
}

impl ModelRoute {
    pub fn exact(name: impl Into<String>) -> Self {
        ModelRoute {
            pattern: name.into(),
            upstream_name: None,
        }
    }

    fn is_glob(&self) -> bool {
        self.pattern.contains(['*', '?'])
    }
}

/// A turn that moved to a fallback upstream: logged, and sent to
/// [`RouterProvider::failovers`] subscribers (the trace).
#[derive(Debug, Clone, PartialEq)]
pub struct Failover {
    pub model: String,
    pub from: String,
    pub to: String,
    pub error: ProviderError,
}

/// Why the router cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouterError {
    #[error("no upstream configured")]
    Empty,
    #[error("two upstreams are named `{0}`")]
    DuplicateName(String),
    #[error("upstream `{from}` lists fallback `{to}`, which is not a configured upstream")]
    UnknownFallback { from: String, to: String },
}

pub struct RouterProvider {
    upstreams: Vec<Upstream>,
    /// Fallback indexes per upstream, resolved once.
    fallbacks: Vec<Vec<usize>>,
    failovers: broadcast::Sender<Failover>,
}

/// Failover records kept for a slow subscriber before older ones drop.
const FAILOVER_BACKLOG: usize = 64;

impl RouterProvider {
    pub fn new(upstreams: Vec<Upstream>) -> Result<Self, RouterError> {
        if upstreams.is_empty() {
            return Err(RouterError::Empty);
        }
        let index = |name: &str| upstreams.iter().position(|u| u.name == name);
        let mut fallbacks = Vec::with_capacity(upstreams.len());
        for (i, u) in upstreams.iter().enumerate() {
            if index(&u.name) != Some(i) {
                return Err(RouterError::DuplicateName(u.name.clone()));
            }
            let mut list = Vec::new();
            for f in &u.fallbacks {
                let to = index(f).ok_or_else(|| RouterError::UnknownFallback {
                    from: u.name.clone(),
                    to: f.clone(),
                })?;
                list.push(to);
            }
            fallbacks.push(list);
        }
        Ok(RouterProvider {
            upstreams,
            fallbacks,
            failovers: broadcast::channel(FAILOVER_BACKLOG).0,
        })
    }

    /// Every failover from now on.
    pub fn failovers(&self) -> broadcast::Receiver<Failover> {
        self.failovers.subscribe()
    }

    /// The upstream serving `model` and the name it knows the model by.
    pub fn route(&self, model: &str) -> Option<(usize, String)> {
        let rename = |i: usize, r: &ModelRoute| {
            (
                i,
                r.upstream_name.clone().unwrap_or_else(|| model.to_owned()),
            )
        };
        let all = || self.upstreams.iter().enumerate();
        all()
            .find_map(|(i, u)| {
                u.models
                    .iter()
                    .find(|r| !r.is_glob() && r.pattern == model)
                    .map(|r| rename(i, r))
            })
            .or_else(|| {
                all().find_map(|(i, u)| {
                    u.models
                        .iter()
                        .find(|r| r.is_glob() && glob_match(&r.pattern, model))
                        .map(|r| rename(i, r))
                })
            })
            .or_else(|| {
                all()
                    .find(|(_, u)| u.models.is_empty())
                    .map(|(i, _)| (i, model.to_owned()))
            })
    }

    /// The name `upstream` knows `model` by when it serves it as a fallback.
    fn name_on(&self, upstream: usize, model: &str) -> String {
        let u = &self.upstreams[upstream];
        u.models
            .iter()
            .find(|r| glob_match(&r.pattern, model))
            .and_then(|r| r.upstream_name.clone())
            .unwrap_or_else(|| model.to_owned())
    }

    fn unknown_model(model: &str) -> ProviderError {
        ProviderError::Unsupported {
            message: format!("The model `{model}` is not served by any configured upstream."),
            param: Some("model".into()),
        }
    }
}

/// Failures where the upstream never started on the turn: worth another
/// upstream. A 4xx is the request's fault and would fail anywhere.
fn fails_over(e: &ProviderError) -> bool {
    match e {
        ProviderError::Connect(_) => true,
        ProviderError::Timeout(TimeoutPhase::Connect | TimeoutPhase::FirstByte) => true,
        ProviderError::Status { status, .. } => *status >= 500,
        _ => false,
    }
}

#[async_trait::async_trait]
impl ModelProvider for RouterProvider {
    fn check(&self, request: &ModelRequest) -> Result<(), ProviderError> {
        let (i, name) = self
            .route(&request.model)
            .ok_or_else(|| Self::unknown_model(&request.model))?;
        let provider = &self.upstreams[i].provider;
        if name == request.model {
            return provider.check(request);
        }
        let mut renamed = request.clone();
        renamed.model = name;
        provider.check(&renamed)
    }

    /// Counted by the upstream the model routes to first.
    async fn count_tokens(&self, request: &ModelRequest) -> Result<TokenCount, ProviderError> {
        let (i, name) = self
            .route(&request.model)
            .ok_or_else(|| Self::unknown_model(&request.model))?;
        let provider = &self.upstreams[i].provider;
        if name == request.model {
            return provider.count_tokens(request).await;
        }
        let mut renamed = request.clone();
        renamed.model = name;
        provider.count_tokens(&renamed).await
    }

    async fn context_length(&self, model: &str) -> Result<Option<u64>, ProviderError> {
        let (i, name) = self
            .route(model)
            .ok_or_else(|| Self::unknown_model(model))?;
        self.upstreams[i].provider.context_length(&name).await
    }

    async fn start(&self, mut request: ModelRequest) -> Result<ModelStream, ProviderError> {
        let model = request.model.clone();
        let (first, name) = self
            .route(&model)
            .ok_or_else(|| Self::unknown_model(&model))?;
        request.model = name;
        let mut current = first;
        let mut chain = self.fallbacks[first].iter().peekable();
        loop {
            let upstream = &self.upstreams[current];
            // The transcript is copied only while a fallback may need it.
            let attempt = if chain.peek().is_some() {
                request.clone()
            } else {
                std::mem::take(&mut request)
            };
            let error = match upstream.provider.start(attempt).await {
                Ok(stream) => return Ok(stream),
                Err(e) if fails_over(&e) => e,
                Err(e) => return Err(e),
            };
            let Some(&next) = chain.next() else {
                return Err(error);
            };
            let to = &self.upstreams[next].name;
            tracing::warn!(model = %model, from = %upstream.name, to = %to, error = %error, "upstream failed before answering; failing over");
            let _ = self.failovers.send(Failover {
                model: model.clone(),
                from: upstream.name.clone(),
                to: to.clone(),
                error,
            });
            request.model = self.name_on(next, &model);
            current = next;
        }
    }

    /// Every upstream's configured exact names, plus what each upstream
    /// lists that it is configured to serve. An upstream that cannot list
    /// is logged and skipped; the call fails only when nothing is known.
    async fn list_models(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        let lists =
            futures::future::join_all(self.upstreams.iter().map(|u| u.provider.list_models()))
                .await;
        let mut out: Vec<ModelInfo> = Vec::new();
        let mut last_error = None;
        for (u, listed) in self.upstreams.iter().zip(lists) {
            let owned_by = Some(u.name.clone());
            for r in u.models.iter().filter(|r| !r.is_glob()) {
                push_model(
                    &mut out,
                    ModelInfo {
                        id: r.pattern.clone(),
                        owned_by: owned_by.clone(),
                        created: None,
                    },
                );
            }
            match listed {
                Ok(models) => {
                    for m in models {
                        if u.models.is_empty()
                            || u.models
                                .iter()
                                .any(|r| r.is_glob() && glob_match(&r.pattern, &m.id))
                        {
                            push_model(&mut out, m);
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(upstream = %u.name, error = %e, "cannot list the upstream's models");
                    last_error = Some(e);
                }
            }
        }
        match last_error {
            Some(e) if out.is_empty() => Err(e),
            _ => Ok(out),
        }
    }
}

fn push_model(out: &mut Vec<ModelInfo>, m: ModelInfo) {
    if !out.iter().any(|o| o.id == m.id) {
        out.push(m);
    }
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
