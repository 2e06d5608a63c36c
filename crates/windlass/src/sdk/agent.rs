//! [`Agent`]: the model, the upstream, the tools, the hooks and the limits.

use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "mcp")]
use windlass_engine::McpHub;
use windlass_engine::{ModelProvider, Policy};
#[cfg(feature = "mcp")]
use windlass_protocol::{McpApprovalMode, McpRequireApproval};
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};
#[cfg(feature = "mcp")]
use windlass_tools::builtins::{Builtins, WithBuiltins, BUILTIN_LABEL};
#[cfg(feature = "mcp")]
use windlass_tools::{McpConfig, McpServerConfig, McpServers};

use super::error::BuildError;
use super::hooks::Hooks;
use super::tool::{Tool, ToolRegistry};

/// Fail fast if the model loops.
pub const DEFAULT_MAX_TOOL_ITERATIONS: u32 = 5;

/// A configured agent. Build one with [`Agent::builder`]; cheap to clone;
/// every [`Client`](super::Client) made from it gets its own conversation.
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}

pub(crate) struct AgentInner {
    pub model: String,
    pub system_prompt: Option<String>,
    pub provider: Arc<dyn ModelProvider>,
    pub registry: Arc<ToolRegistry>,
    pub auto_execute_tools: bool,
    pub max_tool_iterations: u32,
    pub hooks: Hooks,
    pub temperature: Option<f64>,
    pub max_output_tokens: Option<u64>,
    pub tool_timeout: Option<Duration>,
    pub parallel_tool_calls: Option<bool>,
    pub max_tool_calls_per_turn: Option<u32>,
    pub tool_error_threshold: Option<u32>,
    pub completion_check: bool,
    pub techniques: windlass_engine::Techniques,
    /// The labels of the attached MCP servers (the built-ins' `windlass`
    /// among them) and the hub that runs them.
    #[cfg(feature = "mcp")]
    pub mcp: Option<AttachedMcp>,
    /// A gate consulted before the hooks (e.g. `windlass_governance::Governance`).
    pub policy: Option<Arc<dyn Policy>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = &self.inner;
        f.debug_struct("Agent")
            .field("model", &i.model)
            .field("system_prompt", &i.system_prompt)
            .field(
                "tools",
                &i.registry
                    .tools()
                    .iter()
                    .map(Tool::name)
                    .collect::<Vec<_>>(),
            )
            .field("auto_execute_tools", &i.auto_execute_tools)
            .field("max_tool_iterations", &i.max_tool_iterations)
            .field("hooks", &i.hooks)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts an agent's configuration: a model and an upstream are required, the rest has defaults.
    pub fn builder() -> AgentBuilder {
        AgentBuilder::default()
    }

    /// The model every run of this agent asks for.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// The system prompt each conversation starts with, if any.
    pub fn system_prompt(&self) -> Option<&str> {
        self.inner.system_prompt.as_deref()
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> &[Tool] {
        self.inner.registry.tools()
    }

    /// The registered tool of that name.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.inner.registry.get(name)
    }

    /// Whether runs execute the tools themselves (auto mode) or stop at the model's calls.
    pub fn auto_execute_tools(&self) -> bool {
        self.inner.auto_execute_tools
    }

    /// Model turns per run before an auto-mode run stops asking for tools.
    pub fn max_tool_iterations(&self) -> u32 {
        self.inner.max_tool_iterations
    }

    /// The same agent in manual mode and without MCP servers: what the
    /// standalone `query()` uses, which never runs a tool.
    pub(crate) fn manual(&self) -> Agent {
        #[cfg(feature = "mcp")]
        let has_mcp = self.inner.mcp.is_some();
        #[cfg(not(feature = "mcp"))]
        let has_mcp = false;
        if !self.inner.auto_execute_tools && !has_mcp {
            return self.clone();
        }
        let i = &self.inner;
        Agent {
            inner: Arc::new(AgentInner {
                model: i.model.clone(),
                system_prompt: i.system_prompt.clone(),
                provider: i.provider.clone(),
                registry: i.registry.clone(),
                auto_execute_tools: false,
                max_tool_iterations: i.max_tool_iterations,
                hooks: i.hooks.clone(),
                temperature: i.temperature,
                max_output_tokens: i.max_output_tokens,
                tool_timeout: i.tool_timeout,
                parallel_tool_calls: i.parallel_tool_calls,
                max_tool_calls_per_turn: i.max_tool_calls_per_turn,
                tool_error_threshold: i.tool_error_threshold,
                completion_check: i.completion_check,
                techniques: i.techniques,
                // Manual mode runs no tools itself, so MCP servers are not attached.
                #[cfg(feature = "mcp")]
                mcp: None,
                policy: i.policy.clone(),
            }),
        }
    }
}

/// Builds an [`Agent`]. `model` and an upstream (`base_url` or `provider`)
/// are required; tools are optional. Defaults:
/// `auto_execute_tools(false)`, `max_tool_iterations(5)`.
#[derive(Default)]
pub struct AgentBuilder {
    model: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
    provider: Option<Arc<dyn ModelProvider>>,
    system_prompt: Option<String>,
    tools: Vec<Tool>,
    auto_execute_tools: bool,
    max_tool_iterations: Option<u32>,
    hooks: Hooks,
    temperature: Option<f64>,
    max_output_tokens: Option<u64>,
    tool_timeout: Option<Duration>,
    parallel_tool_calls: Option<bool>,
    max_tool_calls_per_turn: Option<u32>,
    tool_error_threshold: Option<u32>,
    completion_check: bool,
    techniques: windlass_engine::Techniques,
    #[cfg(feature = "mcp")]
    mcp_servers: Vec<McpServerConfig>,
    #[cfg(feature = "mcp")]
    builtins: Option<Arc<Builtins>>,
    policy: Option<Arc<dyn Policy>>,
}

impl AgentBuilder {
    /// Offers the built-in tools (the ones `builtins` enables) to the model
    /// as the MCP server `windlass`, run in-process without approval items.
    #[cfg(feature = "mcp")]
    pub fn builtins(mut self, builtins: Arc<Builtins>) -> Self {
        self.builtins = Some(builtins);
        self
    }

    /// A policy checked before every tool call, ahead of the hooks: the
    /// gateway's governance gate (`windlass_governance::Governance`) or any
    /// other [`Policy`]. A `Deny` becomes the call's error output.
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Attaches an MCP server (stdio `command` or streamable HTTP `url`):
    /// its tools are offered to the model as `label__tool` and run by the
    /// engine without approval items (`require_approval` may only be
    /// `"never"`); `PreToolUse` hooks gate them like any tool.
    #[cfg(feature = "mcp")]
    pub fn mcp_server(mut self, server: McpServerConfig) -> Self {
        self.mcp_servers.push(server);
        self
    }

    /// The model name the upstream serves, e.g. `qwen2.5-1.5b`.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The OpenAI-compatible API root, e.g. `http://127.0.0.1:8081/v1`
    /// (vLLM, llama.cpp, Ollama, LiteLLM, OpenAI).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// Sent to the upstream as a bearer token.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Use this model provider instead of building one from `base_url`
    /// (another adapter, a configured one, or a test double).
    pub fn provider(mut self, provider: Arc<dyn ModelProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The system prompt each conversation starts with.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Registers one tool (names must be unique; checked by `build`).
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers several tools, after any registered before.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// `true`: the engine runs the tools and feeds their results back until
    /// the model answers or `max_tool_iterations` turns ran. `false`
    /// (default): each run stops at the model's tool calls for the caller.
    pub fn auto_execute_tools(mut self, on: bool) -> Self {
        self.auto_execute_tools = on;
        self
    }

    /// Model turns per run (default 5): the model may call tools in each of
    /// them; if the last one still calls tools, the run ends with
    /// [`Termination::MaxIterations`](super::Termination::MaxIterations).
    pub fn max_tool_iterations(mut self, n: u32) -> Self {
        self.max_tool_iterations = Some(n);
        self
    }

    /// Adds hooks (after any added before).
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = std::mem::take(&mut self.hooks).merge(hooks);
        self
    }

    /// Sampling temperature sent with every model turn (the upstream's default when unset).
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = Some(t);
        self
    }

    /// Most output tokens per model turn (the upstream's default when unset).
    pub fn max_output_tokens(mut self, n: u64) -> Self {
        self.max_output_tokens = Some(n);
        self
    }

    /// Time allowed per tool call in auto mode (default 60 s); a timeout is a
    /// tool error.
    pub fn tool_timeout(mut self, d: Duration) -> Self {
        self.tool_timeout = Some(d);
        self
    }

    /// `false`: ask the model for one call per turn, and run calls one by one.
    pub fn parallel_tool_calls(mut self, on: bool) -> Self {
        self.parallel_tool_calls = Some(on);
        self
    }

    /// Tool calls one model turn may make; the rest get an error result the
    /// model sees (default: no limit).
    pub fn max_tool_calls_per_turn(mut self, n: u32) -> Self {
        self.max_tool_calls_per_turn = Some(n);
        self
    }

    /// Ends a run `Incomplete` (`ToolErrorThreshold`) after this many tool
    /// calls failed in a row (default: never).
    pub fn tool_error_threshold(mut self, n: u32) -> Self {
        self.tool_error_threshold = Some(n);
        self
    }

    /// The completion check (off by default): the first text-only answer
    /// of a run that used tools is met with
    /// [`VERIFICATION_PROMPT`](windlass_engine::VERIFICATION_PROMPT); the
    /// model's next text-only answer ends the run. The extra turn counts
    /// against `max_tool_iterations`.
    pub fn completion_check(mut self, on: bool) -> Self {
        self.completion_check = on;
        self
    }

    /// The loop's task-success techniques (the stall stop on by default,
    /// the rest off; see [`Techniques`](windlass_engine::Techniques)): the
    /// restating check, the repeat guard, the schema check, a required tool
    /// call after a check that names a missing step, the stall stop. A request can still change them
    /// with `metadata.windlass_techniques`.
    pub fn techniques(mut self, techniques: windlass_engine::Techniques) -> Self {
        self.techniques = techniques;
        self
    }

    /// Checks the configuration and builds the tool registry (once).
    pub fn build(self) -> Result<Agent, BuildError> {
        let model = self
            .model
            .filter(|m| !m.is_empty())
            .ok_or(BuildError::MissingModel)?;
        let registry = ToolRegistry::new(self.tools)?;
        let max_tool_iterations = self
            .max_tool_iterations
            .unwrap_or(DEFAULT_MAX_TOOL_ITERATIONS);
        if max_tool_iterations == 0 {
            return Err(BuildError::ZeroIterations);
        }
        let provider: Arc<dyn ModelProvider> = match (self.provider, self.base_url) {
            (Some(p), _) => p,
            (None, Some(url)) => {
                let mut cfg = ChatProviderConfig::new(url);
                cfg.api_key = self.api_key;
                Arc::new(ChatCompletionsProvider::new(cfg)?)
            }
            (None, None) => return Err(BuildError::MissingUpstream),
        };
        // The SDK gates calls with hooks; it has no way to answer an
        // approval request, so a rule that would produce one is refused.
        #[cfg(feature = "mcp")]
        let never = McpRequireApproval::Mode(McpApprovalMode::Never);
        #[cfg(feature = "mcp")]
        if let Some(s) = self
            .mcp_servers
            .iter()
            .find(|s| s.require_approval.as_ref().is_some_and(|r| *r != never))
        {
            return Err(BuildError::McpApproval(s.label.clone()));
        }
        #[cfg(feature = "mcp")]
        let mcp = mcp_hub(self.mcp_servers, self.builtins)?;
        Ok(Agent {
            inner: Arc::new(AgentInner {
                model,
                system_prompt: self.system_prompt,
                provider,
                registry: Arc::new(registry),
                auto_execute_tools: self.auto_execute_tools,
                max_tool_iterations,
                hooks: self.hooks,
                temperature: self.temperature,
                max_output_tokens: self.max_output_tokens,
                tool_timeout: self.tool_timeout,
                parallel_tool_calls: self.parallel_tool_calls,
                max_tool_calls_per_turn: self.max_tool_calls_per_turn,
                tool_error_threshold: self.tool_error_threshold,
                completion_check: self.completion_check,
                techniques: self.techniques,
                #[cfg(feature = "mcp")]
                mcp,
                policy: self.policy,
            }),
        })
    }
}

/// The labels of the attached MCP servers and the hub that runs them.
#[cfg(feature = "mcp")]
pub(crate) type AttachedMcp = (Vec<String>, Arc<dyn McpHub>);

/// The hub that runs the attached MCP servers and the built-ins, with the
/// labels the model's requests name.
#[cfg(feature = "mcp")]
fn mcp_hub(
    servers: Vec<McpServerConfig>,
    builtins: Option<Arc<Builtins>>,
) -> Result<Option<AttachedMcp>, BuildError> {
    let mut labels: Vec<String> = servers.iter().map(|s| s.label.clone()).collect();
    let servers: Option<Arc<dyn McpHub>> = if servers.is_empty() {
        None
    } else {
        let config = McpConfig {
            servers,
            ..McpConfig::default()
        };
        Some(McpServers::try_start(config)?)
    };
    Ok(match (builtins, servers) {
        (Some(b), inner) => {
            labels.push(BUILTIN_LABEL.to_owned());
            let hub: Arc<dyn McpHub> = Arc::new(WithBuiltins::new(b, inner));
            Some((labels, hub))
        }
        (None, Some(hub)) => Some((labels, hub)),
        (None, None) => None,
    })
}
