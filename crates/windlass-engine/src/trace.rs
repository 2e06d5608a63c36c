//! Builds the execution trace of a response (the data type is
//! [`Trace`], beside the store port that keeps it) from the run events.

use std::collections::HashMap;

use serde_json::Value;

use crate::ports::agent::events::{CallOutcome, CallVerdict, Rejection, RunEvent};
use crate::ports::agent::provider::FinishReason;
use crate::ports::agent::tools::ToolOwner;
use crate::ports::agent::trace::{Trace, TraceAction, TraceCheck, TraceStep};

/// Builds a [`Trace`] from run events.
#[derive(Debug, Default)]
pub(crate) struct TraceRecorder {
    trace: Trace,
    /// Call id -> index of its latest action.
    actions: HashMap<String, usize>,
}

impl TraceRecorder {
    pub(crate) fn new(response_id: &str) -> TraceRecorder {
        TraceRecorder {
            trace: Trace {
                response_id: response_id.to_owned(),
                ..Trace::default()
            },
            actions: HashMap::new(),
        }
    }

    pub(crate) fn record(&mut self, event: &RunEvent) {
        match event {
            RunEvent::TurnStarted { .. } => {}
            RunEvent::TurnFinished(t) => {
                let usage = t.usage.unwrap_or_default();
                self.trace.steps.push(TraceStep {
                    index: t.turn,
                    duration_ms: t.duration.as_secs_f64() * 1000.0,
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    total_tokens: usage.total_tokens,
                    finish_reason: t.finish.as_ref().map(finish_name),
                    tool_calls: t.tool_calls,
                    verification: t.verification,
                });
            }
            RunEvent::CallDecided(c) => {
                let (decision, denied_because, arguments) = match &c.verdict {
                    CallVerdict::Run { arguments } => ("allow", None, arguments.as_str()),
                    CallVerdict::Client { arguments } => ("client", None, arguments.as_str()),
                    CallVerdict::Rejected { why, .. } => (
                        "deny",
                        Some(rejection_name(*why)),
                        c.call.arguments.as_str(),
                    ),
                    CallVerdict::NeedsApproval => ("approval", None, c.call.arguments.as_str()),
                    CallVerdict::Deferred => ("deferred", None, c.call.arguments.as_str()),
                };
                self.actions
                    .insert(c.call.call_id.clone(), self.trace.actions.len());
                self.trace.actions.push(TraceAction {
                    step: c.turn,
                    call_id: c.call.call_id.clone(),
                    tool: c.call.name.clone(),
                    owner: c.owner.as_ref().map(owner_name),
                    arguments: redacted_arguments(arguments),
                    decision: decision.to_owned(),
                    denied_because: denied_because.map(str::to_owned),
                    rule: c.rule.clone(),
                    duration_ms: None,
                    outcome: "pending".to_owned(),
                    output_bytes: None,
                });
            }
            RunEvent::CheckFinished(c) => self.trace.checks.push(TraceCheck {
                step: c.turn,
                draft: c.draft.clone(),
                prompt: c.prompt.clone(),
                answer: c.answer.clone(),
                outcome: c.outcome.as_str().to_owned(),
            }),
            RunEvent::CallFinished(r) => {
                if let Some(&i) = self.actions.get(&r.call_id) {
                    let a = &mut self.trace.actions[i];
                    a.outcome = r.outcome.as_str().to_owned();
                    if r.outcome != CallOutcome::Denied {
                        a.duration_ms = Some(r.duration.as_secs_f64() * 1000.0);
                    }
                    a.output_bytes = Some(r.output_bytes);
                }
            }
        }
    }

    pub(crate) fn finish(self) -> Trace {
        self.trace
    }
}

fn finish_name(f: &FinishReason) -> String {
    match f {
        FinishReason::Stop => "stop".to_owned(),
        FinishReason::StopSequence(_) => "stop_sequence".to_owned(),
        FinishReason::Length => "length".to_owned(),
        FinishReason::ToolCalls => "tool_calls".to_owned(),
        FinishReason::ContentFilter => "content_filter".to_owned(),
        FinishReason::Other(s) => s.clone(),
    }
}

fn rejection_name(r: Rejection) -> &'static str {
    match r {
        Rejection::UnknownTool => "unknown_tool",
        Rejection::NotAllowed => "not_allowed",
        Rejection::PolicyDenied => "policy",
        Rejection::UserDenied => "user",
        Rejection::PerTurnLimit => "max_tool_calls_per_turn",
        Rejection::ApprovalUnavailable => "approval_unavailable",
        Rejection::InvalidArguments => "invalid_arguments",
        Rejection::Repeated => "repeated_call",
        Rejection::Stalled => "stalled_call",
    }
}

fn owner_name(o: &ToolOwner) -> String {
    match o {
        ToolOwner::Client => "client".to_owned(),
        ToolOwner::Mcp { label } => format!("mcp:{label}"),
        ToolOwner::Builtin { .. } => "builtin".to_owned(),
        ToolOwner::Local { .. } => "local".to_owned(),
    }
}

/// Marks what an argument name says is secret.
const SECRET_MARKERS: [&str; 5] = ["token", "secret", "password", "key", "authorization"];

/// The arguments as JSON with secret-looking values redacted; text that is
/// not JSON is kept as a string.
pub fn redacted_arguments(raw: &str) -> Value {
    match serde_json::from_str::<Value>(raw) {
        Ok(mut v) => {
            redact(&mut v);
            v
        }
        Err(_) => Value::String(raw.to_owned()),
    }
}

fn redact(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                let key = k.to_ascii_lowercase();
                if SECRET_MARKERS.iter().any(|m| key.contains(m)) {
                    *val = Value::String("[redacted]".to_owned());
                } else {
                    redact(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ports::agent::events::{CallReport, CallResult, TurnReport};
    use crate::ports::agent::tools::ToolCall;
    use serde_json::json;

    fn decided(id: &str, verdict: CallVerdict, owner: Option<ToolOwner>) -> RunEvent {
        RunEvent::CallDecided(CallReport {
            turn: Some(0),
            call: ToolCall {
                call_id: id.into(),
                name: "t".into(),
                arguments: r#"{"password":"p","n":1}"#.into(),
            },
            owner,
            verdict,
            rule: Some("r1".into()),
        })
    }

    #[test]
    fn run_events_become_steps_and_actions() {
        let mut rec = TraceRecorder::new("resp_1");
        rec.record(&RunEvent::TurnStarted { turn: 0 });
        rec.record(&RunEvent::TurnFinished(TurnReport {
            turn: 0,
            duration: Duration::from_millis(3),
            usage: None,
            finish: Some(FinishReason::ToolCalls),
            tool_calls: 2,
            verification: false,
            error: None,
        }));
        let run = CallVerdict::Run {
            arguments: r#"{"password":"rewritten"}"#.into(),
        };
        rec.record(&decided(
            "c1",
            run,
            Some(ToolOwner::Mcp { label: "fs".into() }),
        ));
        rec.record(&decided(
            "c2",
            CallVerdict::Deferred,
            Some(ToolOwner::Client),
        ));
        rec.record(&RunEvent::CallFinished(CallResult {
            call_id: "c1".into(),
            name: "t".into(),
            outcome: CallOutcome::Error,
            duration: Duration::from_millis(2),
            output_bytes: 5,
        }));
        let t = rec.finish();
        assert_eq!(t.steps.len(), 1);
        assert_eq!(t.steps[0].finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(t.actions.len(), 2);
        let a = &t.actions[0];
        assert_eq!(a.owner.as_deref(), Some("mcp:fs"));
        // The arguments the call ran with, redacted.
        assert_eq!(a.arguments, json!({"password": "[redacted]"}));
        assert_eq!(
            (a.decision.as_str(), a.outcome.as_str()),
            ("allow", "error")
        );
        assert_eq!(a.rule.as_deref(), Some("r1"));
        assert_eq!(a.output_bytes, Some(5));
        assert!(a.duration_ms.is_some());
        let b = &t.actions[1];
        assert_eq!(
            (b.decision.as_str(), b.outcome.as_str()),
            ("deferred", "pending")
        );
        assert_eq!(b.arguments, json!({"password": "[redacted]", "n": 1}));
    }

    #[test]
    fn secrets_are_redacted_at_any_depth() {
        let v = redacted_arguments(
            r#"{"path":"a.txt","api_key":"sk-1","nested":{"Authorization":"Bearer x","n":[{"password":"p"}]},"keep":1}"#,
        );
        assert_eq!(
            v,
            json!({"path": "a.txt", "api_key": "[redacted]",
                   "nested": {"Authorization": "[redacted]", "n": [{"password": "[redacted]"}]},
                   "keep": 1})
        );
        assert_eq!(redacted_arguments("not json"), json!("not json"));
    }
}
