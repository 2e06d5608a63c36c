//! `windlass run` (the binary) against the scripted upstream.

use std::process::{Command, Output};

use serde_json::Value;
use windlass_testkit::{FakeUpstream, Reply};

/// Runs the binary off the async runtime (the fake upstream keeps serving).
async fn windlass(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args(&args)
            .env_remove("WINDLASS_UPSTREAM_URL")
            .env_remove("WINDLASS_MODEL")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("RUST_LOG")
            .output()
            .expect("run the windlass binary")
    })
    .await
    .unwrap()
}

fn args(up: &FakeUpstream, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec!["run".into()];
    a.extend(extra.iter().map(|s| s.to_string()));
    a.extend([
        "--upstream".into(),
        up.base_url(),
        "--model".into(),
        "m".into(),
    ]);
    a
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test]
async fn run_streams_the_answer_and_ends_with_a_summary() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("Paris is the capital of France.").usage(12, 7));
    let out = windlass(args(
        &up,
        &["What is the capital of France?", "--system", "Be brief."],
    ))
    .await;
    let (text, notes) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{text}\n{notes}");
    // Only the answer on stdout; the summary on stderr.
    assert_eq!(text, "Paris is the capital of France.\n");
    let last = notes.lines().last().unwrap();
    assert!(
        last.starts_with("1 turn, 0 tool calls, 19 tokens (12 in, 7 out), ") && last.ends_with('s'),
        "{last}"
    );
    // Piped output is plain: no escape codes.
    assert!(
        !text.contains('\x1b') && !notes.contains('\x1b'),
        "{notes:?}"
    );
    let req = up.last_request().unwrap();
    assert_eq!(req["model"], "m");
    assert_eq!(req["messages"][0]["content"], "Be brief.");
    assert_eq!(
        req["messages"][1]["content"],
        "What is the capital of France?"
    );
}

#[tokio::test]
async fn run_shows_tool_calls_and_their_results() {
    let up = FakeUpstream::start().await;
    // No `--mcp` server is attached: the call is unknown, shown, and fed
    // back as an error.
    up.push(Reply::tool_call("get_weather", r#"{"city":"Paris"}"#));
    up.push(Reply::text("I cannot check the weather."));
    let out = windlass(args(&up, &["Weather in Paris?"])).await;
    let (text, notes) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{notes}");
    let lines: Vec<&str> = notes.lines().collect();
    assert_eq!(
        lines[0], r#"[tool] get_weather {"city":"Paris"}"#,
        "{notes}"
    );
    assert_eq!(lines[1], "[error] Unknown tool: get_weather");
    assert!(
        lines.last().unwrap().starts_with("2 turns, 1 tool call, "),
        "{notes}"
    );
    assert_eq!(text, "I cannot check the weather.\n");
}

#[tokio::test]
async fn run_json_prints_the_final_response() {
    let up = FakeUpstream::start().await;
    up.push(Reply::text("42"));
    let out = windlass(args(&up, &["--json", "answer?"])).await;
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["output"][0]["content"][0]["text"], "42");
}

#[tokio::test]
async fn run_stops_at_max_turns_and_says_so() {
    let up = FakeUpstream::start().await;
    up.set_default(Reply::tool_call("loop", "{}"));
    let out = windlass(args(&up, &["loop", "--max-turns", "2"])).await;
    let notes = stderr(&out);
    // Incomplete: exit status 3.
    assert_eq!(out.status.code(), Some(3), "{notes}");
    assert_eq!(up.request_count(), 2);
    assert!(
        notes.lines().last().unwrap().contains("2-turn limit"),
        "{notes}"
    );
    assert_eq!(stdout(&out), "");
}

#[tokio::test]
async fn run_reports_failures_and_missing_settings() {
    let up = FakeUpstream::start().await;
    up.push(Reply::error(400, "no such model"));
    let out = windlass(args(&up, &["hi"])).await;
    // A failed run: exit status 1.
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no such model"));
    assert_eq!(stdout(&out), "");

    // A missing setting: exit status 2, like a usage error.
    let out = windlass(vec!["run".into(), "hi".into()]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--upstream"));
    let out = windlass(args(&up, &["--mcp", " ", "hi"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[tokio::test]
async fn run_picks_the_upstream_model_when_none_is_given() {
    let up = FakeUpstream::start().await;
    up.set_models(vec!["qwen2.5-1.5b".into()]);
    up.push(Reply::text("hello"));
    let out = windlass(vec![
        "run".into(),
        "hi".into(),
        "--upstream".into(),
        up.base_url(),
    ])
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(up.last_request().unwrap()["model"], "qwen2.5-1.5b");
}

#[tokio::test]
async fn run_attaches_an_mcp_server() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call("calc__add", r#"{"a":17,"b":25}"#));
    up.push(Reply::text("It is 42."));
    let (python, script) = windlass_testkit::mcp::python_stdio_command(windlass_testkit::PyMcp::V2);
    let spec = format!("calc={python} {}", script.join(" "));
    let out = windlass(args(&up, &["--mcp", &spec, "What is 17 + 25?"])).await;
    let (text, notes) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{notes}");
    assert!(notes.contains("calc__add"), "{notes}");
    assert_eq!(text, "It is 42.\n");
    // The model saw the MCP result as a tool message.
    let last = up.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["content"], "42");
}

#[tokio::test]
async fn run_trace_prints_the_trace_to_stderr() {
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call(
        "get_weather",
        r#"{"city":"Paris","api_key":"sk-1"}"#,
    ));
    up.push(Reply::text("I cannot check the weather."));
    let out = windlass(args(&up, &["--trace", "Weather in Paris?"])).await;
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("trace resp_"))
        .unwrap_or_else(|| panic!("no trace in stderr: {err}"));
    assert!(lines[start + 1].starts_with("step 0: "), "{err}");
    assert!(
        lines[start + 2].starts_with("  get_weather [unknown] deny (unknown_tool) -> denied"),
        "{err}"
    );
    assert!(lines[start + 3].starts_with("step 1: "), "{err}");
    // The trace redacts secrets (the tool line above it shows the model's
    // own arguments, as a terminal user expects).
    let trace = lines[start..].join("\n");
    assert!(!trace.contains("sk-1"), "{err}");
    assert!(trace.contains("[redacted]"), "{err}");
    assert!(!stdout(&out).contains("trace resp_"));
}

/// Runs the binary on a pseudo-terminal (util-linux `script`), as a person
/// at a terminal would; returns everything the terminal showed.
async fn on_terminal(args: Vec<String>, no_color: bool) -> String {
    tokio::task::spawn_blocking(move || {
        let mut line = String::from(env!("CARGO_BIN_EXE_windlass"));
        for a in &args {
            line.push(' ');
            line.push_str(&format!("'{}'", a.replace('\'', "'\\''")));
        }
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &line, "/dev/null"])
            .env_remove("RUST_LOG")
            .env_remove("NO_COLOR");
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        let out = cmd.output().expect("run script(1)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn colours_on_a_terminal_unless_no_color() {
    let up = FakeUpstream::start().await;
    for no_color in [false, true] {
        up.push(Reply::tool_call("get_weather", "{}"));
        up.push(Reply::text("No weather here."));
        let shown = on_terminal(args(&up, &["Weather?"]), no_color).await;
        assert!(shown.contains("No weather here."), "{shown:?}");
        assert!(shown.contains("get_weather"), "{shown:?}");
        // SGR colour sequences (ESC [ <n> m) only without NO_COLOR.
        let coloured = shown.contains("\x1b[36m") || shown.contains("\x1b[2m");
        assert_eq!(coloured, !no_color, "NO_COLOR={no_color}: {shown:?}");
    }
}
