//! A request checked by [`Engine::prepare`](crate::Engine::prepare): what
//! the loop runs from, and what a surface reads before it starts it.

use std::sync::{Arc, OnceLock};

use windlass_protocol::{CreateResponseRequest, Item, ResponseResource};

use crate::config::{ClientToolsStatus, LoopMode};
use crate::mcp::McpRun;
use crate::ports::agent::policy::PolicyContext;
use crate::ports::agent::provider::ModelToolChoice;
use crate::ports::agent::tools::ToolCall;
use crate::prepare::limits::Limits;
use crate::tooling::ToolSet;

/// A checked request, ready for [`Engine::run`](crate::Engine::run).
pub struct PreparedRun {
    pub(crate) response: ResponseResource,
    pub(crate) request: CreateResponseRequest,
    pub(crate) history: Vec<Item>,
    pub(crate) input: Vec<Item>,
    /// Calls of the chain still owed a result: open function calls, paused
    /// MCP calls and calls answered by an approval response.
    pub(crate) pending: Vec<ToolCall>,
    pub(crate) tools: ToolSet,
    pub(crate) mcp: McpRun,
    pub(crate) first_choice: ModelToolChoice,
    pub(crate) mode: LoopMode,
    pub(crate) limits: Limits,
    /// How a pause for the client ends; the engine's setting unless the
    /// surface overrides it for this request.
    pub(crate) client_tools_status: ClientToolsStatus,
    /// Who asked (see [`PolicyContext::principal`]).
    pub(crate) principal: Option<String>,
    /// The conversation the response belongs to (its history, and where
    /// its input and output are appended).
    pub(crate) conversation: Option<String>,
    /// The owner tenant: history and references were read from its rows
    /// only, and the response is stored as its.
    pub(crate) tenant: String,
    /// History and input in upstream form, built on the first model turn
    /// and shared by every later one (neither changes during a run).
    pub(crate) upstream_head: OnceLock<Arc<[Item]>>,
    /// Hosted tool types of the request left out because nothing serves
    /// them here (the operator's `drop_unserved_hosted`); surfaces tell the
    /// client (the `x-windlass-dropped-tools` header).
    pub(crate) dropped_tools: Vec<String>,
}

impl PreparedRun {
    /// The response's id (`resp_...`).
    pub fn id(&self) -> &str {
        &self.response.id
    }

    /// Hosted tool types of the request that were left out, unserved.
    pub fn dropped_tools(&self) -> &[String] {
        &self.dropped_tools
    }

    /// Whether the client asked for a stream.
    pub fn stream(&self) -> bool {
        self.request.stream == Some(true)
    }

    /// Whether stream delta events get obfuscation padding
    /// (`stream_options.include_obfuscation`, on unless turned off).
    pub fn obfuscation(&self) -> bool {
        self.request
            .stream_options
            .as_ref()
            .and_then(|o| o.include_obfuscation)
            .unwrap_or(true)
    }

    /// Whether the response is stored (`store`, on unless the client turned it off).
    pub fn store(&self) -> bool {
        self.response.store
    }

    /// The tenant the response belongs to.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The response as it stands before the loop (`in_progress`, empty output).
    pub fn response(&self) -> &ResponseResource {
        &self.response
    }

    /// Whether the response runs in the background (`background: true`).
    pub fn background(&self) -> bool {
        self.response.background
    }

    /// The conversation the response belongs to.
    pub fn conversation(&self) -> Option<&str> {
        self.conversation.as_deref()
    }

    /// The transcript this run starts from: the continued chain, then this
    /// request's input (ids assigned). A surface that keeps unstored
    /// responses for itself (a WebSocket connection) appends the output to
    /// it and hands it back as [`RunContext::known_context`](crate::RunContext::known_context).
    pub fn context(&self) -> Vec<Item> {
        self.history.iter().chain(&self.input).cloned().collect()
    }

    /// The caller the policy sees (an API key's name), if any.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// What the policy is told about this run at `turn`.
    pub(crate) fn policy_context(&self, turn: u32, approved: bool) -> PolicyContext<'_> {
        PolicyContext {
            response_id: &self.response.id,
            model: &self.response.model,
            turn,
            principal: self.principal.as_deref(),
            metadata: &self.response.metadata,
            approved,
        }
    }
}
