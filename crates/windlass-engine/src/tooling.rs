//! The tools of one response: model-visible definitions, which executor owns
//! each, and which the request allows to run.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::client_shapes::ClientShape;
use crate::ports::provider::ModelTool;
use crate::ports::tools::{ToolDefinition, ToolExecutor, ToolKind, ToolOrigin};

/// Tools of a response, resolved once at prepare time.
#[derive(Clone, Default)]
pub struct ToolSet {
    defs: Vec<ToolDefinition>,
    by_name: HashMap<String, usize>,
    /// For each definition, the executor that accepts it (first match wins).
    owner: Vec<Option<usize>>,
    /// `None`: every tool may run (FR-010).
    allowed: Option<HashSet<String>>,
    /// MCP tools whose calls need a human approval first.
    approval: HashSet<String>,
    /// Client tools that go back as namespaced or custom calls.
    shapes: HashMap<String, ClientShape>,
}

/// What item a call to a tool becomes in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallKind {
    Function,
    /// An `mcp_call` of `tool` on server `label`.
    Mcp {
        label: String,
        tool: String,
    },
    /// An `mcp_approval_request`: the call waits for the client's approval.
    McpApproval {
        label: String,
        tool: String,
    },
    /// A client call in OpenAI's namespaced or custom form.
    Shaped(ClientShape),
}

/// Who handles a call by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOwner {
    /// A server-side executor (by index in the engine's list).
    Executor(usize),
    /// A tool of an MCP server, run through the engine's MCP hub.
    Mcp,
    /// The client runs it (no executor, or the function executor).
    Client,
    /// Not a tool of this request (edge case of seed 000).
    Unknown,
}

impl ToolSet {
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
            .map(|d| executors.iter().position(|e| e.can_execute(d)))
            .collect();
        ToolSet {
            defs,
            by_name,
            owner,
            allowed,
            approval: HashSet::new(),
            shapes: HashMap::new(),
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
        if self.by_name.contains_key(&def.name) {
            return false;
        }
        if needs_approval {
            self.approval.insert(def.name.clone());
        }
        self.by_name.insert(def.name.clone(), self.defs.len());
        self.defs.push(def);
        self.owner.push(None);
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
            _ => match self.shapes.get(name) {
                Some(shape) => CallKind::Shaped(shape.clone()),
                None => CallKind::Function,
            },
        }
    }

    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.defs
    }

    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.by_name.get(name).map(|&i| &self.defs[i])
    }

    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Whether the request's allowed-tools list lets `name` run.
    pub fn is_allowed(&self, name: &str) -> bool {
        self.allowed.as_ref().is_none_or(|a| a.contains(name))
    }

    /// Who runs calls to `name`. Calls to tools owned by a `Function`-kind
    /// executor go back to the client (seed 000 FR-018).
    pub fn owner(&self, name: &str, executors: &[Arc<dyn ToolExecutor>]) -> CallOwner {
        let Some(&i) = self.by_name.get(name) else {
            return CallOwner::Unknown;
        };
        if let ToolOrigin::Mcp { .. } = self.defs[i].origin {
            return CallOwner::Mcp;
        }
        match self.owner[i] {
            Some(e) if executors[e].kind() != ToolKind::Function => CallOwner::Executor(e),
            _ => CallOwner::Client,
        }
    }

    /// The definitions as the upstream sees them.
    pub fn model_tools(&self) -> Vec<ModelTool> {
        self.defs
            .iter()
            .map(|d| ModelTool {
                name: d.name.clone(),
                description: d.description.clone(),
                parameters: d.parameters.clone(),
                strict: d.strict,
            })
            .collect()
    }
}
