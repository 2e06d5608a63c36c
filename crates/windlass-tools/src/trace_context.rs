//! W3C trace context to MCP servers. A tool call carries it in `_meta`
//! (`traceparent`, `tracestate`: MCP SEP-414) and, over streamable HTTP,
//! in the same-named headers too, where HTTP tracing middleware finds it.
//! The values come from the engine's propagation port, taken in the tool
//! call's span; with no propagation installed nothing is added.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, MetaObject, RequestMetaObject,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

/// The `_meta` of a tool call made in the current span, if it is traced.
pub(crate) fn call_meta() -> Option<RequestMetaObject> {
    let headers = windlass_engine::trace_headers();
    let mut meta = MetaObject::new();
    for (name, value) in headers {
        match name.as_str() {
            TRACEPARENT => meta.set_traceparent(value),
            TRACESTATE => meta.set_tracestate(value),
            _ => {}
        }
    }
    (!meta.0.is_empty()).then_some(RequestMetaObject(meta))
}

/// Our reqwest client, copying a tool call's trace context from `_meta`
/// into its HTTP headers; everything else is passed through.
#[derive(Clone)]
pub(crate) struct TracingClient(pub reqwest::Client);

fn with_trace(
    message: &ClientJsonRpcMessage,
    mut headers: HashMap<HeaderName, HeaderValue>,
) -> HashMap<HeaderName, HeaderValue> {
    let JsonRpcMessage::Request(request) = message else {
        return headers;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return headers;
    };
    let Some(meta) = &call.params.meta else {
        return headers;
    };
    for (name, value) in [
        (TRACEPARENT, meta.get_traceparent()),
        (TRACESTATE, meta.get_tracestate()),
    ] {
        if let Some(v) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(HeaderName::from_static(name), v);
        }
    }
    headers
}

impl StreamableHttpClient for TracingClient {
    type Error = reqwest::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
           + Send
           + '_ {
        let headers = with_trace(&message, custom_headers);
        self.0
            .post_message(uri, message, session_id, auth_header, headers)
    }

    fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
           + Send
           + '_ {
        let headers = with_trace(&message, custom_headers);
        self.0.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            headers,
            max_sse_event_size,
        )
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_ {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<
        Output = Result<
            BoxStream<'static, Result<Sse, SseError>>,
            StreamableHttpError<Self::Error>,
        >,
    > + Send
           + '_ {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<
        Output = Result<
            BoxStream<'static, Result<Sse, SseError>>,
            StreamableHttpError<Self::Error>,
        >,
    > + Send
           + '_ {
        self.0.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        )
    }
}
