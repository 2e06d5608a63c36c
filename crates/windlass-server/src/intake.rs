//! Requests in: the body parsed into its typed request (a bad one named in
//! the OpenAI error shape), and a create checked, admitted and prepared by
//! the engine. Every route that reads a JSON body, and every surface that
//! starts a response (JSON, SSE, WebSocket, a background run restarted after
//! a crash), goes through here; this is the only file that calls the
//! engine's `prepare`.

use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use windlass_engine::{ClientToolsStatus, EngineError, PreparedRun, RunContext, Techniques};
use windlass_protocol::{CreateResponseRequest, Item, PromptParam, Tool};

use crate::client_tools_status;
use crate::error::ApiError;
use crate::guard::consistency;
use crate::guard::keys::AuthedKey;
use crate::guard::quota_gate::{self, Charge};
use crate::guard::tenant::Tenant;
use crate::state::AppState;

/// A create admitted and prepared, ready to run.
pub(crate) struct Admitted {
    pub prepared: PreparedRun,
    /// Charge it with the response once the response has ended.
    pub charge: Charge,
    /// A background run's resume blob (see [`ResumeBlob`]).
    pub resume: Option<String>,
}

/// Checks and prepares a create, then admits it (quotas), for whoever `key`
/// authenticated, in its tenant: every surface that starts a response (HTTP,
/// WebSocket) goes through here. `known`: see
/// [`windlass_engine::RunContext::known_context`].
pub(crate) async fn prepare(
    app: &AppState,
    key: Option<&AuthedKey>,
    header_status: Option<ClientToolsStatus>,
    req: CreateResponseRequest,
    known: Option<Vec<Item>>,
) -> Result<Admitted, ApiError> {
    prepare_checked(app, key, header_status, req, known, |_| Ok(())).await
}

/// [`prepare`], with a surface's own `check` of the prepared run before it
/// is admitted, so a create the surface refuses costs no request unit.
pub(crate) async fn prepare_checked(
    app: &AppState,
    key: Option<&AuthedKey>,
    header_status: Option<ClientToolsStatus>,
    mut req: CreateResponseRequest,
    known: Option<Vec<Item>>,
    check: impl FnOnce(&PreparedRun) -> Result<(), ApiError>,
) -> Result<Admitted, ApiError> {
    let tenant = Tenant::of(key);
    let prompt = crate::prompting::resolve(app, tenant.as_str(), &mut req).await?;
    consistency::previous_not_running(app, tenant.as_str(), &req)?;
    let status = client_tools_status::effective(
        header_status,
        key.and_then(|k| k.client_tools_status),
        app.engine.config().client_tools_status,
    );
    // The key's name is who the policy (governance) sees as the caller.
    let principal = key.map(|k| k.name.clone());
    let techniques = key.and_then(|k| k.techniques.clone());
    // What a restarted server needs to start a queued background run again.
    let resume = match req.background {
        Some(true) => ResumeBlob::of(
            &req,
            principal.as_deref(),
            status,
            prompt.as_ref(),
            techniques.as_deref(),
        ),
        _ => None,
    };
    let ctx = RunContext::for_tenant(tenant.as_str())
        .principal(principal)
        .client_tools_status(status)
        .known_context(known)
        .prompt(prompt)
        .techniques(key_techniques(app, techniques.as_deref()));
    let prepared = app.engine.prepare(ctx, req).await?;
    check(&prepared)?;
    // Charged only for admitted work: a request the checks above refuse
    // (400, 409) costs no request unit; still before anything runs
    // upstream.
    let charge = quota_gate::admit(app, key, tenant.as_str()).await?;
    Ok(Admitted {
        prepared,
        charge,
        resume,
    })
}

/// What a live row keeps to start a queued background response again after
/// a restart. Never holds secrets: a request that carries any (MCP headers
/// or authorization) is not resumable.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ResumeBlob {
    pub request: CreateResponseRequest,
    pub principal: Option<String>,
    pub requires_action: bool,
    /// The stored prompt the request was resolved from (echoed again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptParam>,
    /// The key's techniques (see [`key_techniques`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub techniques: Option<String>,
}

/// The techniques of a key's responses: its list over the server's set.
/// The list was checked at start-up, but a background run's blob may have
/// been written by an older configuration: a list that no longer parses
/// counts as none (the server's set), and says so.
fn key_techniques(app: &AppState, list: Option<&str>) -> Option<Techniques> {
    let server = app.engine.config().server_techniques();
    let list = list?;
    server
        .apply(list)
        .map_err(|e| tracing::warn!(error = %e, "a key's techniques no longer parse; the server's apply"))
        .ok()
}

impl ResumeBlob {
    /// The blob of a background request, or `None` when it holds secrets.
    fn of(
        req: &CreateResponseRequest,
        principal: Option<&str>,
        status: ClientToolsStatus,
        prompt: Option<&PromptParam>,
        techniques: Option<&str>,
    ) -> Option<String> {
        let secret = req.tools.iter().flatten().any(|t| match t {
            Tool::Mcp(m) => m.headers.is_some() || m.authorization.is_some(),
            _ => false,
        });
        if secret {
            return None;
        }
        let blob = ResumeBlob {
            request: req.clone(),
            principal: principal.map(str::to_owned),
            requires_action: status == ClientToolsStatus::RequiresAction,
            prompt: prompt.cloned(),
            techniques: techniques.map(str::to_owned),
        };
        serde_json::to_string(&blob).ok()
    }
}

/// Prepares a queued background response again, in `tenant`, from its
/// stored blob, keeping its id and creation time (no quota is taken again:
/// it was admitted when it was first created).
pub(crate) async fn prepare_resumed(
    app: &AppState,
    tenant: &str,
    blob: ResumeBlob,
    id: String,
    created_at: u64,
) -> Result<PreparedRun, EngineError> {
    let mut ctx = RunContext::for_tenant(tenant)
        .principal(blob.principal)
        .identity(id, created_at)
        .prompt(blob.prompt)
        .techniques(key_techniques(app, blob.techniques.as_deref()));
    if blob.requires_action {
        ctx = ctx.client_tools_status(ClientToolsStatus::RequiresAction);
    }
    app.engine.prepare(ctx, blob.request).await
}

/// Parses the create body; a wrong-typed field is named in `param`.
pub(crate) fn parse_request(bytes: &[u8]) -> Result<CreateResponseRequest, ApiError> {
    parse_json(bytes).map_err(|err| match blame_field(bytes) {
        Some((field, why)) => ApiError::invalid(format!("Invalid value for '{field}': {why}"))
            .param(field)
            .code("invalid_value"),
        None => err,
    })
}

/// On the error path only: finds the top-level field that fails on its own.
fn blame_field(bytes: &[u8]) -> Option<(String, String)> {
    let serde_json::Value::Object(map) = serde_json::from_slice(bytes).ok()? else {
        return None;
    };
    map.into_iter().find_map(|(k, v)| {
        let mut one = serde_json::Map::new();
        one.insert(k.clone(), v);
        serde_json::from_value::<CreateResponseRequest>(serde_json::Value::Object(one))
            .err()
            .map(|e| (k, e.to_string()))
    })
}

/// Parses a JSON body with an OpenAI-style message naming what is wrong.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let message = if e.is_syntax() || e.is_eof() {
            format!("We could not parse the JSON body of your request: {e}")
        } else {
            format!("Invalid request body: {e}")
        };
        ApiError::invalid(message).code(if e.is_data() {
            "invalid_value"
        } else {
            "invalid_json"
        })
    })
}

pub(crate) fn body_error(rejection: BytesRejection) -> ApiError {
    let status = rejection.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            status,
            "invalid_request_error",
            "Request body is too large.",
        )
        .code("request_too_large")
    } else {
        ApiError::new(status, "invalid_request_error", rejection.body_text())
    }
}
