//! Terminal rendering of `windlass run`: the answer goes to stdout, and
//! everything else (tool calls, results, reasoning, the spinner, the summary)
//! to stderr, so `windlass run "..." > answer.txt` captures only the answer.
//! Colours only on a terminal, and never when `NO_COLOR` is set.

use std::ffi::OsString;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;

use super::{one_line, summary};
use windlass::sdk::Block;

/// Whether to colour the decorations: on a terminal, unless `NO_COLOR` is
/// set to a non-empty value (<https://no-color.org>).
pub(super) fn use_color(stderr_is_tty: bool, no_color: Option<OsString>) -> bool {
    stderr_is_tty && no_color.is_none_or(|v| v.is_empty())
}

pub(super) struct View {
    on: bool,
    /// stderr is a terminal: arrows and a spinner instead of `[tool]` lines.
    tty: bool,
    color: bool,
    /// Whether the (shared) terminal cursor is at the start of a line.
    line_start: bool,
    /// Whether any answer text went to stdout.
    wrote_answer: bool,
    /// Tool calls running now (id, label).
    running: Vec<(String, String)>,
    spinner: Option<Spinner>,
}

impl View {
    pub(super) fn new(on: bool, tty: bool, color: bool) -> View {
        View {
            on,
            tty,
            color,
            line_start: true,
            wrote_answer: false,
            running: Vec::new(),
            spinner: None,
        }
    }

    fn style(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Answer text, to stdout.
    fn answer(&mut self, text: &str) {
        write_to(&mut std::io::stdout().lock(), text);
        self.wrote_answer = true;
        if let Some(c) = text.chars().last() {
            self.line_start = c == '\n';
        }
    }

    /// Decoration text, to stderr.
    fn note(&mut self, text: &str) {
        if !self.line_start {
            // Ends the answer's line (on stdout, where the text is).
            self.answer("\n");
        }
        write_to(&mut std::io::stderr().lock(), &format!("{text}\n"));
        self.line_start = true;
    }

    /// Ends the answer with a newline, so a shell prompt starts on its own line.
    pub(super) fn finish(&mut self) {
        self.stop_spinner();
        if self.wrote_answer && !self.line_start {
            self.answer("\n");
        }
    }

    pub(super) fn show(&mut self, block: &Block, elapsed: Duration) {
        if !self.on {
            return;
        }
        self.stop_spinner();
        match block {
            Block::Text(t) => self.answer(t),
            Block::Reasoning(t) if self.tty => {
                let t = self.style("2", t);
                write_to(&mut std::io::stderr().lock(), &t);
            }
            Block::Reasoning(_) => {}
            Block::ToolUse(call) => {
                let label = format!("{} {}", call.name, one_line(&call.input.to_string(), 120));
                let text = if self.tty {
                    format!("{} {}", self.style("36", "→"), label)
                } else {
                    format!("[tool] {label}")
                };
                self.note(&text);
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
                self.note(&text);
            }
            Block::ToolUseError { id, error, .. } => {
                self.finished(id);
                let error = one_line(error, 200);
                let text = if self.tty {
                    format!("  {} {}", self.style("31", "✗"), self.style("31", &error))
                } else {
                    format!("[error] {error}")
                };
                self.note(&text);
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
                self.note(&text);
            }
            // A kind of block newer than this view: nothing to show.
            _ => {}
        }
        if !self.running.is_empty() && self.tty {
            let names: Vec<&str> = self.running.iter().map(|(_, n)| n.as_str()).collect();
            let label = format!("running {}", names.join(", "));
            self.spinner = Some(Spinner::start(label, self.color));
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

fn write_to(out: &mut dyn Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// A one-line spinner on stderr, redrawn in place while tools run
/// (terminals only).
struct Spinner {
    active: Arc<Mutex<bool>>,
    task: JoinHandle<()>,
}

impl Spinner {
    fn start(label: String, color: bool) -> Spinner {
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
                    let frame = FRAMES[i % 10];
                    let frame = if color {
                        format!("\x1b[33m{frame}\x1b[0m")
                    } else {
                        frame.to_owned()
                    };
                    write_to(
                        &mut std::io::stderr().lock(),
                        &format!("\r\x1b[2K{frame} {label}"),
                    );
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
        write_to(&mut std::io::stderr().lock(), "\r\x1b[2K");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_turns_colours_off() {
        assert!(use_color(true, None));
        assert!(!use_color(false, None));
        assert!(!use_color(true, Some("1".into())));
        // An empty NO_COLOR does not count (no-color.org).
        assert!(use_color(true, Some("".into())));
    }
}
