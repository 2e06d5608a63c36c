//! Fitting the transcript into the model's context before each model turn,
//! when the request asks for it: `context_management` (compaction) first,
//! then `truncation: "auto"` (oldest items dropped). A policy step of the
//! loop for every surface; a request asking for neither costs nothing here.
//!
//! The budget is the model's context length (from the provider port: the
//! upstream's model metadata or the operator's `context_length`) less the
//! room left for the answer (`max_output_tokens`, else an eighth of the
//! context). With no known context length only an explicit
//! `compact_threshold` can trigger anything.
//!
//! Compaction writes the summary as a `compaction` output item (as OpenAI
//! shows it); the upstream transcript then starts from it (see
//! `upstream::upstream_transcript`), in this response and in any that
//! continues it.

mod overflow;
mod truncate;

pub(crate) use overflow::Fit;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    Compaction, ContextManagement, CreateResponseRequest, Item, Truncation, Usage,
};

use crate::compaction::{seal, COMPACTION_PROMPT, COMPACTION_REQUEST};
use crate::count::count_or_estimate;
use crate::emitter::Emitter;
use crate::engine::EngineInner;
use crate::error::{FailureKind, RunFailure};
use crate::finish::Ending;
use crate::ports::agent::provider::{
    ModelEvent, ModelProvider, ModelRequest, ModelToolChoice, Transcript,
};
use crate::prepared::PreparedRun;

/// Counting again after a truncation pass: at most this many passes.
const MAX_PASSES: usize = 6;

/// The request of the next model turn, fitted. `build` makes the request
/// from the response's output as it stands (called again after a
/// compaction item is added). Usage of a compaction pass is added to
/// `usage`.
pub(crate) async fn fitted_request(
    inner: &EngineInner,
    run: &PreparedRun,
    out: &mut Emitter<'_>,
    usage: &mut Option<Usage>,
    build: impl Fn(&[Item]) -> ModelRequest,
    cancel: &CancellationToken,
) -> Result<ModelRequest, Ending> {
    let request = build(&out.response.output);
    let truncate = run.request.truncation == Some(Truncation::Auto);
    let compaction = compaction(&run.request);
    if !truncate && compaction.is_none() {
        return Ok(request);
    }
    let provider = inner.provider.as_ref();
    let budget = budget(provider, &request).await?;
    let Some(threshold) = compaction.and_then(|c| c.compact_threshold).or(budget) else {
        return Ok(request);
    };
    let mut request = request;
    if compaction.is_some() && tokens(provider, &request).await? > threshold {
        let (item, spent) = compact(provider, &request, budget, cancel).await?;
        if let Some(u) = spent {
            usage.get_or_insert_with(Usage::default).add(&u);
        }
        out.add_done_item(item).await;
        request = build(&out.response.output);
    }
    match budget {
        Some(budget) if truncate => fit(provider, request, budget).await,
        _ => Ok(request),
    }
}

/// The request's compaction setting, if it asks for one.
fn compaction(request: &CreateResponseRequest) -> Option<&ContextManagement> {
    request
        .context_management
        .iter()
        .flatten()
        .find(|c| c.kind == ContextManagement::COMPACTION)
}

/// Whether the request fits its own transcript to the context
/// (otherwise [`Fit`] ends a run about to outgrow it).
pub(crate) fn manages_context(request: &CreateResponseRequest) -> bool {
    request.truncation == Some(Truncation::Auto) || compaction(request).is_some()
}

/// `request` as `truncation: "auto"` would send it (the same cut as a
/// turn makes), for counting.
pub(crate) async fn truncated(
    provider: &dyn ModelProvider,
    request: ModelRequest,
) -> Result<ModelRequest, RunFailure> {
    let to_failure = |e: Ending| match e {
        Ending::Failed(f) => f,
        _ => RunFailure::new(FailureKind::Internal, "counting was interrupted"),
    };
    match budget(provider, &request).await.map_err(to_failure)? {
        Some(budget) => fit(provider, request, budget).await.map_err(to_failure),
        None => Ok(request),
    }
}

/// Input tokens the next turn may take, when the context length is known.
async fn budget(
    provider: &dyn ModelProvider,
    request: &ModelRequest,
) -> Result<Option<u64>, Ending> {
    let Some(context) = provider
        .context_length(&request.model)
        .await
        .map_err(provider_failed)?
    else {
        return Ok(None);
    };
    let room = request.max_output_tokens.unwrap_or(context / 8);
    Ok(Some(context.saturating_sub(room)))
}

async fn tokens(provider: &dyn ModelProvider, request: &ModelRequest) -> Result<u64, Ending> {
    count_or_estimate(provider, request)
        .await
        .map(|c| c.input_tokens)
        .map_err(provider_failed)
}

/// `request` with its oldest items dropped until it fits `budget`; fails
/// `context_length_exceeded` when even the newest item does not fit.
async fn fit(
    provider: &dyn ModelProvider,
    mut request: ModelRequest,
    budget: u64,
) -> Result<ModelRequest, Ending> {
    for _ in 0..MAX_PASSES {
        let count = tokens(provider, &request).await?;
        if count <= budget {
            return Ok(request);
        }
        let mut items = request.transcript.to_vec();
        let bytes: usize = items.iter().map(size).sum();
        // Tokens scale with bytes closely enough to aim; the next count checks.
        let target = (bytes as u128 * budget as u128 * 9 / (count as u128 * 10)) as usize;
        if truncate::drop_oldest(&mut items, target, size) == 0 {
            break;
        }
        request.transcript = Transcript::from(items);
    }
    if tokens(provider, &request).await? <= budget {
        return Ok(request);
    }
    Err(Ending::Failed(RunFailure::new(
        FailureKind::ContextLengthExceeded,
        format!(
            "The input does not fit the model's context ({budget} input tokens) even after \
             truncation: its newest item alone is too long."
        ),
    )))
}

fn size(item: &Item) -> usize {
    serde_json::to_string(item).map_or(0, |s| s.len())
}

/// The compaction pass: the model summarizes the transcript (itself cut
/// oldest-first to fit, if need be) and the summary becomes a `compaction`
/// item.
async fn compact(
    provider: &dyn ModelProvider,
    request: &ModelRequest,
    budget: Option<u64>,
    cancel: &CancellationToken,
) -> Result<(Item, Option<Usage>), Ending> {
    let mut transcript = request.transcript.clone();
    transcript.push(Item::user_text(COMPACTION_REQUEST));
    let instructions = match &request.instructions {
        Some(own) => {
            format!("{COMPACTION_PROMPT}\n\nThe conversation's own instructions were:\n{own}")
        }
        None => COMPACTION_PROMPT.to_owned(),
    };
    let mut pass = ModelRequest {
        model: request.model.clone(),
        instructions: Some(instructions),
        transcript,
        tool_choice: ModelToolChoice::None,
        stream: true,
        ..ModelRequest::default()
    };
    if let Some(budget) = budget {
        pass = fit(provider, pass, budget).await?;
    }
    let (summary, usage) = summarize(provider, pass, cancel).await?;
    if summary.trim().is_empty() {
        return Err(Ending::Failed(RunFailure::new(
            FailureKind::UpstreamProtocol,
            "the upstream model returned no summary for compaction",
        )));
    }
    let item = Item::Compaction(Compaction {
        id: Some(new_id(prefix::COMPACTION)),
        encrypted_content: seal(&summary),
        created_by: None,
    });
    Ok((item, usage))
}

/// The text of one model turn (no tools), and its usage.
async fn summarize(
    provider: &dyn ModelProvider,
    pass: ModelRequest,
    cancel: &CancellationToken,
) -> Result<(String, Option<Usage>), Ending> {
    let mut stream = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(Ending::Cancelled),
        s = provider.start(pass) => s.map_err(provider_failed)?,
    };
    let (mut text, mut usage) = (String::new(), None);
    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Ending::Cancelled),
            next = stream.next() => next,
        };
        match next {
            None => return Ok((text, usage)),
            Some(Err(e)) => return Err(provider_failed(e)),
            Some(Ok(ModelEvent::TextDelta(d))) => text.push_str(&d),
            Some(Ok(ModelEvent::TextDeltaLogprobs { delta, .. })) => text.push_str(&delta),
            Some(Ok(ModelEvent::Usage(u))) => usage = Some(u),
            Some(Ok(_)) => {}
        }
    }
}

fn provider_failed(e: crate::ports::agent::provider::ProviderError) -> Ending {
    Ending::Failed(RunFailure::from_provider(&e))
}
