//! The tools of one response: model-visible definitions, which executor owns
//! each, and which the request allows to run.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::ports::provider::ModelTool;
use crate::ports::tools::{ToolDefinition, ToolExecutor, ToolKind};

/// Tools of a response, resolved once at prepare time.
#[derive(Clone, Default)]
pub struct ToolSet {
    defs: Vec<ToolDefinition>,
    by_name: HashMap<String, usize>,
    /// For each definition, the executor that accepts it (first match wins).
    owner: Vec<Option<usize>>,
    /// `None`: every tool may run (FR-010).
    allowed: Option<HashSet<String>>,
}

/// Who handles a call by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOwner {
    /// A server-side executor (by index in the engine's list).
    Executor(usize),
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
