//! The tools of one response: model-visible definitions, which executor owns
//! each, and which the request allows to run.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use windlass_protocol::hosted_replay::HostedKind;

use crate::client_shapes::ClientShape;
use crate::ports::agent::provider::ModelTool;
use crate::ports::agent::tools::{ToolDefinition, ToolExecutor, ToolOrigin, ToolOwner};

/// Tools of a response, resolved once at prepare time.
#[derive(Clone, Default)]
pub struct ToolSet {
    defs: Vec<ToolDefinition>,
    by_name: HashMap<String, usize>,
    /// For each definition, who runs its calls.
    owner: Vec<ToolOwner>,
    /// `None`: every tool may run.
    allowed: Option<HashSet<String>>,
    /// MCP tools whose calls need a human approval first.
    approval: HashSet<String>,
    /// Client tools that go back as namespaced or custom calls.
    shapes: HashMap<String, ClientShape>,
    /// The definitions in upstream form, built on the first model turn and
    /// shared by the later ones (reset when a tool is added).
    model: OnceLock<Arc<[ModelTool]>>,
}

/// What item a call to a tool becomes in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallKind {
    /// A `function_call` (the client's, or one the gateway runs).
    Function,
    /// An `mcp_call` of `tool` on server `label`.
    Mcp {
        /// The MCP server's label.
        label: String,
        /// The server's own name for the tool.
        tool: String,
    },
    /// An `mcp_approval_request`: the call waits for the client's approval.
    McpApproval {
        /// The MCP server's label.
        label: String,
        /// The server's own name for the tool.
        tool: String,
    },
    /// A client call in OpenAI's namespaced or custom form.
    Shaped(ClientShape),
    /// A hosted tool the gateway runs: the call is its own item
    /// (`file_search_call`, ...), not a function call.
    Hosted(HostedKind),
}

impl ToolSet {
    /// Resolves `defs` once: each definition's owner among `executors`, and which may run (`allowed`; `None`: all).
    pub fn new(
        defs: Vec<ToolDefinition>,
        executors: &[Arc<dyn ToolExecutor>],
        allowed: Option<HashSet<String>>,
    ) -> ToolSet {
        let by_name = defs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.clone(), i))
            .collect();
        let owner = defs
            .iter()
            .map(|d| {
                let found = executors.iter().enumerate().find(|(_, e)| e.can_execute(d));
                ToolOwner::of(found.map(|(i, e)| (i, e.kind())))
            })
            .collect();
        ToolSet {
            defs,
            by_name,
            owner,
            allowed,
            approval: HashSet::new(),
            shapes: HashMap::new(),
            model: OnceLock::new(),
        }
    }

    /// Records how calls to client tools of `namespace` or `custom` type go
    /// back to the client (keyed by model-visible name).
    pub fn with_shapes(mut self, shapes: impl IntoIterator<Item = (String, ClientShape)>) -> Self {
        self.shapes.extend(shapes);
        self
    }

    /// Adds the tools an MCP server listed. A name already taken (two tools
    /// that only differ in characters the model cannot see) keeps the first.
    pub fn add_mcp(&mut self, def: ToolDefinition, needs_approval: bool) -> bool {
        let label = match &def.origin {
            ToolOrigin::Mcp { server_label, .. } => server_label.clone(),
            _ => return false,
        };
        if needs_approval && !self.by_name.contains_key(&def.name) {
            self.approval.insert(def.name.clone());
        }
        self.add(def, ToolOwner::Mcp { label })
    }

    /// Adds the tools executors contribute (e.g. built-ins) that the
    /// request does not already name.
    pub fn add_executor_tools(&mut self, executors: &[Arc<dyn ToolExecutor>]) {
        for (i, e) in executors.iter().enumerate() {
            for def in e.definitions() {
                self.add(def, ToolOwner::of(Some((i, e.kind()))));
            }
        }
    }

    fn add(&mut self, def: ToolDefinition, owner: ToolOwner) -> bool {
        if self.by_name.contains_key(&def.name) {
            return false;
        }
        self.by_name.insert(def.name.clone(), self.defs.len());
        self.defs.push(def);
        self.model = OnceLock::new();
        self.owner.push(owner);
        true
    }

    /// The output item a call to `name` becomes.
    pub fn call_kind(&self, name: &str) -> CallKind {
        match self.get(name).map(|d| &d.origin) {
            Some(ToolOrigin::Mcp {
                server_label,
                name: tool,
            }) => {
                let (label, tool) = (server_label.clone(), tool.clone());
                if self.approval.contains(name) {
                    CallKind::McpApproval { label, tool }
                } else {
                    CallKind::Mcp { label, tool }
                }
            }
            Some(ToolOrigin::Hosted(h)) => CallKind::Hosted(h.kind),
            _ => match self.shapes.get(name) {
                Some(shape) => CallKind::Shaped(shape.clone()),
                None => CallKind::Function,
            },
        }
    }

    /// The definitions, in request order.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.defs
    }

    /// The definition of that model-visible name.
    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.by_name.get(name).map(|&i| &self.defs[i])
    }

    /// Whether the response has no tools.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Whether `name` is a hosted tool the gateway runs (`file_search`, ...).
    pub fn is_hosted(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|d| matches!(d.origin, ToolOrigin::Hosted(_)))
    }

    /// Whether the request's allowed-tools list lets `name` run.
    pub fn is_allowed(&self, name: &str) -> bool {
        self.allowed.as_ref().is_none_or(|a| a.contains(name))
    }

    /// Who runs calls to `name`; `None` for a name that is not a tool of
    /// this request.
    pub fn owner(&self, name: &str) -> Option<&ToolOwner> {
        self.by_name.get(name).map(|&i| &self.owner[i])
    }

    /// The definitions as the upstream sees them, built once and shared.
    pub fn model_tools(&self) -> Arc<[ModelTool]> {
        self.model
            .get_or_init(|| {
                self.defs
                    .iter()
                    .map(|d| ModelTool {
                        name: d.name.clone(),
                        description: d.description.clone(),
                        parameters: d.parameters.clone(),
                        strict: d.strict,
                    })
                    .collect()
            })
            .clone()
    }
}
