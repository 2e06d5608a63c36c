//! A server-side executor that sleeps, then answers, and reports how (and
//! when) each of its calls ended: finished, cancelled or dropped.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use windlass_engine::{
    ToolCall, ToolContext, ToolDefinition, ToolError, ToolExecutor, ToolKind, ToolResult,
};

/// How a probe call ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeEndKind {
    /// The sleep ran to its end.
    Finished,
    /// The response's cancel token fired while sleeping.
    Cancelled,
    /// The engine dropped the call's future.
    Dropped,
}

#[derive(Clone, Debug)]
pub struct ProbeEnd {
    pub after: Duration,
    pub how: ProbeEndKind,
}

#[derive(Default, Debug)]
struct ProbeState {
    response_ids: Vec<String>,
    started: usize,
    ended: Vec<ProbeEnd>,
}

/// A server-side executor for one tool that sleeps then answers, and records
/// the response id of each call and how (and when) each call ended.
#[derive(Clone)]
pub struct Probe {
    name: String,
    sleep: Duration,
    output: String,
    state: Arc<Mutex<ProbeState>>,
}

impl Probe {
    pub fn new(name: &str, sleep: Duration, output: &str) -> Probe {
        Probe {
            name: name.to_owned(),
            sleep,
            output: output.to_owned(),
            state: Arc::default(),
        }
    }

    pub fn arc(&self) -> Arc<dyn ToolExecutor> {
        Arc::new(self.clone())
    }

    pub fn started(&self) -> usize {
        self.state.lock().unwrap().started
    }

    pub fn ended(&self) -> Vec<ProbeEnd> {
        self.state.lock().unwrap().ended.clone()
    }

    pub fn response_ids(&self) -> Vec<String> {
        self.state.lock().unwrap().response_ids.clone()
    }

    /// Waits until `n` calls started; panics after `timeout`.
    pub async fn wait_started(&self, n: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.started() < n {
            assert!(Instant::now() < deadline, "probe: {n} calls never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until `n` calls ended; `false` on timeout.
    pub async fn wait_ended(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while self.ended().len() < n {
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }
}

struct EndGuard {
    state: Arc<Mutex<ProbeState>>,
    start: Instant,
    how: ProbeEndKind,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Ok(mut s) = self.state.lock() {
            s.ended.push(ProbeEnd {
                after: self.start.elapsed(),
                how: self.how.clone(),
            });
        }
    }
}

#[async_trait::async_trait]
impl ToolExecutor for Probe {
    fn kind(&self) -> ToolKind {
        ToolKind::Builtin
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        tool.name == self.name
    }

    async fn execute(&self, ctx: &ToolContext, _call: &ToolCall) -> Result<ToolResult, ToolError> {
        {
            let mut s = self.state.lock().unwrap();
            s.response_ids.push(ctx.response_id.clone());
            s.started += 1;
        }
        let mut guard = EndGuard {
            state: self.state.clone(),
            start: Instant::now(),
            how: ProbeEndKind::Dropped,
        };
        tokio::select! {
            _ = tokio::time::sleep(self.sleep) => {
                guard.how = ProbeEndKind::Finished;
                Ok(ToolResult::ok(self.output.clone()))
            }
            _ = ctx.cancel.cancelled() => {
                guard.how = ProbeEndKind::Cancelled;
                Err(ToolError::Failed("cancelled".into()))
            }
        }
    }
}
