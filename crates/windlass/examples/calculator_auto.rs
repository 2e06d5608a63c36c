//! Calculator agent with AUTO-EXECUTION: the engine runs the tools and
//! feeds the results back until the model answers (or the iteration limit).
//!
//! Compare with `calculator_manual.rs`, where the caller runs each tool.
//! Use auto mode when the tools are plain local functions; use manual mode
//! when the caller must decide, confirm or run the calls somewhere else.
//!
//! ```text
//! cargo run -p windlass --example calculator_auto
//! WINDLASS_UPSTREAM_URL=http://127.0.0.1:8081/v1 WINDLASS_MODEL=qwen2.5-1.5b \
//!     cargo run -p windlass --example calculator_auto -- "What is 7 times 8, plus 5?"
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
        .auto_execute_tools(true) // the engine runs the tools
        .max_tool_iterations(5) // safety limit
        .temperature(0.1)
        .build()?;

    let args: Vec<String> = std::env::args().skip(1).collect();
    let queries = if args.is_empty() {
        vec![
            "What is 25 plus 17?".to_owned(),
            "Calculate 144 divided by 12".to_owned(),
            "What's 7 times 8, then add 5?".to_owned(),
            "What is 10 divided by 0?".to_owned(),
        ]
    } else {
        vec![args.join(" ")]
    };

    println!("Calculator agent with AUTO-EXECUTION\n");
    for q in queries {
        println!("User: {q}");
        // A fresh conversation per question.
        let client = Client::new(agent.clone());
        client.query(q).await?;
        let mut blocks = client.receive();
        let mut answer_started = false;
        while let Some(block) = blocks.next().await {
            match block {
                // Still yielded in auto mode, for visibility.
                Block::ToolUse(call) => println!("  tool: {} {}", call.name, call.input),
                Block::ToolResult { content, .. } => println!("    = {content}"),
                Block::ToolUseError { error, .. } => println!("    ! {error}"),
                Block::Text(t) => {
                    if !answer_started {
                        print!("Assistant: ");
                        answer_started = true;
                    }
                    print!("{t}");
                }
                Block::Done {
                    termination,
                    usage,
                    turns,
                    ..
                } => {
                    println!();
                    match termination {
                        Termination::Completed => {}
                        Termination::MaxIterations { limit } => {
                            println!("(stopped after {limit} tool iterations)")
                        }
                        other => println!("(ended: {other:?})"),
                    }
                    println!("[{turns} turns, {} tokens]\n", usage.total_tokens);
                }
                // Reasoning, and any block kind added later.
                _ => {}
            }
        }
    }
    Ok(())
}
