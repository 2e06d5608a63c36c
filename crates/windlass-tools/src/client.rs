//! One MCP client session over rmcp: connect (stdio or streamable HTTP),
//! list every tool page, call a tool under a timeout and the response's
//! cancel token, and map SDK errors onto the engine's [`McpError`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    PaginatedRequestParams, Tool,
};
use rmcp::service::{ClientInitializeError, NotificationContext, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use windlass_engine::{McpError, ToolResult};
use windlass_protocol::McpToolInfo;

use crate::content::to_tool_result;
use crate::transport::{http_transport, stdio_transport, Endpoint};

/// A server that hands out cursors forever must not hang the listing.
const MAX_TOOL_PAGES: usize = 1000;

/// How much one listing may hold: a request-declared server is anyone's,
/// and every tool it lists is kept and sent to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimits {
    pub max_tools: usize,
    /// Bytes of the tools as JSON (names, descriptions, schemas).
    pub max_bytes: usize,
}

impl ListLimits {
    /// Operator-configured servers are trusted.
    pub const UNLIMITED: ListLimits = ListLimits {
        max_tools: usize::MAX,
        max_bytes: usize::MAX,
    };

    /// Counts `page` in, failing once past a limit.
    fn add(&self, total: &mut (usize, usize), page: &[Tool]) -> Result<(), McpError> {
        total.0 += page.len();
        if total.0 > self.max_tools {
            return Err(McpError::Failed(format!(
                "the server lists more than {} tools, more than this gateway accepts (mcp.max_listed_tools)",
                self.max_tools
            )));
        }
        if self.max_bytes != usize::MAX {
            total.1 += page
                .iter()
                .map(|t| serde_json::to_vec(t).map_or(0, |v| v.len()))
                .sum::<usize>();
        }
        if total.1 > self.max_bytes {
            return Err(McpError::Failed(format!(
                "the server's tool list is larger than {} bytes, more than this gateway accepts (mcp.max_listed_bytes)",
                self.max_bytes
            )));
        }
        Ok(())
    }
}

/// Our side of the session: identifies the gateway and hears
/// `notifications/tools/list_changed`.
pub(crate) struct Handler {
    tools_changed: Arc<Notify>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // `notify_one` keeps a permit if nobody waits yet, so a change that
        // arrives while the hub is busy is not lost.
        self.tools_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("windlass", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A connected, initialized session.
pub(crate) struct McpSession {
    service: RunningService<RoleClient, Handler>,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Runs `work` unless the timeout or the cancel token comes first. Dropping
/// `work` makes rmcp send `notifications/cancelled` for the request.
async fn bounded<T>(
    timeout: Duration,
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, McpError>>,
) -> Result<T, McpError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(McpError::Cancelled),
        out = tokio::time::timeout(timeout, work) => out.unwrap_or(Err(McpError::Timeout(ms(timeout)))),
    }
}

impl McpSession {
    /// Starts the transport and runs the `initialize` handshake.
    pub(crate) async fn connect(
        label: &str,
        endpoint: &Endpoint,
        tools_changed: Arc<Notify>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<McpSession, McpError> {
        let handler = Handler { tools_changed };
        let unavailable = |e: &dyn std::fmt::Display| McpError::Unavailable(e.to_string());
        let start = async {
            let service = match endpoint {
                Endpoint::Http {
                    url,
                    headers,
                    pinned,
                } => {
                    let transport = http_transport(url, headers, pinned.as_ref())
                        .map_err(|e| unavailable(&e))?;
                    handler.serve(transport).await
                }
                Endpoint::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => {
                    let transport = stdio_transport(label, command, args, env, cwd.as_ref())
                        .map_err(|e| unavailable(&e))?;
                    handler.serve(transport).await
                }
            };
            service.map_err(|e| init_error(&e))
        };
        match bounded(timeout, cancel, start).await {
            Ok(service) => Ok(McpSession { service }),
            // A handshake that never completes is a server that is not
            // there, as far as callers are concerned.
            Err(McpError::Timeout(ms)) => Err(McpError::Unavailable(format!(
                "no answer to initialize within {ms} ms"
            ))),
            Err(e) => Err(e),
        }
    }

    /// False once the transport is gone (process exited, stream closed).
    pub(crate) fn is_alive(&self) -> bool {
        !self.service.is_closed() && !self.service.peer().is_transport_closed()
    }

    /// The protocol revision negotiated in `initialize`.
    pub(crate) fn protocol_version(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    }

    /// Every tool, following `nextCursor` until the last page.
    pub(crate) async fn list_tools(
        &self,
        timeout: Duration,
        cancel: &CancellationToken,
        limits: ListLimits,
    ) -> Result<Vec<McpToolInfo>, McpError> {
        let peer = self.service.peer();
        let all = async {
            let mut tools = Vec::new();
            let mut total = (0, 0);
            let mut cursor: Option<String> = None;
            for _ in 0..MAX_TOOL_PAGES {
                let params = PaginatedRequestParams::default().with_cursor(cursor.take());
                let page = peer
                    .list_tools(Some(params))
                    .await
                    .map_err(|e| service_error(&e))?;
                limits.add(&mut total, &page.tools)?;
                tools.extend(page.tools.iter().map(tool_info));
                match page.next_cursor {
                    Some(next) if !next.is_empty() => cursor = Some(next),
                    _ => return Ok(tools),
                }
            }
            Err(McpError::Failed(format!(
                "tools/list did not end after {MAX_TOOL_PAGES} pages"
            )))
        };
        bounded(timeout, cancel, all).await
    }

    /// Calls a tool. `arguments` is the model's JSON object text; an empty
    /// string means no arguments.
    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<ToolResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(args) = parse_arguments(arguments)? {
            params = params.with_arguments(args);
        }
        params.meta = crate::trace_context::call_meta();
        let call = async {
            self.service
                .call_tool(params)
                .await
                .map(|result| to_tool_result(&result))
                .map_err(|e| service_error(&e))
        };
        bounded(timeout, cancel, call).await
    }

    /// Ends the session politely (HTTP DELETE of the session, stdio child
    /// stopped); dropping it does the same in the background.
    pub(crate) async fn close(mut self) {
        let _ = self
            .service
            .close_with_timeout(Duration::from_secs(2))
            .await;
    }
}

fn parse_arguments(arguments: &str) -> Result<Option<serde_json::Map<String, Value>>, McpError> {
    if arguments.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err(McpError::Failed(
            "tool arguments must be a JSON object".to_owned(),
        )),
        Err(e) => Err(McpError::Failed(format!(
            "tool arguments are not valid JSON: {e}"
        ))),
    }
}

pub(crate) fn tool_info(tool: &Tool) -> McpToolInfo {
    McpToolInfo {
        name: tool.name.to_string(),
        description: tool.description.as_ref().map(|d| d.to_string()),
        input_schema: Value::Object(tool.input_schema.as_ref().clone()),
        annotations: tool
            .annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok()),
    }
}

/// What went wrong in a request, as the engine sees it: the server said no
/// (`Failed`), or the server is not there (`Unavailable`).
fn service_error(error: &ServiceError) -> McpError {
    match error {
        ServiceError::McpError(data) => McpError::Failed(data.message.to_string()),
        ServiceError::Timeout { timeout } => McpError::Timeout(ms(*timeout)),
        ServiceError::TransportSend(e) => McpError::Unavailable(error_chain(&*e.error)),
        ServiceError::TransportClosed => {
            McpError::Unavailable("the connection to the server closed".to_owned())
        }
        ServiceError::Cancelled { .. } => {
            McpError::Unavailable("the session with the server ended".to_owned())
        }
        other => McpError::Failed(other.to_string()),
    }
}

fn init_error(error: &ClientInitializeError) -> McpError {
    let detail = match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{context}: {}", error_chain(&*error.error))
        }
        other => error_chain(other),
    };
    McpError::Unavailable(format!("initialize failed: {detail}"))
}

/// An error and its causes in one line ("error sending request: connection
/// refused"), since the top-level message alone rarely says what happened
/// and rmcp's wrapper names Rust types instead.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    // rmcp wraps the reqwest error without exposing it as a source.
    fn next<'a>(
        error: &'a (dyn std::error::Error + 'static),
    ) -> Option<&'a (dyn std::error::Error + 'static)> {
        match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => error.source(),
        }
    }
    let mut text = error.to_string();
    let mut source = next(error);
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = next(cause);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorData;

    #[test]
    fn json_rpc_errors_are_failures_and_transport_errors_unavailable() {
        let invalid = ServiceError::McpError(ErrorData::invalid_params("unknown tool: x", None));
        assert_eq!(
            service_error(&invalid),
            McpError::Failed("unknown tool: x".into())
        );
        assert!(matches!(
            service_error(&ServiceError::TransportClosed),
            McpError::Unavailable(_)
        ));
        assert_eq!(
            service_error(&ServiceError::Timeout {
                timeout: Duration::from_millis(1500)
            }),
            McpError::Timeout(1500)
        );
    }

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(parse_arguments("").expect("empty"), None);
        assert_eq!(parse_arguments("  ").expect("blank"), None);
        assert!(parse_arguments(r#"{"a":1}"#).expect("object").is_some());
        assert!(matches!(parse_arguments("[1]"), Err(McpError::Failed(_))));
        assert!(matches!(parse_arguments("{"), Err(McpError::Failed(_))));
    }
}
