//! OpenAI's grouped and free-form client tools (`namespace`, `custom`) as the
//! model sees them: plain functions. A function `f` of namespace `ns` is
//! offered as `ns__f`; a custom tool takes one string argument, `input`, and
//! its grammar is shown in the description (not enforced: chat-completions
//! upstreams cannot constrain output to a grammar). Calls go back to the
//! client in OpenAI's form: a `function_call` with `namespace`, or a
//! `custom_tool_call` with the free-form `input`. OpenAI's client-executed
//! tool types (`shell`, `local_shell`, `apply_patch`, `computer_use_preview`)
//! are in `typed`, their answers in `outputs`; `shell` and `apply_patch`
//! run by the gateway instead, in `server_run`.

pub mod outputs;
pub mod server_run;
pub mod typed;

use std::collections::HashSet;

use serde_json::{json, Value};
use windlass_protocol::ids::{new_id, prefix};
use windlass_protocol::{
    CustomTool, CustomToolCall, CustomToolFormat, FunctionCall, FunctionCallOutput, FunctionTool,
    Item, ItemStatus, NamespaceTool, NamespacedTool,
};

use crate::error::EngineError;
use crate::naming::mcp_tool_name;
use crate::naming::valid_name;
use crate::ports::agent::tools::{ToolCall, ToolDefinition, ToolOrigin};

/// How a client tool that is not a plain function goes back to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientShape {
    /// Function `name` of namespace `namespace`.
    Namespaced {
        /// The namespace the function belongs to.
        namespace: String,
        /// The function's name inside the namespace.
        name: String,
    },
    /// A custom (free-form input) tool, possibly inside a namespace.
    Custom {
        /// The namespace it sits in, if any.
        namespace: Option<String>,
        /// The tool's name.
        name: String,
    },
    /// One of OpenAI's client-executed types, returned as its own item.
    Typed(typed::TypedKind),
}

/// The model-visible name of a client tool: `ns__name` inside a namespace.
pub fn model_name(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => mcp_tool_name(ns, name),
        None => name.to_owned(),
    }
}

/// The model-visible definitions of a `namespace` tool (`tools[i]`).
pub fn namespace_definitions(
    ns: &NamespaceTool,
    i: usize,
) -> Result<Vec<(ToolDefinition, ClientShape)>, EngineError> {
    if ns.name.is_empty() || !valid_name(&ns.name) {
        return Err(EngineError::invalid(
            format!(
                "Invalid namespace name '{}': use letters, digits, '_' or '-'.",
                ns.name
            ),
            Some(format!("tools[{i}].name")),
        ));
    }
    let context = ns
        .description
        .as_deref()
        .map(|d| format!("[{}] {d}", ns.name));
    let mut out = Vec::with_capacity(ns.tools.len());
    for (j, tool) in ns.tools.iter().enumerate() {
        let param = format!("tools[{i}].tools[{j}].name");
        let (mut def, shape) = match tool {
            NamespacedTool::Function(f) => {
                check_name(&f.name, &param)?;
                let shape = ClientShape::Namespaced {
                    namespace: ns.name.clone(),
                    name: f.name.clone(),
                };
                (
                    function_definition(f, model_name(Some(&ns.name), &f.name)),
                    shape,
                )
            }
            NamespacedTool::Custom(c) => {
                check_name(&c.name, &param)?;
                custom_definition(c, Some(&ns.name))
            }
        };
        if let Some(ctx) = &context {
            def.description = Some(match def.description.take() {
                Some(d) => format!("{ctx}\n\n{d}"),
                None => ctx.clone(),
            });
        }
        out.push((def, shape));
    }
    Ok(out)
}

/// The model-visible definition of a custom tool (`tools[i]`).
pub fn custom_tool(c: &CustomTool, i: usize) -> Result<(ToolDefinition, ClientShape), EngineError> {
    check_name(&c.name, &format!("tools[{i}].name"))?;
    Ok(custom_definition(c, None))
}

fn check_name(name: &str, param: &str) -> Result<(), EngineError> {
    if name.is_empty() || !valid_name(name) {
        return Err(EngineError::invalid(
            format!("Invalid tool name '{name}': use letters, digits, '_' or '-', at most 64 characters."),
            Some(param.to_owned()),
        ));
    }
    Ok(())
}

fn function_definition(f: &FunctionTool, name: String) -> ToolDefinition {
    ToolDefinition {
        name,
        description: f.description.clone(),
        parameters: f
            .parameters
            .clone()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
        strict: f.strict,
        origin: ToolOrigin::Function,
    }
}

fn custom_definition(c: &CustomTool, namespace: Option<&str>) -> (ToolDefinition, ClientShape) {
    let mut input_doc = "The tool's free-form input.".to_owned();
    if let Some(CustomToolFormat::Grammar { syntax, definition }) = &c.format {
        input_doc = format!(
            "The tool's free-form input. It must follow this {syntax} grammar:\n{definition}"
        );
    }
    let def = ToolDefinition {
        name: model_name(namespace, &c.name),
        description: c.description.clone(),
        parameters: json!({
            "type": "object",
            "properties": {"input": {"type": "string", "description": input_doc}},
            "required": ["input"],
        }),
        strict: None,
        origin: ToolOrigin::Function,
    };
    let shape = ClientShape::Custom {
        namespace: namespace.map(str::to_owned),
        name: c.name.clone(),
    };
    (def, shape)
}

/// The output item a model call of a shaped tool opens (arguments empty).
pub fn call_item(shape: &ClientShape, call_id: String) -> Item {
    match shape {
        ClientShape::Namespaced { namespace, name } => Item::FunctionCall(FunctionCall {
            id: Some(new_id(prefix::FUNCTION_CALL)),
            call_id,
            name: name.clone(),
            arguments: String::new(),
            namespace: Some(namespace.clone()),
            status: Some(ItemStatus::InProgress),
        }),
        ClientShape::Custom { namespace, name } => Item::CustomToolCall(CustomToolCall {
            id: Some(new_id(prefix::CUSTOM_TOOL_CALL)),
            call_id,
            name: name.clone(),
            input: String::new(),
            namespace: namespace.clone(),
            status: Some(ItemStatus::InProgress),
        }),
        ClientShape::Typed(kind) => typed::gathering_item(*kind, call_id),
    }
}

/// The free-form input inside the model's arguments `{"input": "..."}`; a
/// model that sent something else has it passed on as it is.
pub fn custom_input(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => match map.get("input") {
            Some(Value::String(s)) => s.clone(),
            _ => arguments.to_owned(),
        },
        _ => arguments.to_owned(),
    }
}

/// The call as the loop handles it (by model-visible name), for function,
/// custom and typed client calls; `None` for other items.
pub fn tool_call(item: &Item) -> Option<ToolCall> {
    match upstream_item(item)? {
        Item::FunctionCall(c) => Some(ToolCall {
            call_id: c.call_id,
            name: c.name,
            arguments: c.arguments,
        }),
        _ => None,
    }
}

/// A call or output item as the upstream sees it: a plain function call
/// under its model-visible name, or a function call output. `None` for
/// items that are neither.
pub fn upstream_item(item: &Item) -> Option<Item> {
    match item {
        Item::FunctionCall(c) => {
            let mut c = c.clone();
            c.name = model_name(c.namespace.as_deref(), &c.name);
            c.namespace = None;
            Some(Item::FunctionCall(c))
        }
        Item::CustomToolCall(c) => Some(Item::FunctionCall(FunctionCall {
            id: c.id.clone(),
            call_id: c.call_id.clone(),
            name: model_name(c.namespace.as_deref(), &c.name),
            arguments: json!({ "input": c.input }).to_string(),
            namespace: None,
            status: c.status,
        })),
        Item::CustomToolCallOutput(o) => Some(Item::FunctionCallOutput(FunctionCallOutput {
            id: o.id.clone(),
            call_id: o.call_id.clone(),
            output: o.output.clone(),
            status: o.status,
            is_error: None,
        })),
        Item::FunctionCallOutput(_) => Some(item.clone()),
        Item::ShellCall(_)
        | Item::LocalShellCall(_)
        | Item::ApplyPatchCall(_)
        | Item::ComputerCall(_) => typed::upstream_call(item).map(Item::FunctionCall),
        _ => outputs::upstream_output(item).map(Item::FunctionCallOutput),
    }
}

/// Records the model-visible name of `def`; a name already taken (two
/// groups yielding the same `ns__name`, or a plain function of that name) is a 400.
pub fn insert_unique(
    names: &mut HashSet<String>,
    def: &ToolDefinition,
    param: String,
) -> Result<(), EngineError> {
    if names.insert(def.name.clone()) {
        Ok(())
    } else {
        Err(EngineError::invalid(
            format!("Duplicate tool name '{}'.", def.name),
            Some(param),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_input_is_taken_from_the_arguments_object() {
        assert_eq!(
            custom_input(r#"{"input":"*** Begin Patch"}"#),
            "*** Begin Patch"
        );
        assert_eq!(custom_input("raw text"), "raw text");
        assert_eq!(custom_input(r#"{"other":1}"#), r#"{"other":1}"#);
    }

    #[test]
    fn shaped_calls_go_upstream_as_plain_functions() {
        let ns = Item::FunctionCall(FunctionCall {
            id: None,
            call_id: "c1".into(),
            name: "spawn".into(),
            arguments: "{}".into(),
            namespace: Some("agents".into()),
            status: None,
        });
        let call = tool_call(&ns).unwrap();
        assert_eq!(call.name, "agents__spawn");
        let custom = Item::CustomToolCall(CustomToolCall {
            id: None,
            call_id: "c2".into(),
            name: "apply_patch".into(),
            input: "diff \"x\"".into(),
            namespace: None,
            status: None,
        });
        let call = tool_call(&custom).unwrap();
        assert_eq!(call.name, "apply_patch");
        assert_eq!(custom_input(&call.arguments), "diff \"x\"");
    }

    #[test]
    fn a_grammar_is_shown_to_the_model() {
        let c: CustomTool = serde_json::from_value(json!({
            "name": "sql", "description": "Run SQL",
            "format": {"type": "grammar", "syntax": "lark", "definition": "start: SELECT"}
        }))
        .unwrap();
        let (def, shape) = custom_tool(&c, 0).unwrap();
        assert_eq!(def.name, "sql");
        let doc = def.parameters["properties"]["input"]["description"]
            .as_str()
            .unwrap();
        assert!(doc.contains("lark grammar") && doc.contains("start: SELECT"));
        assert_eq!(
            shape,
            ClientShape::Custom {
                namespace: None,
                name: "sql".into()
            }
        );
    }
}
