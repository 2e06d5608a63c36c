//! Engine settings: the loop's limits and the server-wide choices.

use std::time::Duration;

use crate::techniques::Techniques;

/// How a response that pauses for the client (client function calls, MCP
/// approval requests) ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ClientToolsStatus {
    /// OpenAI's behaviour, which every OpenAI client expects: status
    /// `completed`, event `response.completed`; the pending calls are in `output`.
    #[default]
    Completed,
    /// Opt-in: status `requires_action`, event `response.requires_action`,
    /// which neither the OpenAI API nor OpenResponses defines.
    RequiresAction,
}

impl ClientToolsStatus {
    /// Parses `requires_action` / `requires-action` / `completed`.
    pub fn parse(s: &str) -> Option<ClientToolsStatus> {
        match s {
            "completed" => Some(ClientToolsStatus::Completed),
            "requires_action" | "requires-action" => Some(ClientToolsStatus::RequiresAction),
            _ => None,
        }
    }
}

/// Whether the loop runs tools or returns the model's calls as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LoopMode {
    /// Tools run server-side where an owner is configured; calls to client
    /// tools pause the response for the client.
    #[default]
    Agentic,
    /// One model turn; its tool calls are returned, never run, and the
    /// response ends `completed` (a plain proxy; `tool_choice: none` too).
    SingleShot,
}

/// The text of the completion check's verification prompt, sent as a
/// user message after the first text-only answer of a response that used
/// tools (without `restate_check`).
pub const VERIFICATION_PROMPT: &str = "Before I accept your answer, please verify:\n\
1. Have you completed all parts of the task?\n\
2. Have you verified your results (e.g., by reading output files)?\n\
If the task is not fully complete, continue working. If it is complete, restate your final answer.";

/// How the engine runs every response: limits, timeouts, the loop's mode and how client tool calls end a response.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Model used when a request names none.
    pub default_model: Option<String>,
    /// Model turns per response before it ends `incomplete` / `max_turns`.
    pub max_agentic_turns: u32,
    /// Server cap on server-executed tool calls per response; the effective
    /// budget is min(request `max_tool_calls`, this).
    pub max_tool_calls: u64,
    /// Server-owned calls of one turn that run at once.
    pub tool_concurrency: usize,
    /// Per-call timeout; a timeout becomes an error output.
    pub tool_timeout: Duration,
    /// Wall-clock limit for a whole response (None: unlimited).
    pub max_response_time: Option<Duration>,
    /// How a response that pauses for the client ends (`completed` or `requires_action`).
    pub client_tools_status: ClientToolsStatus,
    /// Whether the loop runs tools or returns the model's calls as they are.
    pub loop_mode: LoopMode,
    /// Tool calls one model turn may make; the rest get an error output
    /// (None: no limit).
    pub max_tool_calls_per_turn: Option<u32>,
    /// Consecutive failed tool calls that end the response `incomplete` /
    /// `tool_error_threshold` (None: never).
    pub tool_error_threshold: Option<u32>,
    /// The completion check: the first text-only answer of a response that
    /// used tools is met with [`VERIFICATION_PROMPT`]; the next one is final.
    pub completion_check: bool,
    /// The loop's task-success techniques (the completion check is on when
    /// either this or `completion_check` says so).
    pub techniques: Techniques,
    /// Hosted tool types (`file_search`, `web_search`, `code_interpreter`;
    /// `*` for all) a request may carry although no executor serves them:
    /// they are left out (the response lists them in `PreparedRun::
    /// dropped_tools`) instead of the request being refused. Default:
    /// `web_search`, which Codex CLI sends on every request.
    pub drop_unserved_hosted: Vec<String>,
}

impl EngineConfig {
    /// The techniques a response starts from: `techniques`, with the
    /// completion check on when `completion_check` says so too.
    pub fn server_techniques(&self) -> Techniques {
        let mut t = self.techniques;
        t.completion_check |= self.completion_check;
        t
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            default_model: None,
            max_agentic_turns: 10,
            max_tool_calls: 128,
            tool_concurrency: 8,
            tool_timeout: Duration::from_secs(60),
            max_response_time: None,
            client_tools_status: ClientToolsStatus::Completed,
            loop_mode: LoopMode::Agentic,
            max_tool_calls_per_turn: None,
            tool_error_threshold: None,
            completion_check: false,
            techniques: Techniques::default(),
            drop_unserved_hosted: vec!["web_search".to_owned()],
        }
    }
}
