//! The seed 002 calculator tools shared by both examples: add, subtract,
//! multiply, divide; dividing by zero is a tool error the model is told about.

use serde::Deserialize;
use windlass::sdk::{Tool, ToolError};

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct Operands {
    /// The first number.
    pub a: f64,
    /// The second number.
    pub b: f64,
}

pub(crate) fn calculator_tools() -> Vec<Tool> {
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

/// The upstream and model, from `WINDLASS_UPSTREAM_URL` and `WINDLASS_MODEL`
/// (defaults: the rig's llama-server and its model).
pub(crate) fn upstream_and_model() -> (String, String) {
    let url = std::env::var("WINDLASS_UPSTREAM_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:8081/v1".into());
    let model = std::env::var("WINDLASS_MODEL").unwrap_or_else(|_| "qwen2.5-1.5b".into());
    (url, model)
}
