//! Running the server-owned calls of one turn: concurrently up to the
//! configured fan-out, results appended and announced in the model's order.

use std::time::Instant;

use futures::stream::{self, StreamExt};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn, Instrument};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{FunctionCallOutput, Item, ItemStatus};

use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::ports::policy::PolicyContext;
use crate::ports::tools::{ToolCall, ToolContext, ToolError, ToolResult};
use crate::state::{Disposition, PendingCall};

/// Runs `plan`; returns how many calls were really executed, or `None` when
/// cancelled (running calls are dropped, which stops them).
pub(crate) async fn execute_calls(
    inner: &EngineInner,
    out: &mut Emitter<'_>,
    plan: Vec<PendingCall>,
    ctx: &ToolContext,
    sequential: bool,
) -> Option<u64> {
    let fan_out = if sequential {
        1
    } else {
        inner.config.tool_concurrency.max(1)
    };
    let executed = plan
        .iter()
        .filter(|p| matches!(p.disposition, Disposition::Execute { .. }))
        .count() as u64;
    let model = out.response.model.clone();
    let mut results = stream::iter(plan)
        .map(|p| run_one(inner, ctx, &model, p))
        .buffered(fan_out);
    loop {
        let next = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return None,
            next = results.next() => next,
        };
        let Some((call, result)) = next else { break };
        out.add_done_item(output_item(&call, result)).await;
    }
    Some(executed)
}

async fn run_one(
    inner: &EngineInner,
    ctx: &ToolContext,
    model: &str,
    pending: PendingCall,
) -> (ToolCall, ToolResult) {
    let PendingCall { call, disposition } = pending;
    let (executor, arguments) = match disposition {
        Disposition::Execute {
            executor,
            arguments,
        } => (executor, arguments),
        Disposition::Reject(reason) => {
            info!(tool = %call.name, call_id = %call.call_id, outcome = "rejected", %reason, "tool call not run");
            return (call, ToolResult::error(reason));
        }
        // The loop never plans these for execution.
        Disposition::Client | Disposition::Approval => {
            return (call, ToolResult::error("tool call was not executed"))
        }
    };
    let span = tracing::info_span!("tool_call", tool = %call.name, call_id = %call.call_id, turn = ctx.turn);
    async {
        let started = Instant::now();
        let run_call = ToolCall {
            arguments,
            ..call.clone()
        };
        let exec = &inner.executors[executor];
        let result =
            match tokio::time::timeout(inner.config.tool_timeout, exec.execute(ctx, &run_call))
                .await
            {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => ToolResult::error(error_text(&call.name, &e)),
                Err(_) => ToolResult::error(error_text(
                    &call.name,
                    &ToolError::Timeout(inner.config.tool_timeout.as_millis() as u64),
                )),
            };
        let pctx = PolicyContext {
            response_id: &ctx.response_id,
            model,
            turn: ctx.turn,
        };
        let result = inner.policy.after_call(&pctx, &run_call, result).await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        if result.is_error {
            warn!(duration_ms = ms, outcome = "error", "tool call failed");
        } else {
            info!(duration_ms = ms, outcome = "ok", "tool call done");
        }
        (call, result)
    }
    .instrument(span)
    .await
}

fn error_text(tool: &str, e: &ToolError) -> String {
    format!("Error: tool '{tool}' failed: {e}")
}

fn output_item(call: &ToolCall, result: ToolResult) -> Item {
    Item::FunctionCallOutput(FunctionCallOutput {
        id: Some(new_id(prefix::FUNCTION_CALL_OUTPUT)),
        call_id: call.call_id.clone(),
        output: result.output,
        status: Some(ItemStatus::Completed),
        is_error: result.is_error.then_some(true),
    })
}

/// A token that fires with the response's, for one turn's tools.
pub(crate) fn child(cancel: &CancellationToken) -> CancellationToken {
    cancel.child_token()
}
