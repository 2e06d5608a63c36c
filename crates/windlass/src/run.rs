//! `windlass run "prompt"`: one prompt through the agent loop, in-process,
//! with the answer streamed to the terminal.
//!
//! Built on the SDK ([`crate::sdk`]) in auto mode, so it runs on the same
//! engine driver as the server. On a terminal, tool calls get a spinner
//! while they run; piped, the output is plain lines. The last line is a
//! summary: turns, tool calls, tokens, seconds. `--json` prints only the
//! final response object.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::task::JoinHandle;
use windlass_engine::ModelProvider;
use windlass_protocol::{McpApprovalMode, McpRequireApproval};
use windlass_providers::{ChatCompletionsProvider, ChatProviderConfig};
use windlass_tools::McpServerConfig;

use crate::cli::RunArgs;
use crate::config::ConfigError;
use crate::sdk::{Agent, Block, Client, Termination, Usage};

/// Exit status after an interrupt (128 + SIGINT), as shells expect.
const EXIT_INTERRUPTED: u8 = 130;

/// Runs the command; errors are printed to stderr.
pub async fn run(args: RunArgs) -> ExitCode {
    init_logging();
    match execute(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("windlass: {e}");
            ExitCode::FAILURE
        }
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

async fn execute(args: RunArgs) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let prompt = if args.prompt == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        s
    } else {
        args.prompt.clone()
    };
    let url = args.upstream_url.clone().ok_or(ConfigError::NoUpstream)?;
    let mut cfg = ChatProviderConfig::new(url);
    cfg.api_key = args.upstream_api_key.clone();
    let provider: Arc<dyn ModelProvider> = Arc::new(ChatCompletionsProvider::new(cfg)?);
    let model = match args.model.clone() {
        Some(m) => m,
        None => provider
            .list_models()
            .await?
            .into_iter()
            .next()
            .map(|m| m.id)
            .ok_or("the upstream lists no models: pass --model")?,
    };
    let mut builder = Agent::builder()
        .model(model)
        .provider(provider)
        .auto_execute_tools(true)
        .max_tool_iterations(args.max_turns);
    if let Some(s) = &args.system {
        builder = builder.system_prompt(s.clone());
    }
    for (i, spec) in args.mcp.iter().enumerate() {
        builder = builder.mcp_server(mcp_server(spec, i)?);
    }
    if let Some(path) = &args.config {
        let (builtins, policy) = crate::govern::from_file(path).await?;
        builder = builder.builtins(builtins).policy(policy);
    }
    let client = Client::new(builder.build()?);
    let started = Instant::now();
    client.query(prompt).await?;

    let mut view = View::new(!args.json, std::io::stdout().is_terminal());
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
    view.stop_spinner();

    if args.json {
        let response = client
            .last_response()
            .ok_or("the run produced no response")?;
        println!("{}", serde_json::to_string_pretty(&response)?);
    }
    Ok(match last {
        Some(Termination::Failed { message, .. }) => {
            eprintln!("windlass: {message}");
            ExitCode::FAILURE
        }
        Some(Termination::Interrupted) => ExitCode::from(EXIT_INTERRUPTED),
        Some(_) => ExitCode::SUCCESS,
        None => ExitCode::FAILURE,
    })
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

/// Terminal rendering of the block stream.
struct View {
    on: bool,
    tty: bool,
    /// Whether the cursor is at the start of a line.
    line_start: bool,
    /// Tool calls running now (id, label).
    running: Vec<(String, String)>,
    spinner: Option<Spinner>,
}

impl View {
    fn new(on: bool, tty: bool) -> View {
        View {
            on,
            tty,
            line_start: true,
            running: Vec::new(),
            spinner: None,
        }
    }

    fn style(&self, code: &str, text: &str) -> String {
        if self.tty {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn write(&mut self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        if let Some(c) = text.chars().last() {
            self.line_start = c == '\n';
        }
    }

    fn line(&mut self, text: &str) {
        if !self.line_start {
            self.write("\n");
        }
        self.write(&format!("{text}\n"));
    }

    fn show(&mut self, block: &Block, elapsed: Duration) {
        if !self.on {
            return;
        }
        self.stop_spinner();
        match block {
            Block::Text(t) => self.write(t),
            Block::Reasoning(t) if self.tty => {
                let t = self.style("2", t);
                self.write(&t);
            }
            Block::Reasoning(_) => {}
            Block::ToolUse(call) => {
                let label = format!("{} {}", call.name, one_line(&call.input.to_string(), 120));
                let text = if self.tty {
                    format!("{} {}", self.style("36", "→"), label)
                } else {
                    format!("[tool] {label}")
                };
                self.line(&text);
                self.running.push((call.id.clone(), call.name.clone()));
            }
            Block::ToolResult { id, content, .. } => {
                self.finished(id);
                let content = one_line(content, 200);
                let text = if self.tty {
                    format!("  {} {content}", self.style("32", "←"))
                } else {
                    format!("[result] {content}")
                };
                self.line(&text);
            }
            Block::ToolUseError { id, error, .. } => {
                self.finished(id);
                let error = one_line(error, 200);
                let text = if self.tty {
                    format!("  {} {}", self.style("31", "✗"), self.style("31", &error))
                } else {
                    format!("[error] {error}")
                };
                self.line(&text);
            }
            Block::Done {
                termination,
                usage,
                turns,
                tool_calls,
                ..
            } => {
                self.running.clear();
                let text = summary(termination, usage, *turns, *tool_calls, elapsed);
                let text = self.style("2", &text);
                if !self.line_start {
                    self.write("\n");
                }
                self.line(&text);
            }
        }
        if !self.running.is_empty() && self.tty {
            let names: Vec<&str> = self.running.iter().map(|(_, n)| n.as_str()).collect();
            self.spinner = Some(Spinner::start(format!("running {}", names.join(", "))));
        }
    }

    fn finished(&mut self, id: &str) {
        self.running.retain(|(i, _)| i != id);
    }

    fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner.take() {
            s.stop();
        }
    }
}

/// A one-line spinner redrawn in place while tools run (terminals only).
struct Spinner {
    active: Arc<Mutex<bool>>,
    task: JoinHandle<()>,
}

impl Spinner {
    fn start(label: String) -> Spinner {
        const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
        let active = Arc::new(Mutex::new(true));
        let flag = active.clone();
        let task = tokio::spawn(async move {
            let mut i = 0usize;
            loop {
                {
                    let on = flag.lock().unwrap_or_else(|e| e.into_inner());
                    if !*on {
                        return;
                    }
                    let mut out = std::io::stdout().lock();
                    let _ = write!(out, "\r\x1b[2K\x1b[33m{}\x1b[0m {label}", FRAMES[i % 10]);
                    let _ = out.flush();
                }
                i += 1;
                tokio::time::sleep(Duration::from_millis(80)).await;
            }
        });
        Spinner { active, task }
    }

    /// Stops drawing and clears the line; no frame is drawn after this returns.
    fn stop(self) {
        let mut on = self.active.lock().unwrap_or_else(|e| e.into_inner());
        *on = false;
        self.task.abort();
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\r\x1b[2K");
        let _ = out.flush();
    }
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
