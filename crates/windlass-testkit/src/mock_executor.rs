//! A scriptable server-side tool executor for loop tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use windlass_engine::{
    ToolCall, ToolContext, ToolDefinition, ToolError, ToolExecutor, ToolKind, ToolResult,
};

/// What a mock tool does when called.
#[derive(Clone, Debug)]
pub enum MockBehavior {
    /// Returns this text.
    Ok(String),
    /// Returns the call's arguments back as output.
    Echo,
    /// Fails with this message (an error output for the model).
    Fail(String),
    /// Sleeps, then returns the text (for concurrency and timeout tests).
    Sleep(Duration, String),
}

/// Executes the tools it was given behaviours for; records every call.
#[derive(Clone, Default)]
pub struct MockExecutor {
    tools: Arc<Mutex<HashMap<String, MockBehavior>>>,
    calls: Arc<Mutex<Vec<ToolCall>>>,
    running: Arc<Mutex<(usize, usize)>>,
    /// Calls are not kept (a benchmark's millions of calls would grow the
    /// log, and the process, without bound).
    no_call_log: bool,
}

impl MockExecutor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Claims the tool `name` with `behavior`.
    pub fn tool(self, name: &str, behavior: MockBehavior) -> Self {
        if let Ok(mut t) = self.tools.lock() {
            t.insert(name.to_owned(), behavior);
        }
        self
    }

    /// Keeps no log of calls ([`calls`](Self::calls) stays empty), for
    /// long-running load.
    pub fn without_call_log(mut self) -> Self {
        self.no_call_log = true;
        self
    }

    /// Every call executed so far, in start order.
    pub fn calls(&self) -> Vec<ToolCall> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The most calls that were running at the same time.
    pub fn max_concurrency(&self) -> usize {
        self.running.lock().map(|r| r.1).unwrap_or(0)
    }

    pub fn arc(&self) -> Arc<dyn ToolExecutor> {
        Arc::new(self.clone())
    }
}

#[async_trait::async_trait]
impl ToolExecutor for MockExecutor {
    fn kind(&self) -> ToolKind {
        ToolKind::Builtin
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        self.tools
            .lock()
            .map(|t| t.contains_key(&tool.name))
            .unwrap_or(false)
    }

    async fn execute(&self, ctx: &ToolContext, call: &ToolCall) -> Result<ToolResult, ToolError> {
        let behavior = self
            .tools
            .lock()
            .ok()
            .and_then(|t| t.get(&call.name).cloned())
            .ok_or_else(|| ToolError::Failed(format!("no mock for {}", call.name)))?;
        if !self.no_call_log {
            if let Ok(mut c) = self.calls.lock() {
                c.push(call.clone());
            }
        }
        if let Ok(mut r) = self.running.lock() {
            r.0 += 1;
            r.1 = r.1.max(r.0);
        }
        let result = match behavior {
            MockBehavior::Ok(text) => Ok(ToolResult::ok(text)),
            MockBehavior::Echo => Ok(ToolResult::ok(call.arguments.clone())),
            MockBehavior::Fail(msg) => Err(ToolError::Failed(msg)),
            MockBehavior::Sleep(d, text) => {
                tokio::select! {
                    _ = tokio::time::sleep(d) => Ok(ToolResult::ok(text)),
                    _ = ctx.cancel.cancelled() => Err(ToolError::Failed("cancelled".into())),
                }
            }
        };
        if let Ok(mut r) = self.running.lock() {
            r.0 -= 1;
        }
        result
    }
}
