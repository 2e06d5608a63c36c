//! Typed local tools, the registry built once per agent, and the executor
//! that lets the engine run them.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use windlass_engine::{
    ToolCall, ToolContext, ToolDefinition, ToolKind, ToolOrigin, ToolResult as EngineToolResult,
};

use super::error::BuildError;

/// The error a tool handler returns. It is fed back to the model as an error
/// result and yielded as a [`Block::ToolUseError`](super::Block::ToolUseError);
/// the conversation goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(String);

impl ToolError {
    /// An error with this message (what the model reads).
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(message.into())
    }

    /// The message the model reads.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(s: String) -> Self {
        ToolError(s)
    }
}

impl From<&str> for ToolError {
    fn from(s: &str) -> Self {
        ToolError(s.to_owned())
    }
}

/// A tool's result as the model receives it: text, and whether it reports
/// a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The text the model reads.
    pub content: String,
    /// Whether the text reports a failure rather than a result.
    pub is_error: bool,
}

impl ToolOutcome {
    /// A successful result with this text.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutcome {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failure the model reads as an error result.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutcome {
            content: content.into(),
            is_error: true,
        }
    }
}

impl From<String> for ToolOutcome {
    fn from(s: String) -> Self {
        ToolOutcome::ok(s)
    }
}

impl From<&str> for ToolOutcome {
    fn from(s: &str) -> Self {
        ToolOutcome::ok(s)
    }
}

impl From<Value> for ToolOutcome {
    /// A JSON string is sent as its text, anything else as compact JSON.
    fn from(v: Value) -> Self {
        ToolOutcome::ok(value_text(v))
    }
}

impl From<Result<String, ToolError>> for ToolOutcome {
    fn from(r: Result<String, ToolError>) -> Self {
        match r {
            Ok(s) => ToolOutcome::ok(s),
            Err(e) => ToolOutcome::error(format!("Error: {e}")),
        }
    }
}

/// Why a call did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The arguments do not decode into the tool's argument type.
    InvalidArguments(String),
    /// The handler returned an error.
    Failed(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::InvalidArguments(m) => write!(f, "invalid arguments: {m}"),
            CallError::Failed(m) => f.write_str(m),
        }
    }
}

type Handler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<String, CallError>> + Send + Sync>;

/// A local tool: a name, a description, the JSON schema of its arguments and
/// an async handler. Cheap to clone.
///
/// ```
/// use serde::Deserialize;
/// use windlass::sdk::{Tool, ToolError};
///
/// #[derive(Deserialize, schemars::JsonSchema)]
/// struct AddArgs {
///     /// First addend.
///     a: f64,
///     b: f64,
/// }
///
/// let add = Tool::new("add", "Add two numbers", |args: AddArgs| async move {
///     Ok::<_, ToolError>(args.a + args.b)
/// });
/// assert_eq!(add.name(), "add");
/// assert_eq!(add.parameters()["required"], serde_json::json!(["a", "b"]));
/// ```
#[derive(Clone)]
pub struct Tool {
    name: String,
    description: String,
    parameters: Value,
    handler: Handler,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool whose arguments decode into `A`; the JSON schema the model sees
    /// is generated from `A` (`#[derive(Deserialize, JsonSchema)]`). Arguments
    /// that do not decode become a tool error ("invalid arguments: ...")
    /// without the handler running. The handler's value is sent to the model
    /// as text (a string as is, anything else as compact JSON); its error is
    /// sent as an error result.
    pub fn new<A, R, E, F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Tool
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + 'static,
        E: fmt::Display + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
    {
        let parameters = schema_of::<A>();
        let handler = Arc::new(handler);
        Tool {
            name: name.into(),
            description: description.into(),
            parameters,
            handler: Arc::new(move |input: Value| {
                let args = serde_json::from_value::<A>(input);
                let handler = handler.clone();
                Box::pin(async move {
                    let args = args.map_err(|e| CallError::InvalidArguments(e.to_string()))?;
                    match handler(args).await {
                        Ok(r) => serialize_result(&r),
                        Err(e) => Err(CallError::Failed(e.to_string())),
                    }
                })
            }),
        }
    }

    /// An untyped tool: `parameters` is the JSON schema shown to the model
    /// and the handler receives the arguments as JSON, unchecked.
    pub fn from_json<R, E, F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        handler: F,
    ) -> Tool
    where
        R: Serialize + 'static,
        E: fmt::Display + 'static,
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        Tool {
            name: name.into(),
            description: description.into(),
            parameters,
            handler: Arc::new(move |input: Value| {
                let fut = handler(input);
                Box::pin(async move {
                    match fut.await {
                        Ok(r) => serialize_result(&r),
                        Err(e) => Err(CallError::Failed(e.to_string())),
                    }
                })
            }),
        }
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the tool does, as sent to the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON schema of the arguments, as sent to the model.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// Runs the tool on `input` (manual mode: execute a
    /// [`ToolUse`](super::ToolUse) yourself, then pass the outcome to
    /// [`Client::add_tool_result`](super::Client::add_tool_result)). Errors
    /// and undecodable arguments become an error outcome.
    pub async fn call(&self, input: &Value) -> ToolOutcome {
        match self.invoke(input.clone()).await {
            Ok(text) => ToolOutcome::ok(text),
            Err(e) => ToolOutcome::error(format!("Error: {e}")),
        }
    }

    pub(crate) async fn invoke(&self, input: Value) -> Result<String, CallError> {
        (self.handler)(input).await
    }

    pub(crate) fn function_tool(&self) -> windlass_protocol::Tool {
        windlass_protocol::Tool::Function(windlass_protocol::FunctionTool {
            name: self.name.clone(),
            description: (!self.description.is_empty()).then(|| self.description.clone()),
            parameters: Some(self.parameters.clone()),
            strict: None,
        })
    }
}

fn serialize_result<R: Serialize>(r: &R) -> Result<String, CallError> {
    serde_json::to_value(r)
        .map(value_text)
        .map_err(|e| CallError::Failed(format!("cannot serialize the result: {e}")))
}

/// A JSON string as its text, anything else as compact JSON.
pub(crate) fn value_text(v: Value) -> String {
    match v {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// The JSON schema of `A` in the form chat-completions servers accept: an
/// object schema without the `$schema` and `title` noise.
fn schema_of<A: JsonSchema>() -> Value {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<A>();
    let mut value = schema.to_value();
    match &mut value {
        Value::Object(map) => {
            map.remove("$schema");
            map.remove("title");
            if !map.contains_key("type") && !map.contains_key("$ref") {
                map.insert("type".into(), json!("object"));
            }
            if map.get("type") == Some(&json!("object")) && !map.contains_key("properties") {
                map.insert("properties".into(), json!({}));
            }
            value
        }
        // `true`: anything goes (e.g. `serde_json::Value` arguments).
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// The agent's tools by name, checked once when the agent is built.
#[derive(Debug, Default)]
pub(crate) struct ToolRegistry {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
}

impl ToolRegistry {
    pub(crate) fn new(tools: Vec<Tool>) -> Result<ToolRegistry, BuildError> {
        let mut by_name = HashMap::with_capacity(tools.len());
        for (i, t) in tools.iter().enumerate() {
            if !windlass_engine::valid_name(&t.name) || t.name.is_empty() {
                return Err(BuildError::InvalidToolName(t.name.clone()));
            }
            if by_name.insert(t.name.clone(), i).is_some() {
                return Err(BuildError::DuplicateTool(t.name.clone()));
            }
        }
        Ok(ToolRegistry { tools, by_name })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }
}

/// The arguments the model sent, as JSON: empty means `{}`.
pub(crate) fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(raw).map_err(|e| format!("arguments are not valid JSON: {e}"))
}

/// The arguments for display and hooks: the JSON, or the raw text when it
/// does not parse.
pub(crate) fn arguments_value(raw: &str) -> Value {
    parse_arguments(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
}

/// Auto mode: the engine runs the agent's tools through this executor
/// (kind `Local`: the engine runs their calls; they never go back to the caller).
pub(crate) struct LocalTools(pub Arc<ToolRegistry>);

#[async_trait::async_trait]
impl windlass_engine::ToolExecutor for LocalTools {
    fn kind(&self) -> ToolKind {
        ToolKind::Local
    }

    fn can_execute(&self, tool: &ToolDefinition) -> bool {
        tool.origin == ToolOrigin::Function && self.0.contains(&tool.name)
    }

    async fn execute(
        &self,
        ctx: &ToolContext,
        call: &ToolCall,
    ) -> Result<EngineToolResult, windlass_engine::ToolError> {
        use windlass_engine::ToolError as E;
        let tool = self
            .0
            .get(&call.name)
            .ok_or_else(|| E::Failed(format!("Unknown tool: {}", call.name)))?;
        let input = parse_arguments(&call.arguments).map_err(E::InvalidArguments)?;
        // A panicking handler is a failed call, not a crashed conversation.
        let run = std::panic::AssertUnwindSafe(tool.invoke(input)).catch_unwind();
        let result = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(E::Failed("cancelled".into())),
            r = run => r,
        };
        match result {
            Ok(Ok(text)) => Ok(EngineToolResult::ok(text)),
            Ok(Err(CallError::InvalidArguments(m))) => Err(E::InvalidArguments(m)),
            Ok(Err(CallError::Failed(m))) => Err(E::Failed(m)),
            Err(_) => Err(E::Failed("the tool panicked".into())),
        }
    }
}
