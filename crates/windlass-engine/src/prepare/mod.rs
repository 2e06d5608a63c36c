//! Everything before the loop runs: validate, load history, resolve tools.
//! Any refusal happens here, before a stream starts or anything is written.

mod choice;
mod input;
mod limits;
mod tools;
mod validate;

use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    ConversationRef, CreateResponseRequest, Item, ResponseResource, ResponseStatus, TextField,
    Tool, Truncation,
};

use crate::config::ClientToolsStatus;
use crate::config::LoopMode;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::mcp::declare::{add_tools, check_servers, reuse_listings};
use crate::mcp::resume::resume_mcp;
use crate::mcp::McpRun;
use crate::ports::policy::PolicyContext;
use crate::ports::provider::{ModelProvider, ModelRequest, ModelToolChoice, ProviderError};
use crate::ports::store::DEFAULT_TENANT;
use crate::ports::tools::ToolCall;
use crate::tooling::ToolSet;

pub use input::with_id;
pub(crate) use limits::Limits;
pub use limits::{META_MAX_TOOL_CALLS_PER_TURN, META_MAX_TURNS, META_TOOL_ERROR_THRESHOLD};
pub use tools::valid_name;

/// A checked request, ready for [`Engine::run`].
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
}

/// The items of conversation `id`: a 404 when unknown, a 400 when this
/// engine keeps no conversations.
async fn conversation_history(
    inner: &crate::engine::EngineInner,
    tenant: &str,
    id: &str,
) -> Result<Vec<Item>, EngineError> {
    let Some(store) = &inner.conversations else {
        return Err(EngineError::invalid_code(
            "Conversations are not enabled on this server.",
            Some("conversation"),
            "unsupported_parameter",
        ));
    };
    store
        .conversation_context(tenant, id)
        .await?
        .ok_or_else(|| EngineError::NotFound {
            message: format!("Conversation with id '{id}' not found."),
            param: Some("conversation".to_owned()),
            code: Some("conversation_not_found".to_owned()),
        })
}

impl PreparedRun {
    pub fn id(&self) -> &str {
        &self.response.id
    }

    /// Whether the client asked for a stream.
    pub fn stream(&self) -> bool {
        self.request.stream == Some(true)
    }

    pub fn store(&self) -> bool {
        self.response.store
    }

    /// The tenant the response belongs to.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// Overrides, for this request, how a pause for the client ends.
    pub fn set_client_tools_status(&mut self, status: ClientToolsStatus) {
        self.client_tools_status = status;
    }

    /// The response as it stands before the loop (`in_progress`, empty output).
    pub fn response(&self) -> &ResponseResource {
        &self.response
    }

    /// Whether the response runs in the background (`background: true`).
    pub fn background(&self) -> bool {
        self.response.background
    }

    /// Gives the response a known id and creation time: a queued background
    /// response started again after a restart keeps the id it was given.
    pub fn set_identity(&mut self, id: String, created_at: u64) {
        self.response.id = id;
        self.response.created_at = created_at;
    }

    /// The conversation the response belongs to.
    pub fn conversation(&self) -> Option<&str> {
        self.conversation.as_deref()
    }

    /// The transcript this run starts from: the continued chain, then this
    /// request's input (ids assigned). A surface that keeps unstored
    /// responses for itself (a WebSocket connection) appends the output to
    /// it and hands it back to [`Engine::prepare_from`].
    pub fn context(&self) -> Vec<Item> {
        self.history.iter().chain(&self.input).cloned().collect()
    }

    /// The caller the policy sees (an API key's name), if any.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// Names the caller for the policy (an API key's name, an SDK user).
    pub fn set_principal(&mut self, principal: Option<String>) {
        self.principal = principal;
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

impl Engine {
    /// [`prepare_for`](Self::prepare_for) the default tenant (the SDK, and
    /// servers whose keys name no tenant).
    pub async fn prepare(&self, req: CreateResponseRequest) -> Result<PreparedRun, EngineError> {
        self.prepare_for(DEFAULT_TENANT, req).await
    }

    /// Validates `req` and loads what it continues from, reading only
    /// `tenant`'s responses and items: another tenant's id is unknown here.
    pub async fn prepare_for(
        &self,
        tenant: &str,
        req: CreateResponseRequest,
    ) -> Result<PreparedRun, EngineError> {
        self.prepare_from(tenant, req, None).await
    }

    /// Like [`Engine::prepare_for`], but `known`, when given, is the context
    /// of `req.previous_response_id` (a response the surface kept itself,
    /// such as an unstored one earlier on the same WebSocket) and is used
    /// instead of the store.
    pub async fn prepare_from(
        &self,
        tenant: &str,
        mut req: CreateResponseRequest,
        known: Option<Vec<Item>>,
    ) -> Result<PreparedRun, EngineError> {
        let inner = &self.inner;
        validate::validate_fields(&req)?;
        let limits = limits::limits(&inner.config, &req)?;
        let model = match req
            .model
            .as_deref()
            .or(inner.config.default_model.as_deref())
        {
            Some(m) if !m.is_empty() => m.to_owned(),
            _ => {
                return Err(EngineError::invalid_code(
                    "Missing required parameter: 'model'.",
                    Some("model"),
                    "missing_required_parameter",
                ))
            }
        };
        let mut resolved = tools::resolve_tools(&req, &inner.executors, inner.mcp.is_some())?;
        crate::client_shapes::warn_hosted(&req);
        if let Some(hub) = inner.mcp.as_deref() {
            check_servers(hub, &resolved.mcp).await?;
        }

        let conversation = req.conversation.as_ref().map(|c| c.id().to_owned());
        let history = match (&req.previous_response_id, &conversation, known) {
            (Some(_), Some(_), _) => {
                return Err(EngineError::invalid_code(
                    "Mutually exclusive parameters: 'previous_response_id' and 'conversation' cannot be used together.",
                    Some("conversation"),
                    "mutually_exclusive_parameters",
                ))
            }
            (None, Some(id), _) => conversation_history(inner, tenant, id).await?,
            (Some(_), None, Some(context)) => context,
            (Some(prev), None, None) => inner
                .store
                .load_context(tenant, prev)
                .await?
                // A 400 like OpenAI's; the same for another tenant's id.
                .ok_or_else(|| EngineError::InvalidRequest {
                    message: format!("Previous response with id '{prev}' not found."),
                    param: Some("previous_response_id".to_owned()),
                    code: Some("previous_response_not_found".to_owned()),
                })?,
            (None, None, _) => Vec::new(),
        };
        let raw_input = req.input.take().map(|i| i.into_items()).unwrap_or_default();
        let input = input::canonicalize_input(raw_input, inner.store.as_ref(), tenant).await?;
        let open_calls = input::match_call_outputs(&history, &input)?;
        let resumed = resume_mcp(&history, &input)?;
        check_upstream(inner.provider.as_ref(), &req, &model, &input, &resolved)?;

        // Servers the chain already listed keep that list.
        reuse_listings(&mut resolved.mcp, history.iter().chain(&input));
        for decl in &resolved.mcp {
            if let (Some(tools), Some(hub)) = (&decl.listed, inner.mcp.as_deref()) {
                let default = hub.default_approval(&decl.server.label);
                add_tools(&mut resolved.set, decl, default.as_ref(), tools);
            }
        }
        let mut pending: Vec<ToolCall> = open_calls;
        pending.extend(resumed.calls);

        let mode = if resolved.choice_none {
            LoopMode::SingleShot
        } else {
            inner.config.loop_mode
        };
        let response = skeleton(&req, model);
        Ok(PreparedRun {
            response,
            request: req,
            history,
            input,
            pending,
            tools: resolved.set,
            mcp: McpRun {
                servers: resolved.mcp,
                approvals: resumed.approvals,
                denied: resumed.denied,
                targets: resumed.targets,
            },
            first_choice: resolved.first_choice,
            mode,
            limits,
            client_tools_status: inner.config.client_tools_status,
            principal: None,
            conversation,
            tenant: tenant.to_owned(),
            upstream_head: OnceLock::new(),
        })
    }
}

/// Refuses new input the upstream cannot carry, before anything runs.
fn check_upstream(
    provider: &dyn ModelProvider,
    req: &CreateResponseRequest,
    model: &str,
    input: &[Item],
    tools: &tools::ResolvedTools,
) -> Result<(), EngineError> {
    let mut transcript = Vec::with_capacity(input.len());
    for item in input {
        crate::upstream::push_upstream(&mut transcript, item);
    }
    let mut probe = ModelRequest {
        model: model.to_owned(),
        instructions: req.instructions.clone(),
        transcript: transcript.into(),
        tools: tools.set.model_tools(),
        tool_choice: tools.first_choice.clone(),
        ..ModelRequest::default()
    };
    probe.apply_options(req);
    provider.check(&probe).map_err(|e| match e {
        ProviderError::Unsupported { message, param } => EngineError::InvalidRequest {
            message,
            param,
            code: Some("unsupported_for_upstream".to_owned()),
        },
        other => EngineError::invalid(other.to_string(), None),
    })
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The response resource echoing the request, before any output.
fn skeleton(req: &CreateResponseRequest, model: String) -> ResponseResource {
    ResponseResource {
        id: new_id(prefix::RESPONSE),
        object: "response".to_owned(),
        created_at: now_secs(),
        completed_at: None,
        // A background response waits for a worker first.
        status: match req.background {
            Some(true) => ResponseStatus::Queued,
            _ => ResponseStatus::InProgress,
        },
        incomplete_details: None,
        model,
        previous_response_id: req.previous_response_id.clone(),
        instructions: req.instructions.clone(),
        output: Vec::new(),
        error: None,
        tools: req.tools.iter().flatten().map(redact_tool).collect(),
        tool_choice: req.tool_choice.clone().unwrap_or_default(),
        truncation: Truncation::Disabled,
        parallel_tool_calls: req.parallel_tool_calls.unwrap_or(true),
        text: TextField {
            format: req
                .text
                .as_ref()
                .and_then(|t| t.format.clone())
                .unwrap_or_else(|| TextField::default().format),
            verbosity: req.text.as_ref().and_then(|t| t.verbosity),
        },
        top_p: req.top_p.unwrap_or(1.0),
        presence_penalty: req.presence_penalty.unwrap_or(0.0),
        frequency_penalty: req.frequency_penalty.unwrap_or(0.0),
        top_logprobs: req.top_logprobs.unwrap_or(0),
        temperature: req.temperature.unwrap_or(1.0),
        reasoning: req.reasoning.clone(),
        usage: None,
        max_output_tokens: req.max_output_tokens,
        max_tool_calls: req.max_tool_calls,
        store: req.store.unwrap_or(true),
        background: req.background.unwrap_or(false),
        service_tier: "default".to_owned(),
        metadata: req.metadata.clone().unwrap_or_default(),
        safety_identifier: req.safety_identifier.clone(),
        prompt_cache_key: req.prompt_cache_key.clone(),
        allowed_tools: req.allowed_tools.clone(),
        user: req.user.clone(),
        conversation: req.conversation.as_ref().map(|c| ConversationRef {
            id: c.id().to_owned(),
        }),
    }
}

/// Secrets a request gives for an MCP server are never echoed or stored.
fn redact_tool(tool: &Tool) -> Tool {
    match tool {
        Tool::Mcp(m) => {
            let mut m = m.clone();
            m.headers = None;
            m.authorization = None;
            Tool::Mcp(m)
        }
        other => other.clone(),
    }
}
