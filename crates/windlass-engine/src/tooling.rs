//! The tools of one response: model-visible definitions, which executor owns
//! each, and which the request allows to run.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use crate::client_shapes::ClientShape;
use crate::ports::provider::ModelTool;
use crate::ports::tools::{ToolDefinition, ToolExecutor, ToolKind, ToolOrigin};

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

/// Who handles calls to a tool, decided once when the request is prepared.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolOwner {
    /// The client runs it: the response pauses at its calls.
    Client,
    /// A tool of the request's MCP server with this label, run through the hub.
    Mcp { label: String },
    /// A gateway executor (by index in the engine's list).
    Builtin { executor: usize },
    /// An executor of the embedding program (the SDK's local tools).
    Local { executor: usize },
}

impl ToolOwner {
    /// The owner of a tool given the executor (if any) that accepts it.
    fn of(executor: Option<(usize, ToolKind)>) -> ToolOwner {
        match executor {
            None | Some((_, ToolKind::Function)) => ToolOwner::Client,
            Some((i, ToolKind::Local)) => ToolOwner::Local { executor: i },
            Some((i, _)) => ToolOwner::Builtin { executor: i },
        }
    }

    /// Whether the server runs its calls.
    pub fn runs_on_server(&self) -> bool {
        !matches!(self, ToolOwner::Client)
    }
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

/// The model-visible name of an MCP server's tool: `label__tool`, in the
/// character set chat-completions servers accept, at most 64 characters
/// (a long name keeps its start and gets a hash of the whole as suffix).
pub fn mcp_tool_name(server_label: &str, tool: &str) -> String {
    let full = format!("{server_label}__{tool}");
    let mut name: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() > 64 {
        // FNV-1a: stable across runs and builds, unlike the std hasher.
        let hash = full.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        name.truncate(55);
        name.push_str(&format!("_{:08x}", hash as u32));
    }
    name
}
