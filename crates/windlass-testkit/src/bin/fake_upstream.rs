//! `windlass-fake-upstream`: the scripted upstream as a process, scripted
//! over a control port. Prints one JSON line:
//! `{"upstream": URL, "control": URL, "gateway": URL|null}`.
//!
//! `--gateway` also starts a Windlass server in front of it, with a mock
//! server-side tool `add` (returns "42") so SDK checks can drive a real
//! multi-turn loop; `--client-tools-completed` sets `client_tools_status =
//! completed` (the default), `--client-tools-requires-action` the opt-in mode.
//! `--assistant` makes the scripted assistant (`Reply::assistant`) the reply
//! served when nothing is queued. `--completion-check` turns the gateway's
//! completion check on; `--anthropic` makes it speak the Anthropic Messages
//! wire to the upstream (chat completions otherwise).

// A test fixture's binary: it panics with the reason when it cannot start.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use windlass_engine::{ClientToolsStatus, EngineConfig};
use windlass_testkit::control::control_router;
use windlass_testkit::{FakeUpstream, Gateway, GatewayOptions, MockBehavior, MockExecutor, Reply};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let upstream = FakeUpstream::try_start().await?;
    if args.iter().any(|a| a == "--assistant") {
        upstream.set_default(Reply::assistant());
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let control = listener.local_addr()?;
    let gateway = if args.iter().any(|a| a == "--gateway") {
        let mut engine = EngineConfig::default();
        if args.iter().any(|a| a == "--client-tools-completed") {
            engine.client_tools_status = ClientToolsStatus::Completed;
        }
        if args.iter().any(|a| a == "--client-tools-requires-action") {
            engine.client_tools_status = ClientToolsStatus::RequiresAction;
        }
        engine.completion_check = args.iter().any(|a| a == "--completion-check");
        let mock = MockExecutor::new().tool("add", MockBehavior::Ok("42".into()));
        let mut opts = GatewayOptions {
            engine,
            executors: vec![mock.arc()],
            ..Default::default()
        };
        if args.iter().any(|a| a == "--anthropic") {
            opts.kind = windlass_providers::UpstreamKind::Anthropic;
        }
        Some(Gateway::start_on(upstream.clone(), opts).await)
    } else {
        None
    };
    let line = serde_json::json!({
        "upstream": upstream.base_url(),
        "control": format!("http://{control}"),
        "gateway": gateway.as_ref().map(|g| g.base.clone()),
    });
    let mut out = std::io::stdout();
    writeln!(out, "{line}")?;
    out.flush()?;
    axum::serve(listener, control_router(upstream)).await
}
