//! Everything before the loop runs: validate, load history, resolve tools.
//! Any refusal happens here, before a stream starts or anything is written.

mod choice;
mod history;
mod input;
mod known;
pub(crate) mod limits;
mod skeleton;
mod tools;
mod validate;

use std::sync::OnceLock;

use windlass_protocol::{CreateResponseRequest, Item};

use crate::config::{EngineConfig, LoopMode};
use crate::engine::{Engine, EngineInner};
use crate::error::EngineError;
use crate::mcp::declare::{add_tools, check_servers, reuse_listings};
use crate::mcp::resume::resume_mcp;
use crate::mcp::McpRun;
use crate::ports::agent::provider::{ModelProvider, ModelRequest, ProviderError};
use crate::prepared::PreparedRun;
use crate::run_context::RunContext;

pub use input::with_id;
pub use limits::{META_MAX_TOOL_CALLS_PER_TURN, META_MAX_TURNS, META_TOOL_ERROR_THRESHOLD};

impl Engine {
    /// Validates `req` and loads what it continues from, reading only the
    /// rows of `ctx`'s tenant (another tenant's id is unknown here). Nothing
    /// is written; a refusal is the client's error (4xx).
    pub async fn prepare(
        &self,
        ctx: RunContext,
        mut req: CreateResponseRequest,
    ) -> Result<PreparedRun, EngineError> {
        let inner = &*self.inner;
        validate::validate_fields(&req)?;
        let limits = limits::limits(&inner.config, &req, ctx.techniques)?;
        let model = model_of(&inner.config, &req)?;
        let mut resolved = tools::resolve_tools(
            &req,
            &inner.executors,
            inner.mcp.is_some(),
            &inner.config.drop_unserved_hosted,
        )?;
        if !resolved.dropped.is_empty() {
            tracing::warn!(
                tools = %resolved.dropped.join(", "),
                "tools left out: nothing serves their types on this gateway"
            );
        }
        if let Some(hub) = inner.mcp.as_deref() {
            check_servers(hub, &resolved.mcp).await?;
        }
        let RunContext {
            tenant,
            principal,
            client_tools_status,
            known,
            identity,
            prompt,
            techniques: _,
        } = ctx;
        let conversation = req.conversation.as_ref().map(|c| c.id().to_owned());
        let history = history::load(inner, &tenant, &req, conversation.as_deref(), known).await?;
        let raw_input = req.input.take().map(|i| i.into_items()).unwrap_or_default();
        let input = input::canonicalize_input(raw_input, inner.store.as_ref(), &tenant).await?;
        let mut pending = input::match_call_outputs(&history, &input)?;
        let resumed = resume_mcp(&history, &input)?;
        check_upstream(inner.provider.as_ref(), &req, &model, &input, &resolved)?;
        add_listed_tools(inner, &mut resolved, history.iter().chain(&input));
        pending.extend(resumed.calls);
        let mode = if resolved.choice_none {
            LoopMode::SingleShot
        } else {
            inner.config.loop_mode
        };
        let mut response = skeleton::skeleton(&req, model, identity);
        response.prompt = prompt;
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
            dropped_tools: resolved.dropped,
            mode,
            limits,
            client_tools_status: client_tools_status.unwrap_or(inner.config.client_tools_status),
            principal,
            conversation,
            tenant,
            upstream_head: OnceLock::new(),
        })
    }
}

/// The request's model, else the configured default.
fn model_of(config: &EngineConfig, req: &CreateResponseRequest) -> Result<String, EngineError> {
    match req.model.as_deref().or(config.default_model.as_deref()) {
        Some(m) if !m.is_empty() => Ok(m.to_owned()),
        _ => Err(EngineError::invalid_code(
            "Missing required parameter: 'model'.",
            Some("model"),
            "missing_required_parameter",
        )),
    }
}

/// The tools of MCP servers the chain already listed: they keep that list.
fn add_listed_tools<'a>(
    inner: &EngineInner,
    resolved: &mut tools::ResolvedTools,
    chain: impl Iterator<Item = &'a Item>,
) {
    reuse_listings(&mut resolved.mcp, chain);
    for decl in &resolved.mcp {
        if let (Some(tools), Some(hub)) = (&decl.listed, inner.mcp.as_deref()) {
            let default = hub.default_approval(&decl.server.label);
            add_tools(&mut resolved.set, decl, default.as_ref(), tools);
        }
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
