//! With neither `truncation: "auto"` nor `context_management` asked for, a
//! transcript about to outgrow the model's context ends the response with
//! a clear error naming the context length, before the upstream is asked
//! (instead of the upstream's own 400 or 500 mid-run).
//!
//! The size of the next request is estimated from the last turn's usage
//! (its input and output both go up again) plus what was added since (tool
//! outputs, the check's prompt) at about four bytes a token. The first
//! turn is not estimated: its size is the client's input, which the
//! upstream itself measures.

use tokio_util::sync::CancellationToken;
use windlass_protocol::{Item, Usage};

use crate::error::{FailureKind, RunFailure};
use crate::finish::Ending;
use crate::ports::agent::provider::ModelProvider;

/// Bytes of serialized items per token, a deliberate over-estimate for
/// text (English runs near four characters a token; JSON adds quoting).
const BYTES_PER_TOKEN: u64 = 4;

/// The run's position against its model's context.
#[derive(Debug, Default)]
pub(crate) struct Fit {
    /// The request fits itself (truncation or compaction): nothing to check.
    managed: bool,
    /// After the last turn: its tokens in and out, the output's length and
    /// the number of hidden batches then.
    mark: Option<(u64, usize, usize)>,
    /// The model's context length, once asked (`None` inside: unknown).
    context: Option<Option<u64>>,
}

impl Fit {
    /// `managed`: the request fits its transcript itself (truncation or
    /// compaction), so nothing is checked here.
    pub(crate) fn new(managed: bool) -> Self {
        Fit {
            managed,
            ..Fit::default()
        }
    }

    pub(crate) fn turn_done(
        &mut self,
        usage: Option<&Usage>,
        output_len: usize,
        hidden_len: usize,
    ) {
        self.mark = usage.map(|u| (u.input_tokens + u.output_tokens, output_len, hidden_len));
    }
}

/// The next request's estimated tokens: the last turn's plus the items
/// added since.
pub(crate) fn estimate<'a>(last: u64, added: impl Iterator<Item = &'a Item>) -> u64 {
    let bytes: u64 = added
        .map(|item| serde_json::to_string(item).map_or(0, |s| s.len() as u64))
        .sum();
    last + bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The failure when `estimate` does not fit in `context`.
pub(crate) fn overflow(estimate: u64, context: u64) -> Option<RunFailure> {
    (estimate >= context).then(|| {
        RunFailure::new(
            FailureKind::ContextLengthExceeded,
            format!(
                "The conversation needs about {estimate} tokens for the next model turn, more \
than the model's context length of {context} tokens. Start a new conversation, shorten the input \
or lower max_turns."
            ),
        )
    })
}

impl Fit {
    /// Ends the run before a model turn that would not fit: `output` and
    /// `hidden` are what the next request carries beyond the last turn's.
    pub(crate) async fn check(
        &mut self,
        provider: &dyn ModelProvider,
        model: &str,
        output: &[Item],
        hidden: &[(usize, Vec<Item>)],
        cancel: &CancellationToken,
    ) -> Result<(), Ending> {
        let Some((last, output_len, hidden_len)) = self.mark.filter(|_| !self.managed) else {
            return Ok(());
        };
        let context = match self.context {
            Some(known) => known,
            None => {
                let asked = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(Ending::Cancelled),
                    n = provider.context_length(model) => n,
                };
                // Unknown (or not answered): the upstream decides.
                let known = asked.ok().flatten();
                self.context = Some(known);
                known
            }
        };
        let Some(context) = context else {
            return Ok(());
        };
        let added = output[output_len.min(output.len())..].iter().chain(
            hidden[hidden_len.min(hidden.len())..]
                .iter()
                .flat_map(|(_, items)| items),
        );
        match overflow(estimate(last, added), context) {
            Some(failure) => Err(Ending::Failed(failure)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_adds_the_new_items_at_four_bytes_a_token() {
        let item = Item::user_text("x".repeat(400));
        let bytes = serde_json::to_string(&item).unwrap().len() as u64;
        assert_eq!(
            estimate(1000, std::iter::once(&item)),
            1000 + bytes.div_ceil(4)
        );
        assert_eq!(estimate(7, std::iter::empty()), 7);
    }

    #[test]
    fn only_what_does_not_fit_fails_and_the_message_names_the_context() {
        assert_eq!(overflow(4095, 4096), None);
        let f = overflow(4100, 4096).expect("overflow");
        assert_eq!(f.kind, FailureKind::ContextLengthExceeded);
        assert_eq!(f.code(), "context_length_exceeded");
        assert!(
            f.message.contains("context length of 4096 tokens"),
            "{}",
            f.message
        );
        assert!(f.message.contains("about 4100 tokens"), "{}", f.message);
    }
}
