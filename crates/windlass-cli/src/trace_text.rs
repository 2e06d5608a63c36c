//! The execution trace as text for a terminal: a line per model turn, an
//! indented line per tool call.

use std::fmt::Write;

use windlass_engine::{Trace, TraceAction, TraceStep};

pub(crate) fn render(trace: &Trace) -> String {
    let mut out = format!("trace {}\n", trace.response_id);
    let settled: Vec<&TraceAction> = trace.actions.iter().filter(|a| a.step.is_none()).collect();
    for a in settled {
        let _ = writeln!(out, "  {}", action(a));
    }
    for s in &trace.steps {
        let _ = writeln!(out, "{}", step(s));
        for a in trace.actions.iter().filter(|a| a.step == Some(s.index)) {
            let _ = writeln!(out, "  {}", action(a));
        }
        for c in trace.checks.iter().filter(|c| c.step == s.index) {
            let _ = writeln!(out, "  check {}: {:?}", c.outcome, c.answer);
        }
    }
    out
}

fn step(s: &TraceStep) -> String {
    format!(
        "step {}{}: {:.1} ms, {} tokens ({} in, {} out), finish {}, {} tool call(s)",
        s.index,
        if s.verification {
            " (verification)"
        } else {
            ""
        },
        s.duration_ms,
        s.total_tokens,
        s.input_tokens,
        s.output_tokens,
        s.finish_reason.as_deref().unwrap_or("-"),
        s.tool_calls,
    )
}

fn action(a: &TraceAction) -> String {
    let mut line = format!(
        "{} [{}] {}",
        a.tool,
        a.owner.as_deref().unwrap_or("unknown"),
        a.decision
    );
    if let Some(why) = &a.denied_because {
        let _ = write!(line, " ({why})");
    }
    if let Some(rule) = &a.rule {
        let _ = write!(line, " rule={rule}");
    }
    let _ = write!(line, " -> {}", a.outcome);
    if let Some(ms) = a.duration_ms {
        let _ = write!(line, ", {ms:.1} ms");
    }
    if let Some(bytes) = a.output_bytes {
        let _ = write!(line, ", {bytes} bytes");
    }
    let _ = write!(line, ", args {}", a.arguments);
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_and_their_actions_are_lines() {
        let trace = Trace {
            response_id: "resp_1".into(),
            steps: vec![TraceStep {
                index: 0,
                duration_ms: 2.0,
                input_tokens: 5,
                output_tokens: 3,
                total_tokens: 8,
                finish_reason: Some("tool_calls".into()),
                tool_calls: 1,
                verification: false,
            }],
            actions: vec![TraceAction {
                step: Some(0),
                call_id: "call_1".into(),
                tool: "shell".into(),
                owner: Some("builtin".into()),
                arguments: json!({"token": "[redacted]"}),
                decision: "deny".into(),
                denied_because: Some("policy".into()),
                rule: Some("shell:allowlist".into()),
                duration_ms: None,
                outcome: "denied".into(),
                output_bytes: Some(12),
            }],
            checks: Vec::new(),
        };
        let text = render(&trace);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "trace resp_1");
        assert!(lines[1].starts_with("step 0: 2.0 ms, 8 tokens (5 in, 3 out), finish tool_calls"));
        assert_eq!(
            lines[2],
            r#"  shell [builtin] deny (policy) rule=shell:allowlist -> denied, 12 bytes, args {"token":"[redacted]"}"#
        );
    }
}
