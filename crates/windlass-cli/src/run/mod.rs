//! `windlass run "prompt"`: one prompt through the agent loop, in-process,
//! with the answer streamed to the terminal.
//!
//! Built on the SDK ([`windlass::sdk`]) in auto mode, so it runs on the same
//! engine driver as the server. Only the answer goes to stdout; tool calls,
//! their results, a spinner (on a terminal) and the closing summary (turns,
//! tool calls, tokens, seconds) go to stderr. `--json` prints only the final
//! response object. The exit status tells how the run ended ([`exit`]).

mod view;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use windlass_engine::ModelProvider;
use windlass_protocol::{McpApprovalMode, McpRequireApproval};
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};
use windlass_tools::McpServerConfig;

use crate::cli::RunArgs;
use crate::config::ConfigError;
use view::View;
use windlass::sdk::{Agent, Block, Client, Termination, Usage};

/// Exit statuses of `windlass run`.
pub mod exit {
    /// The run completed.
    pub const OK: u8 = 0;
    /// The run failed (upstream error, tool set-up, I/O).
    pub const FAILED: u8 = 1;
    /// Bad arguments or settings (clap uses 2 for usage errors too).
    pub const USAGE: u8 = 2;
    /// The run stopped early: the turn limit or another limit.
    pub const INCOMPLETE: u8 = 3;
    /// Interrupted (Ctrl-C): 128 + SIGINT, as shells expect.
    pub const INTERRUPTED: u8 = 130;
}

/// Why the command could not run to a termination.
enum RunError {
    /// Arguments or settings are wrong; nothing was sent.
    Usage(String),
    Failed(String),
}

fn usage(e: impl std::fmt::Display) -> RunError {
    RunError::Usage(e.to_string())
}

fn failed(e: impl std::fmt::Display) -> RunError {
    RunError::Failed(e.to_string())
}

/// Runs the command; errors are printed to stderr.
pub async fn run(args: RunArgs) -> ExitCode {
    init_logging();
    match execute(args).await {
        Ok(code) => ExitCode::from(code),
        Err(RunError::Usage(e)) => {
            eprintln!("windlass: {e}");
            ExitCode::from(exit::USAGE)
        }
        Err(RunError::Failed(e)) => {
            eprintln!("windlass: {e}");
            ExitCode::from(exit::FAILED)
        }
    }
}

/// The exit status for how the run ended.
fn exit_code(termination: Option<&Termination>) -> u8 {
    match termination {
        Some(Termination::Completed) => exit::OK,
        Some(Termination::Interrupted) => exit::INTERRUPTED,
        Some(
            Termination::MaxIterations { .. }
            | Termination::Incomplete { .. }
            | Termination::AwaitingToolResults,
        ) => exit::INCOMPLETE,
        // `Failed`, no ending at all, or an ending newer than this command.
        Some(_) | None => exit::FAILED,
    }
}

/// Logs only when asked for (`RUST_LOG`), and never on stdout.
fn init_logging() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .try_init();
    }
}

async fn execute(args: RunArgs) -> Result<u8, RunError> {
    let prompt = if args.prompt == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(failed)?;
        s
    } else {
        args.prompt.clone()
    };
    // OpenAI's own variables are the last resort, as in `serve`.
    let env = crate::config::Environment::current();
    let openai = |name: &str| env.get(name).map(str::to_owned);
    let url = args
        .upstream_url
        .clone()
        .or_else(|| openai("OPENAI_BASE_URL"))
        .ok_or_else(|| usage(ConfigError::NoUpstream))?;
    let mut cfg = ChatProviderConfig::new(url);
    cfg.api_key = args
        .upstream_api_key
        .clone()
        .or_else(|| openai("OPENAI_API_KEY"));
    let provider: Arc<dyn ModelProvider> =
        Arc::new(ChatCompletionsProvider::new(cfg).map_err(usage)?);
    let model = match args.model.clone() {
        Some(m) => m,
        None => provider
            .list_models()
            .await
            .map_err(failed)?
            .into_iter()
            .next()
            .map(|m| m.id)
            .ok_or_else(|| failed("the upstream lists no models: pass --model"))?,
    };
    let mut builder = Agent::builder()
        .model(model)
        .provider(provider)
        .auto_execute_tools(true)
        .max_tool_iterations(args.max_turns)
        .completion_check(args.completion_check);
    if let Some(s) = &args.system {
        builder = builder.system_prompt(s.clone());
    }
    for (i, spec) in args.mcp.iter().enumerate() {
        builder = builder.mcp_server(mcp_server(spec, i).map_err(usage)?);
    }
    if let Some(path) = &args.config {
        let (builtins, policy) = crate::govern::from_file(path).await.map_err(usage)?;
        builder = builder.builtins(builtins).policy(policy);
    }
    let client = Client::new(builder.build().map_err(usage)?);
    let started = Instant::now();
    client.query(prompt).await.map_err(failed)?;

    let tty = std::io::stderr().is_terminal();
    let color = view::use_color(tty, std::env::var_os("NO_COLOR"));
    let mut view = View::new(!args.json, tty, color);
    let mut blocks = client.receive();
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    let mut interrupted = false;
    let mut last = None;
    loop {
        let block = tokio::select! {
            b = blocks.next() => b,
            _ = &mut ctrl_c, if !interrupted => {
                interrupted = true;
                client.interrupt();
                continue;
            }
        };
        let Some(block) = block else { break };
        view.show(&block, started.elapsed());
        if let Block::Done { termination, .. } = block {
            last = Some(termination);
        }
    }
    drop(blocks);
    view.finish();

    if args.trace {
        if let Some(trace) = client.last_trace() {
            eprint!("{}", crate::trace_text::render(&trace));
        }
    }
    if args.json {
        let response = client
            .last_response()
            .ok_or_else(|| failed("the run produced no response"))?;
        let text = serde_json::to_string_pretty(&response).map_err(failed)?;
        println!("{text}");
    }
    if let Some(Termination::Failed { message, .. }) = &last {
        eprintln!("windlass: {message}");
    }
    Ok(exit_code(last.as_ref()))
}

/// `--mcp [LABEL=]URL|COMMAND` as a server config.
fn mcp_server(spec: &str, index: usize) -> Result<McpServerConfig, String> {
    let (label, target) = match spec.split_once('=') {
        Some((l, t)) if windlass_tools::config::valid_label(l) && !t.is_empty() => {
            (Some(l.to_owned()), t)
        }
        _ => (None, spec),
    };
    let mut server = McpServerConfig::default();
    if target.starts_with("http://") || target.starts_with("https://") {
        server.url = Some(target.to_owned());
    } else {
        let mut words = target.split_whitespace().map(str::to_owned);
        server.command = Some(words.next().ok_or("--mcp needs a URL or a command")?);
        server.args = words.collect();
    }
    server.label = label.unwrap_or_else(|| format!("mcp{}", index + 1));
    server.require_approval = Some(McpRequireApproval::Mode(McpApprovalMode::Never));
    Ok(server)
}

/// The closing line: `2 turns, 1 tool call, 61 tokens (50 in, 11 out), 0.42s`.
fn summary(t: &Termination, u: &Usage, turns: u32, calls: u32, elapsed: Duration) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut s = format!(
        "{}, {}, {} ({} in, {} out), {:.2}s",
        plural(turns.into(), "turn", "turns"),
        plural(calls.into(), "tool call", "tool calls"),
        plural(u.total_tokens, "token", "tokens"),
        u.input_tokens,
        u.output_tokens,
        elapsed.as_secs_f64()
    );
    match t {
        Termination::Completed => {}
        Termination::MaxIterations { limit } => s.push_str(&format!(
            " (stopped: the {limit}-turn limit; raise --max-turns)"
        )),
        Termination::Incomplete { reason } => s.push_str(&format!(" (incomplete: {reason})")),
        Termination::Interrupted => s.push_str(" (interrupted)"),
        Termination::Failed { code, .. } => s.push_str(&format!(" (failed: {code})")),
        Termination::AwaitingToolResults => s.push_str(" (waiting for tool results)"),
        other => s.push_str(&format!(" ({other:?})")),
    }
    s
}

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_termination() {
        assert_eq!(exit_code(Some(&Termination::Completed)), 0);
        assert_eq!(exit_code(Some(&Termination::MaxIterations { limit: 2 })), 3);
        assert_eq!(
            exit_code(Some(&Termination::Incomplete {
                reason: windlass_engine::StopReason::MaxOutputTokens
            })),
            3
        );
        assert_eq!(exit_code(Some(&Termination::Interrupted)), 130);
        assert_eq!(exit_code(None), 1);
    }

    #[test]
    fn summary_line() {
        let u = Usage {
            input_tokens: 50,
            output_tokens: 11,
            total_tokens: 61,
            ..Usage::default()
        };
        assert_eq!(
            summary(
                &Termination::Completed,
                &u,
                2,
                1,
                Duration::from_millis(420)
            ),
            "2 turns, 1 tool call, 61 tokens (50 in, 11 out), 0.42s"
        );
        assert!(summary(
            &Termination::MaxIterations { limit: 3 },
            &u,
            3,
            3,
            Duration::ZERO
        )
        .contains("3-turn limit"));
    }

    #[test]
    fn long_values_are_cut_to_one_line() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
