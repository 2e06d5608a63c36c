//! Calculator agent in MANUAL mode (the default): each run stops at the
//! model's tool calls; this program runs them, adds the results and
//! continues the conversation without a new user message.
//!
//! Compare with `calculator_auto.rs`, where the engine runs the tools. Manual
//! mode suits tools the caller must confirm, run elsewhere, or audit.
//!
//! ```text
//! cargo run -p windlass --example calculator_manual
//! cargo run -p windlass --example calculator_manual -- "What is 2 to the power of 3, via multiply?"
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use futures::StreamExt;
use windlass::sdk::{Agent, Block, Client, Termination};

#[path = "common/calculator.rs"]
mod calculator;

use calculator::{calculator_tools, upstream_and_model};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (url, model) = upstream_and_model();
    let agent = Agent::builder()
        .model(model)
        .base_url(url)
        .system_prompt(
            "You are a helpful calculator assistant. Use the provided tools for every \
             calculation, then state the result in one short sentence.",
        )
        .tools(calculator_tools())
        .temperature(0.1)
        .build()?; // auto_execute_tools is off by default

    let args: Vec<String> = std::env::args().skip(1).collect();
    let question = if args.is_empty() {
        "What's 7 times 8, then add 5?".to_owned()
    } else {
        args.join(" ")
    };
    println!("Calculator agent in MANUAL mode\n\nUser: {question}");

    let client = Client::new(agent);
    client.query(question).await?;
    // At most 5 rounds of tool calls, like auto mode's default.
    for _ in 0..5 {
        let mut termination = None;
        let mut blocks = client.receive();
        while let Some(block) = blocks.next().await {
            match block {
                Block::Text(t) => print!("{t}"),
                Block::ToolUse(call) => println!("  model asks: {} {}", call.name, call.input),
                Block::ToolUseError { error, .. } => println!("    ! {error}"),
                Block::Done { termination: t, .. } => termination = Some(t),
                _ => {}
            }
        }
        drop(blocks);
        if termination != Some(Termination::AwaitingToolResults) {
            println!();
            if let Some(t) = termination.filter(|t| !t.is_completed()) {
                println!("(ended: {t:?})");
            }
            break;
        }
        // We run the calls ourselves (here: with the registered tools).
        for call in client.pending_tool_calls() {
            let outcome = client.run_tool(&call).await;
            println!(
                "    {} {}",
                if outcome.is_error { "!" } else { "=" },
                outcome.content
            );
            client.add_tool_result(&call.id, outcome).await?;
        }
        // Continue without a new user message (no UserPromptSubmit hook fires).
        client.continue_turn().await?;
    }

    println!("\nHistory:");
    for m in client.history() {
        println!("  {m:?}");
    }
    Ok(())
}
