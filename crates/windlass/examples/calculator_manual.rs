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

use futures::StreamExt;
use serde::Deserialize;
use windlass::sdk::{Agent, Block, Client, Termination, Tool, ToolError};

#[derive(Deserialize, schemars::JsonSchema)]
struct Operands {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

fn calculator_tools() -> Vec<Tool> {
    vec![
        Tool::new("add", "Add two numbers", |o: Operands| async move {
            Ok::<_, ToolError>(o.a + o.b)
        }),
        Tool::new("subtract", "Subtract b from a", |o: Operands| async move {
            Ok::<_, ToolError>(o.a - o.b)
        }),
        Tool::new(
            "multiply",
            "Multiply two numbers",
            |o: Operands| async move { Ok::<_, ToolError>(o.a * o.b) },
        ),
        Tool::new("divide", "Divide a by b", |o: Operands| async move {
            if o.b == 0.0 {
                return Err(ToolError::new("Cannot divide by zero"));
            }
            Ok(o.a / o.b)
        }),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("WINDLASS_UPSTREAM_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:8081/v1".into());
    let model = std::env::var("WINDLASS_MODEL").unwrap_or_else(|_| "qwen2.5-1.5b".into());
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
