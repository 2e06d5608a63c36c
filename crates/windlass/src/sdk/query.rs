//! The standalone single-shot [`query`].

use futures::StreamExt;
use windlass_protocol::Usage;

use super::agent::Agent;
use super::block::{Block, Termination, ToolUse};
use super::client::Client;
use super::error::SdkError;

/// What a single-shot [`query`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// The assistant's text, concatenated.
    pub text: String,
    /// Tool calls the model asked for (not executed).
    pub tool_uses: Vec<ToolUse>,
    /// Every block, in order (the last is `Done`).
    pub blocks: Vec<Block>,
    /// How the run ended.
    pub termination: Termination,
    /// Tokens of every model turn, summed.
    pub usage: Usage,
    /// The stored response; a later query continues from it.
    pub response_id: String,
}

/// One prompt, one model turn, no conversation kept. Tool calls are returned
/// as [`ToolUse`]s and never executed, even when the agent has
/// `auto_execute_tools` on (multi-turn tool loops belong in a [`Client`]). `UserPromptSubmit` and `PreToolUse` hooks run.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use windlass::sdk::{query, Agent};
///
/// let agent = Agent::builder()
///     .model("qwen2.5-1.5b")
///     .base_url("http://127.0.0.1:8081/v1")
///     .build()?;
/// let answer = query(&agent, "Say hello in French").await?;
/// println!("{}", answer.text);
/// # Ok(())
/// # }
/// ```
pub async fn query(agent: &Agent, prompt: impl Into<String>) -> Result<QueryResult, SdkError> {
    let client = Client::new(agent.manual());
    client.query(prompt).await?;
    let blocks: Vec<Block> = client.receive().collect().await;
    let mut text = String::new();
    let mut tool_uses = Vec::new();
    let mut termination = Termination::Failed {
        code: "no_result".into(),
        message: "the run produced no result".into(),
    };
    let mut usage = Usage::default();
    let mut response_id = String::new();
    for b in &blocks {
        match b {
            Block::Text(t) => text.push_str(t),
            Block::ToolUse(t) => tool_uses.push(t.clone()),
            Block::Done {
                termination: t,
                usage: u,
                response_id: id,
                ..
            } => {
                termination = t.clone();
                usage = *u;
                response_id = id.clone();
            }
            _ => {}
        }
    }
    Ok(QueryResult {
        text,
        tool_uses,
        blocks,
        termination,
        usage,
        response_id,
    })
}
