//! Running the server-owned calls of one turn: concurrently up to the
//! configured fan-out, results appended and announced in the model's order.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use tracing::{debug, warn, Instrument};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{FunctionCallOutput, Item, ItemStatus, ToolOutput};

use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::hosted;
use crate::mcp::calls;
use crate::ports::agent::events::{CallOutcome, CallResult, RunEvent};
use crate::ports::agent::mcp::McpError;
use crate::ports::agent::tools::{
    HostedCall, HostedProgress, Progress, ToolCall, ToolContext, ToolError, ToolOrigin, ToolResult,
};
use crate::prepared::PreparedRun;
use crate::spans;
use crate::state::{Disposition, PendingCall, Runner};
use crate::tooling::CallKind;

/// What a round of calls did.
pub(crate) struct Ran {
    /// Calls really executed (rejected ones are not).
    pub executed: u64,
    /// For each call of the plan, in model order: whether its output is an error.
    pub failed: Vec<bool>,
}

/// One call's end as the round reports it.
struct Done {
    call: ToolCall,
    result: ToolResult,
    /// Set when an MCP failure was the server's or the transport's.
    protocol: Option<i64>,
    duration: Duration,
    rejected: bool,
}

/// Runs `plan`; `None` when cancelled (running calls are dropped, which
/// stops them).
pub(crate) async fn execute_calls(
    inner: &EngineInner,
    run: &PreparedRun,
    out: &mut Emitter<'_>,
    plan: Vec<PendingCall>,
    ctx: &ToolContext,
) -> Option<Ran> {
    let sequential = run.request.parallel_tool_calls == Some(false);
    let fan_out = if sequential {
        1
    } else {
        inner.config.tool_concurrency.max(1)
    };
    let executed = plan
        .iter()
        .filter(|p| matches!(p.disposition, Disposition::Execute { .. }))
        .count() as u64;
    // MCP calls get their item and `in_progress` event before any runs;
    // hosted calls' items (open since the model's turn) their working stage.
    let mut mcp_items: HashMap<String, usize> = HashMap::new();
    let mut hosted_items: HashMap<String, usize> = HashMap::new();
    for p in &plan {
        if let Some((label, tool)) = mcp_target(run, &p.call) {
            let idx = calls::start_call(out, &run.mcp, &p.call, &label, &tool).await;
            mcp_items.insert(p.call.call_id.clone(), idx);
        } else if let Some(idx) = hosted_item(out, run, &p.call) {
            if matches!(p.disposition, Disposition::Execute { .. }) {
                hosted::calls::start(out, idx).await;
            }
            hosted_items.insert(p.call.call_id.clone(), idx);
        }
    }
    let (progress_tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let mut results = stream::iter(plan)
        .map(|p| {
            let ctx = hosted_context(run, ctx, &p.call, &progress_tx);
            run_one(inner, run, ctx, p)
        })
        .buffered(fan_out);
    let mut failed = Vec::new();
    loop {
        let next = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return None,
            Some((item_id, p)) = progress.recv() => {
                if let Some(&idx) = hosted_items.get(&item_id) {
                    hosted::calls::progress(out, idx, p).await;
                }
                continue;
            }
            next = results.next() => next,
        };
        let Some(done) = next else {
            break;
        };
        failed.push(done.result.is_error);
        let outcome = match (done.rejected, done.result.is_error) {
            (true, _) => CallOutcome::Denied,
            (false, true) => CallOutcome::Error,
            (false, false) => CallOutcome::Ok,
        };
        let report = CallResult {
            call_id: done.call.call_id.clone(),
            name: done.call.name.clone(),
            outcome,
            duration: done.duration,
            output_bytes: output_bytes(&done.result.output),
        };
        match (
            mcp_items.get(&done.call.call_id),
            hosted_items.get(&done.call.call_id),
        ) {
            (Some(&idx), _) => calls::finish_call(out, idx, done.result, done.protocol).await,
            (None, Some(&idx)) => hosted::calls::finish(out, idx, done.result).await,
            (None, None) => {
                out.add_done_item(output_item(&done.call, done.result))
                    .await;
            }
        }
        out.observe(RunEvent::CallFinished(report)).await;
    }
    Some(Ran { executed, failed })
}

fn output_bytes(o: &ToolOutput) -> usize {
    match o {
        ToolOutput::Text(t) => t.len(),
        ToolOutput::Parts(_) => o.joined_text().len(),
    }
}

/// The MCP server label and tool name a call goes to, if it is an MCP call.
fn mcp_target(run: &PreparedRun, call: &ToolCall) -> Option<(String, String)> {
    match run.tools.call_kind(&call.name) {
        CallKind::Mcp { label, tool } | CallKind::McpApproval { label, tool } => {
            Some((label, tool))
        }
        CallKind::Function | CallKind::Shaped(_) => run.mcp.targets.get(&call.call_id).cloned(),
        CallKind::Hosted(_) => None,
    }
}

/// The open item of a hosted call (its id is the call's id).
fn hosted_item(out: &Emitter<'_>, run: &PreparedRun, call: &ToolCall) -> Option<usize> {
    if !matches!(run.tools.call_kind(&call.name), CallKind::Hosted(_)) {
        return None;
    }
    let idx = out
        .response
        .output
        .iter()
        .position(|it| it.id() == Some(call.call_id.as_str()))?;
    out.is_open(idx).then_some(idx)
}

/// The round's context, with the hosted tool, item id and progress channel
/// when the call is to a hosted tool.
fn hosted_context(
    run: &PreparedRun,
    ctx: &ToolContext,
    call: &ToolCall,
    tx: &tokio::sync::mpsc::UnboundedSender<(String, HostedProgress)>,
) -> ToolContext {
    let mut ctx = ctx.clone();
    if let Some(ToolOrigin::Hosted(tool)) = run.tools.get(&call.name).map(|d| &d.origin) {
        ctx.hosted = Some(HostedCall {
            tool: (**tool).clone(),
            item_id: call.call_id.clone(),
            progress: Progress::new(call.call_id.clone(), tx.clone()),
        });
    }
    ctx
}

async fn run_one(
    inner: &EngineInner,
    run: &PreparedRun,
    ctx: ToolContext,
    pending: PendingCall,
) -> Done {
    let PendingCall { call, disposition } = pending;
    let not_run = |call: ToolCall, text: String| Done {
        call,
        result: ToolResult::error(text),
        protocol: None,
        duration: Duration::ZERO,
        rejected: true,
    };
    let (runner, arguments) = match disposition {
        Disposition::Execute { runner, arguments } => (runner, arguments),
        Disposition::Reject(reason) => {
            debug!(tool = %call.name, call_id = %call.call_id, outcome = "rejected", %reason, "tool call not run");
            return not_run(call, reason);
        }
        // The loop never plans these for execution.
        Disposition::Client | Disposition::Approval | Disposition::Deferred => {
            return not_run(call, "tool call was not executed".to_owned())
        }
    };
    let span = spans::tool_call(&call, ctx.turn);
    run_call(inner, run, &ctx, call, runner, arguments)
        .instrument(span)
        .await
}

/// Runs one planned call with the arguments decided for it, then gives the
/// policy its say on the result.
async fn run_call(
    inner: &EngineInner,
    run: &PreparedRun,
    ctx: &ToolContext,
    call: ToolCall,
    runner: Runner,
    arguments: String,
) -> Done {
    let started = Instant::now();
    let run_call = ToolCall {
        arguments,
        ..call.clone()
    };
    let (result, protocol) = match runner {
        Runner::Executor(i) => (call_executor(inner, i, ctx, &run_call).await, None),
        Runner::Mcp => call_mcp(inner, run, ctx, &run_call).await,
    };
    let pctx = run.policy_context(ctx.turn, false);
    let result = inner.policy.after_call(&pctx, &run_call, result).await;
    let duration = started.elapsed();
    let ms = duration.as_secs_f64() * 1000.0;
    if result.is_error {
        // Its span is not in the info log: the line names the tool.
        warn!(tool = %call.name, duration_ms = ms, outcome = "error", "tool call failed");
    } else {
        debug!(duration_ms = ms, outcome = "ok", "tool call done");
    }
    Done {
        call,
        result,
        protocol,
        duration,
        rejected: false,
    }
}

/// A call to executor `i`, bounded by the tool timeout.
async fn call_executor(
    inner: &EngineInner,
    i: usize,
    ctx: &ToolContext,
    call: &ToolCall,
) -> ToolResult {
    let limit = inner.config.tool_timeout;
    match tokio::time::timeout(limit, inner.executors[i].execute(ctx, call)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => ToolResult::error(error_text(&call.name, &e)),
        Err(_) => timed_out(&call.name, limit),
    }
}

/// A call through the MCP hub, bounded by the tool timeout, with the
/// protocol code of a failure that was the server's or the transport's.
async fn call_mcp(
    inner: &EngineInner,
    run: &PreparedRun,
    ctx: &ToolContext,
    call: &ToolCall,
) -> (ToolResult, Option<i64>) {
    let limit = inner.config.tool_timeout;
    let called = match (inner.mcp.as_deref(), mcp_target(run, call)) {
        (Some(hub), Some((label, tool))) => match run.mcp.server(&label) {
            Some(server) => {
                let called = hub.call_tool(server, &tool, &call.arguments, &ctx.cancel);
                tokio::time::timeout(limit, called).await.ok()
            }
            None => Some(Err(McpError::Refused(format!(
                "MCP server '{label}' is not among this request's tools"
            )))),
        },
        _ => Some(Err(McpError::Refused("not an MCP tool".to_owned()))),
    };
    match called {
        Some(Ok(r)) => (r, None),
        Some(Err(e)) => (
            ToolResult::error(format!("Error: tool '{}' failed: {e}", call.name)),
            Some(calls::protocol_code(&e)),
        ),
        None => (
            timed_out(&call.name, limit),
            Some(calls::protocol_code(&McpError::Timeout(0))),
        ),
    }
}

fn timed_out(tool: &str, limit: Duration) -> ToolResult {
    ToolResult::error(error_text(
        tool,
        &ToolError::Timeout(limit.as_millis() as u64),
    ))
}

fn error_text(tool: &str, e: &ToolError) -> String {
    format!("Error: tool '{tool}' failed: {e}")
}

fn output_item(call: &ToolCall, result: ToolResult) -> Item {
    if let Some(item) = typed_output(call, &result) {
        return item;
    }
    Item::FunctionCallOutput(FunctionCallOutput {
        id: Some(new_id(prefix::FUNCTION_CALL_OUTPUT)),
        call_id: call.call_id.clone(),
        output: result.output,
        status: Some(ItemStatus::Completed),
        is_error: result.is_error.then_some(true),
    })
}

/// A server-run `shell` or `apply_patch` call's answer: the executor's
/// `shell_call_output` / `apply_patch_call_output`, unless the policy turned
/// the result into an error after the run (then a function output with the
/// policy's text answers the call, as a client may answer one).
fn typed_output(call: &ToolCall, result: &ToolResult) -> Option<Item> {
    let item = result.item.as_deref()?;
    if crate::client_shapes::outputs::answered_call(item) != Some(call.call_id.as_str()) {
        return None;
    }
    let failed_itself = matches!(
        item,
        Item::ApplyPatchCallOutput(o) if o.status == windlass_protocol::ApplyPatchOutputStatus::Failed
    );
    match (item, result.is_error) {
        (Item::ShellCallOutput(_) | Item::ApplyPatchCallOutput(_), false) => Some(item.clone()),
        (Item::ApplyPatchCallOutput(_), true) if failed_itself => Some(item.clone()),
        _ => None,
    }
}
