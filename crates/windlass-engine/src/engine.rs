//! The engine: the agent loop with its adapters plugged in.

use std::sync::Arc;

use crate::config::EngineConfig;
use crate::ports::agent::conversations::ConversationStore;
use crate::ports::agent::mcp::McpHub;
use crate::ports::agent::policy::{AllowAll, Policy};
use crate::ports::agent::provider::ModelProvider;
use crate::ports::agent::store::ResponseStore;
use crate::ports::agent::tools::ToolExecutor;

/// One engine serves every surface (HTTP JSON, SSE, SDK, CLI). Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<EngineInner>,
}

pub(crate) struct EngineInner {
    pub provider: Arc<dyn ModelProvider>,
    pub store: Arc<dyn ResponseStore>,
    pub executors: Vec<Arc<dyn ToolExecutor>>,
    /// MCP servers; `None`: `mcp` tools are refused.
    pub mcp: Option<Arc<dyn McpHub>>,
    pub policy: Arc<dyn Policy>,
    pub config: EngineConfig,
    /// Conversations; `None`: `conversation` is refused.
    pub conversations: Option<Arc<dyn ConversationStore>>,
}

impl Engine {
    /// Starts an engine from its two required ports: where responses are stored and which model answers.
    pub fn builder(
        provider: Arc<dyn ModelProvider>,
        store: Arc<dyn ResponseStore>,
    ) -> EngineBuilder {
        EngineBuilder {
            provider,
            store,
            executors: Vec::new(),
            mcp: None,
            policy: Arc::new(AllowAll),
            config: EngineConfig::default(),
            conversations: None,
        }
    }

    /// The store responses are saved to and read from.
    pub fn store(&self) -> &Arc<dyn ResponseStore> {
        &self.inner.store
    }

    /// The model provider every turn goes to.
    pub fn provider(&self) -> &Arc<dyn ModelProvider> {
        &self.inner.provider
    }

    /// The settings every run uses.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// The conversation store, when conversations are enabled.
    pub fn conversations(&self) -> Option<&Arc<dyn ConversationStore>> {
        self.inner.conversations.as_ref()
    }
}

/// Executors are registered here, once.
pub struct EngineBuilder {
    provider: Arc<dyn ModelProvider>,
    store: Arc<dyn ResponseStore>,
    executors: Vec<Arc<dyn ToolExecutor>>,
    mcp: Option<Arc<dyn McpHub>>,
    policy: Arc<dyn Policy>,
    config: EngineConfig,
    conversations: Option<Arc<dyn ConversationStore>>,
}

impl EngineBuilder {
    /// Enables `conversation` on create, kept in `store`.
    pub fn conversations(mut self, store: Arc<dyn ConversationStore>) -> Self {
        self.conversations = Some(store);
        self
    }

    /// Enables `mcp` tools, run through `hub`.
    pub fn mcp(mut self, hub: Arc<dyn McpHub>) -> Self {
        self.mcp = Some(hub);
        self
    }

    /// Adds an executor; for each call the first one that accepts the tool wins.
    pub fn executor(mut self, executor: Arc<dyn ToolExecutor>) -> Self {
        self.executors.push(executor);
        self
    }

    /// The policy asked about every tool call and every turn (allow everything when unset).
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = policy;
        self
    }

    /// The engine's settings (the defaults when unset).
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }

    /// The engine, ready to prepare and run responses.
    pub fn build(self) -> Engine {
        Engine {
            inner: Arc::new(EngineInner {
                provider: self.provider,
                store: self.store,
                executors: self.executors,
                mcp: self.mcp,
                policy: self.policy,
                config: self.config,
                conversations: self.conversations,
            }),
        }
    }
}
