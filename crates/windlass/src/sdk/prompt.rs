//! [`Client::prompt`]: one call from a prompt to the final answer.

use futures::StreamExt;
use windlass_engine::Trace;
use windlass_protocol::Usage;

use super::agent::Agent;
use super::block::{Block, Message, Termination};
use super::client::Client;
use super::error::SdkError;

/// What [`Client::prompt`] produced: the answer and what it took.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PromptResult {
    /// The model's final answer (its last assistant message).
    pub text: String,
    /// How the last run ended; [`Termination::Completed`] when the model answered.
    pub termination: Termination,
    /// Tokens of every model turn, summed.
    pub usage: Usage,
    /// Model turns made.
    pub turns: u32,
    /// Tool calls the model made.
    pub tool_calls: u32,
    /// The stored response the conversation continues from.
    pub response_id: String,
    /// The execution trace of the last run.
    pub trace: Option<Trace>,
}

impl PromptResult {
    /// Whether the model gave its final answer.
    pub fn is_completed(&self) -> bool {
        self.termination.is_completed()
    }
}

impl Client {
    /// Sends `prompt` and runs tools until the model's final answer. In
    /// auto mode the engine runs them; in manual mode the agent's registered
    /// tools run here (each pause is one more round, at most
    /// `max_tool_iterations` of them). Hooks fire as for [`query`](Self::query).
    ///
    /// ```no_run
    /// # async fn demo(agent: windlass::sdk::Agent) -> Result<(), windlass::sdk::SdkError> {
    /// let client = windlass::sdk::Client::new(agent);
    /// let answer = client.prompt("What is 25 + 17?").await?;
    /// println!("{} ({} turns, {} tool calls)", answer.text, answer.turns, answer.tool_calls);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn prompt(&self, prompt: impl Into<String>) -> Result<PromptResult, SdkError> {
        self.query(prompt).await?;
        let mut total = PromptResult {
            text: String::new(),
            termination: Termination::Completed,
            usage: Usage::default(),
            turns: 0,
            tool_calls: 0,
            response_id: String::new(),
            trace: None,
        };
        let mut rounds = 0;
        loop {
            let mut blocks = self.receive();
            while let Some(block) = blocks.next().await {
                if let Block::Done {
                    termination,
                    usage,
                    turns,
                    tool_calls,
                    response_id,
                } = block
                {
                    total.termination = termination;
                    total.usage.add(&usage);
                    total.turns += turns;
                    total.tool_calls += tool_calls;
                    total.response_id = response_id;
                }
            }
            drop(blocks);
            rounds += 1;
            let more = total.termination == Termination::AwaitingToolResults
                && rounds <= self.agent().max_tool_iterations();
            if !more {
                break;
            }
            for call in self.pending_tool_calls() {
                let outcome = self.run_tool(&call).await;
                self.add_tool_result(&call.id, outcome).await?;
            }
            self.continue_turn().await?;
        }
        total.text = self
            .history()
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { content, .. } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
        total.trace = self.last_trace();
        Ok(total)
    }
}

impl Agent {
    /// [`Client::prompt`] on a new conversation with this agent.
    pub async fn prompt(&self, prompt: impl Into<String>) -> Result<PromptResult, SdkError> {
        Client::new(self.clone()).prompt(prompt).await
    }
}
