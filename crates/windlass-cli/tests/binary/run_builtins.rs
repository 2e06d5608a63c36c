//! `windlass run --config` with built-in tools and governance, and the SDK's
//! `AgentBuilder::builtins`, against the scripted upstream.

use std::process::Command;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;
use windlass::sdk::{Agent, Client};
use windlass_testkit::{FakeUpstream, Reply};
use windlass_tools::builtins::{Builtins, BuiltinsConfig};

fn work_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "windlass-run-builtins-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("README.md"), "a\nb\nc\nd\ne\n").unwrap();
    dir
}

#[tokio::test]
async fn windlass_run_counts_lines_with_the_builtins() {
    let work = work_dir("cli");
    let config = work.join("windlass.toml");
    std::fs::write(
        &config,
        format!(
            "[builtins]\nenabled = [\"shell\", \"read_file\"]\nwork_dir = {:?}\n\n[governance]\ncommands = [\"wc\"]\n",
            work.display().to_string()
        ),
    )
    .unwrap();
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call(
        "windlass__shell",
        r#"{"command":"wc -l README.md"}"#,
    ));
    up.push(Reply::tool_call(
        "windlass__shell",
        r#"{"command":"rm README.md"}"#,
    ));
    up.push(Reply::text("README.md has 5 lines."));
    let base = up.base_url();
    let cfg = config.display().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args([
                "run",
                "count the lines of README.md",
                "--json",
                "--upstream",
                &base,
                "--model",
                "m",
                "--config",
                &cfg,
            ])
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let response: Value = serde_json::from_str(&text).unwrap();
    let calls: Vec<&Value> = response["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "mcp_call")
        .collect();
    assert!(
        calls[0]["output"].as_str().unwrap().contains("5 README.md"),
        "{}",
        calls[0]
    );
    assert!(
        calls[1]["error"]
            .to_string()
            .contains("'rm' is not on the allowlist"),
        "{}",
        calls[1]
    );
    assert!(work.join("README.md").exists());
    let names: Vec<String> = up.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["windlass__shell", "windlass__read_file"]);
}

#[tokio::test]
async fn the_sdk_offers_the_builtins() {
    let work = work_dir("sdk");
    let config: BuiltinsConfig = toml::from_str(&format!(
        "enabled = [\"read_file\"]\nwork_dir = {:?}\n",
        work.display().to_string()
    ))
    .unwrap();
    let builtins = Arc::new(Builtins::start(config).await.unwrap());
    let up = FakeUpstream::start().await;
    up.push(Reply::tool_call(
        "windlass__read_file",
        r#"{"path":"README.md"}"#,
    ));
    up.push(Reply::tool_call(
        "windlass__read_file",
        r#"{"path":"/etc/hostname"}"#,
    ));
    up.push(Reply::text("five"));
    let agent = Agent::builder()
        .model("m")
        .base_url(up.base_url())
        .auto_execute_tools(true)
        .builtins(builtins)
        .build()
        .unwrap();
    let client = Client::new(agent);
    client.query("read it").await.unwrap();
    let _: Vec<_> = client.receive().collect().await;
    let fed = up.tool_messages(2);
    assert_eq!(fed[0], "a\nb\nc\nd\ne\n");
    assert!(fed[1].contains("outside"), "{fed:?}");
}
