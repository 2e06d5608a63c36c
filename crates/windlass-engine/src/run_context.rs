//! What the caller of [`Engine::prepare`](crate::Engine::prepare) knows about
//! a request that the request body does not say: whose it is, who asked, and
//! what the surface kept itself.

use crate::techniques::Techniques;
use windlass_protocol::{Item, PromptParam};

use crate::config::ClientToolsStatus;
use crate::ports::agent::store::DEFAULT_TENANT;

/// The caller's side of one request, built by the surface before prepare.
///
/// `RunContext::default()` is the SDK's case: the default tenant, no
/// principal, the engine's settings.
///
/// ```
/// # use windlass_engine::{ClientToolsStatus, RunContext};
/// let ctx = RunContext::for_tenant("acme")
///     .principal("ci-key".to_owned())
///     .client_tools_status(ClientToolsStatus::RequiresAction);
/// assert_eq!(ctx.tenant(), "acme");
/// ```
#[derive(Debug, Clone)]
pub struct RunContext {
    pub(crate) tenant: String,
    pub(crate) principal: Option<String>,
    pub(crate) client_tools_status: Option<ClientToolsStatus>,
    pub(crate) known: Option<Vec<Item>>,
    pub(crate) identity: Option<Identity>,
    pub(crate) prompt: Option<PromptParam>,
    pub(crate) techniques: Option<Techniques>,
}

/// A response's id and creation time, fixed by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub id: String,
    pub created_at: u64,
}

impl Default for RunContext {
    fn default() -> Self {
        RunContext::for_tenant(DEFAULT_TENANT)
    }
}

impl RunContext {
    /// A request of `tenant`: history and references are read from its rows
    /// only (another tenant's id is unknown), and the response is stored as
    /// its.
    pub fn for_tenant(tenant: impl Into<String>) -> Self {
        RunContext {
            tenant: tenant.into(),
            principal: None,
            client_tools_status: None,
            known: None,
            identity: None,
            prompt: None,
            techniques: None,
        }
    }

    /// Names the caller the policy sees (an API key's name, an SDK user).
    pub fn principal(mut self, principal: impl Into<Option<String>>) -> Self {
        self.principal = principal.into();
        self
    }

    /// How a pause for the client ends, instead of the engine's setting.
    pub fn client_tools_status(mut self, status: ClientToolsStatus) -> Self {
        self.client_tools_status = Some(status);
        self
    }

    /// The context of the request's `previous_response_id` when the surface
    /// kept it itself (an unstored response earlier on the same WebSocket):
    /// used instead of the store. See [`PreparedRun::context`](crate::PreparedRun::context).
    pub fn known_context(mut self, context: impl Into<Option<Vec<Item>>>) -> Self {
        self.known = context.into();
        self
    }

    /// Gives the response a known id and creation time: a queued background
    /// response started again after a restart keeps the ones it was given.
    pub fn identity(mut self, id: impl Into<String>, created_at: u64) -> Self {
        self.identity = Some(Identity {
            id: id.into(),
            created_at,
        });
        self
    }

    /// The stored prompt the surface resolved into this request's
    /// instructions and input: echoed on the response as `prompt`.
    pub fn prompt(mut self, prompt: impl Into<Option<PromptParam>>) -> Self {
        self.prompt = prompt.into();
        self
    }

    /// The caller's own techniques (an API key's), instead of the server's
    /// set; the request's `metadata.windlass_techniques` still applies over
    /// them.
    pub fn techniques(mut self, techniques: impl Into<Option<Techniques>>) -> Self {
        self.techniques = techniques.into();
        self
    }

    /// The tenant the response will belong to.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }
}
