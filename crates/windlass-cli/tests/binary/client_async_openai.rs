//! `async-openai`, a strictly typed Rust client, against the real `windlass`
//! binary (default settings) in front of the scripted upstream: create,
//! stream and continue a response with a function tool.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_openai::config::OpenAIConfig;
use async_openai::types::responses::{
    CreateResponseArgs, FunctionCallOutput, FunctionCallOutputItemParam, FunctionTool, InputItem,
    InputParam, Item, OutputItem, ResponseStreamEvent, Status, Tool,
};
use async_openai::Client;
use futures::StreamExt;
use serde_json::json;
use windlass_testkit::{FakeUpstream, Reply};

/// `windlass serve` on a free loopback port; killed on drop.
struct Serve {
    child: Child,
    base: String,
    dir: std::path::PathBuf,
}

impl Serve {
    async fn start(upstream: &FakeUpstream) -> Serve {
        let port = crate::ports::free_port();
        let dir = std::env::temp_dir().join(format!("windlass-async-openai-{port}"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let child = Command::new(env!("CARGO_BIN_EXE_windlass"))
            .args(["serve", "--upstream", &upstream.base_url()])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .arg("--db")
            .arg(dir.join("windlass.db"))
            .env_remove("WINDLASS_CLIENT_TOOLS_STATUS")
            .env_remove("WINDLASS_CONFIG")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn windlass serve");
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while reqwest::get(format!("{base}/health")).await.is_err() {
            assert!(Instant::now() < deadline, "windlass serve did not come up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Serve { child, base, dir }
    }

    fn client(&self) -> Client<OpenAIConfig> {
        // async-openai's reqwest wants a TLS provider even for plain HTTP.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Client::with_config(
            OpenAIConfig::new()
                .with_api_base(format!("{}/v1", self.base))
                .with_api_key("test"),
        )
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn weather_tool() -> Tool {
    Tool::Function(FunctionTool {
        name: "get_weather".into(),
        parameters: Some(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        })),
        strict: Some(false),
        description: Some("Weather for a city".into()),
        ..Default::default()
    })
}

fn function_output(call_id: &str, output: &str) -> InputItem {
    InputItem::Item(Item::FunctionCallOutput(FunctionCallOutputItemParam {
        call_id: Some(call_id.into()),
        output: FunctionCallOutput::Text(output.into()),
        id: None,
        status: None,
        name: None,
        namespace: None,
        caller: None,
    }))
}

#[tokio::test]
async fn create_stream_and_continue_with_a_function_tool() {
    let up = FakeUpstream::start().await;
    let serve = Serve::start(&up).await;
    let client = serve.client();

    // Create: the model calls the client's tool; the response ends `completed`.
    up.push(Reply::tool_call("get_weather", r#"{"city":"Paris"}"#).with_call_id("call_p"));
    let request = CreateResponseArgs::default()
        .model("m")
        .input(InputParam::Text("Weather in Paris?".into()))
        .tools(vec![weather_tool()])
        .build()
        .unwrap();
    let first = client.responses().create(request).await.expect("create");
    assert_eq!(first.status, Status::Completed);
    let call = match first.output.last() {
        Some(OutputItem::FunctionCall(c)) => c.clone(),
        other => panic!("expected a function call, got {other:?}"),
    };
    assert_eq!(
        (call.name.as_str(), call.call_id.as_str()),
        ("get_weather", "call_p")
    );
    assert_eq!(call.arguments, r#"{"city":"Paris"}"#);

    // Continue, streamed: previous_response_id + function_call_output.
    up.push(Reply::text("It is sunny in Paris.").chunk_chars(3));
    let request = CreateResponseArgs::default()
        .model("m")
        .previous_response_id(first.id.clone())
        .input(InputParam::Items(vec![function_output(
            "call_p",
            "sunny, 24C",
        )]))
        .tools(vec![weather_tool()])
        .stream(true)
        .build()
        .unwrap();
    let mut stream = client
        .responses()
        .create_stream(request)
        .await
        .expect("stream");
    let (mut text, mut completed) = (String::new(), None);
    while let Some(event) = stream.next().await {
        match event.expect("every event parses as a typed event") {
            ResponseStreamEvent::ResponseOutputTextDelta(d) => text.push_str(&d.delta),
            ResponseStreamEvent::ResponseCompleted(c) => completed = Some(c.response),
            _ => {}
        }
    }
    let done = completed.expect("response.completed");
    assert_eq!(text, "It is sunny in Paris.");
    assert_eq!(done.status, Status::Completed);
    assert_eq!(
        done.previous_response_id.as_deref(),
        Some(first.id.as_str())
    );
    assert_eq!(done.output_text().as_deref(), Some("It is sunny in Paris."));
    let sent = up.last_request().expect("a second upstream request");
    let messages = sent["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "tool", "tool_call_id": "call_p", "content": "sunny, 24C"})
    );

    // A streamed turn that pauses for the client also ends with response.completed.
    up.push(Reply::tool_call("get_weather", r#"{"city":"Oslo"}"#).with_call_id("call_o"));
    let request = CreateResponseArgs::default()
        .model("m")
        .previous_response_id(done.id.clone())
        .input(InputParam::Text("And Oslo?".into()))
        .tools(vec![weather_tool()])
        .stream(true)
        .build()
        .unwrap();
    let mut stream = client.responses().create_stream(request).await.unwrap();
    let mut last = None;
    while let Some(event) = stream.next().await {
        last = Some(event.expect("typed event"));
    }
    match last {
        Some(ResponseStreamEvent::ResponseCompleted(c)) => {
            assert!(
                matches!(c.response.output.last(), Some(OutputItem::FunctionCall(f)) if f.call_id == "call_o")
            );
        }
        other => panic!("expected response.completed last, got {other:?}"),
    }
}
