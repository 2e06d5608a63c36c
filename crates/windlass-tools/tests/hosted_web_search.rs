//! `web_search` against local HTTP servers shaped like SearXNG's JSON API,
//! Brave's Web Search API and Tavily's search API. They stand in for
//! internet services this machine cannot reach; the requests Windlass sends
//! them and the answers they give follow each service's documented shapes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use windlass_protocol::{
    SearchContextSize, UserLocation, WebSearchAction, WebSearchCall, WebSearchCallStatus,
    WebSearchFilters, WebSearchTool,
};
use windlass_tools::hosted::web_search::{render, WebSearch, WebSearchConfig};

const BRAVE_KEY: &str = "brave-test-key-5e1f";
const TAVILY_KEY: &str = "tvly-test-key-77aa";

/// What the fake services were asked.
#[derive(Default)]
struct Seen {
    searxng: Vec<Value>,
    brave: Vec<Value>,
    tavily: Vec<Value>,
}

type Shared = Arc<Mutex<Seen>>;

fn results(q: &str) -> Vec<(&'static str, String, String)> {
    vec![
        (
            "https://docs.example.org/guide",
            format!("Guide to {q}"),
            format!("Everything about {q}. ").repeat(200),
        ),
        (
            "https://other.test/post",
            "Other post".to_owned(),
            "Unrelated".to_owned(),
        ),
        (
            "http://blog.example.org/news",
            "Blog news".to_owned(),
            "Fresh".to_owned(),
        ),
        (
            "https://docs.example.org/guide",
            "Duplicate".to_owned(),
            "Same URL again".to_owned(),
        ),
    ]
}

async fn searxng(State(seen): State<Shared>, Query(q): Query<Value>) -> axum::response::Response {
    seen.lock().unwrap().searxng.push(q.clone());
    let query = q["q"].as_str().unwrap_or_default().to_owned();
    if q["format"] != "json" {
        return (StatusCode::FORBIDDEN, "format not enabled").into_response();
    }
    match query.as_str() {
        "garbage" => return Html("<html>not json</html>").into_response(),
        "wrong shape" => return Json(json!({"answers": []})).into_response(),
        "boom" => return (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        "slow" => tokio::time::sleep(Duration::from_secs(30)).await,
        _ => {}
    }
    let results: Vec<Value> = results(&query)
        .into_iter()
        .map(|(url, title, content)| {
            json!({"url": url, "title": title, "content": content, "engine": "fake", "score": 1.0})
        })
        .collect();
    Json(json!({"query": query, "number_of_results": results.len(), "results": results}))
        .into_response()
}

async fn brave(
    State(seen): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<Value>,
) -> axum::response::Response {
    seen.lock().unwrap().brave.push(q.clone());
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some(BRAVE_KEY)
    {
        return (StatusCode::UNAUTHORIZED, "bad token").into_response();
    }
    let query = q["q"].as_str().unwrap_or_default().to_owned();
    if query == "nothing at all" {
        return Json(json!({"type": "search", "query": {"original": query}})).into_response();
    }
    let results: Vec<Value> = results(&query)
        .into_iter()
        .map(|(url, title, description)| json!({"url": url, "title": title, "description": description}))
        .collect();
    Json(json!({"type": "search", "web": {"type": "search", "results": results}})).into_response()
}

async fn tavily(
    State(seen): State<Shared>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> axum::response::Response {
    seen.lock().unwrap().tavily.push(body.clone());
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
    if auth != Some(&format!("Bearer {TAVILY_KEY}")) {
        return (StatusCode::UNAUTHORIZED, Json(json!({"detail": "bad key"}))).into_response();
    }
    let query = body["query"].as_str().unwrap_or_default().to_owned();
    let results: Vec<Value> = results(&query)
        .into_iter()
        .map(|(url, title, content)| json!({"url": url, "title": title, "content": content, "score": 0.9}))
        .collect();
    Json(json!({"query": query, "results": results, "response_time": 0.1})).into_response()
}

async fn server() -> (String, Shared) {
    let seen: Shared = Arc::default();
    let app = Router::new()
        .route("/searxng/search", get(searxng))
        .route("/brave/res/v1/web/search", get(brave))
        .route("/tavily/search", post(tavily))
        .route(
            "/page",
            get(|| async {
                Html("<html><body><h1>Tokio guide</h1><p>Spawn tasks with tokio::spawn.</p><p>Other text.</p></body></html>")
            }),
        )
        .route(
            "/to-metadata",
            get(|| async { Redirect::temporary("http://169.254.169.254/latest/meta-data/") }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://127.0.0.1:{}", addr.port()), seen)
}

fn config(toml_text: &str) -> WebSearchConfig {
    toml::from_str(toml_text).unwrap()
}

fn searxng_config(base: &str) -> WebSearchConfig {
    config(&format!(
        "provider = \"searxng\"\nurl = \"{base}/searxng\"\nallow_hosts = [\"127.0.0.1\"]\n\
         timeout_ms = 2000\nlanguage = \"en\"\ncategories = \"general\"\n\
         [open_page]\nallow_hosts = [\"127.0.0.1\"]\n"
    ))
}

async fn run(ws: &WebSearch, tool: &WebSearchTool, args: Value) -> WebSearchCall {
    ws.run(
        "ws_test".into(),
        tool,
        &args.to_string(),
        &CancellationToken::new(),
    )
    .await
}

fn sources(call: &WebSearchCall) -> Vec<(String, String, String)> {
    match &call.action {
        WebSearchAction::Search(s) => s
            .sources
            .iter()
            .flatten()
            .map(|s| {
                (
                    s.url.clone(),
                    s.title.clone().unwrap_or_default(),
                    s.snippet.clone().unwrap_or_default(),
                )
            })
            .collect(),
        other => panic!("not a search: {other:?}"),
    }
}

#[tokio::test]
async fn searxng_results_become_a_web_search_call() {
    let (base, seen) = server().await;
    let ws = searxng_config(&base).build().unwrap();
    assert_eq!(ws.backend_name(), "searxng");
    let call = run(
        &ws,
        &WebSearchTool::default(),
        json!({"query": "tokio runtime"}),
    )
    .await;
    assert_eq!(call.status, WebSearchCallStatus::Completed, "{call:?}");
    assert_eq!(call.id, "ws_test");
    let got = sources(&call);
    // Deduplicated, medium context: up to 5 results, snippets cut to 600.
    let urls: Vec<_> = got.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        urls,
        [
            "https://docs.example.org/guide",
            "https://other.test/post",
            "http://blog.example.org/news"
        ]
    );
    assert_eq!(got[0].1, "Guide to tokio runtime");
    assert_eq!(
        got[0].2.chars().count(),
        601,
        "600 characters and an ellipsis"
    );
    let asked = seen.lock().unwrap().searxng[0].clone();
    assert_eq!(asked["q"], "tokio runtime");
    assert_eq!(asked["format"], "json");
    assert_eq!(asked["language"], "en");
    assert_eq!(asked["categories"], "general");

    // The model reads the titles, URLs and snippets.
    let text = render(&call);
    assert!(
        text.contains("1. Guide to tokio runtime") && text.contains("https://other.test/post"),
        "{text}"
    );
}

#[tokio::test]
async fn allowed_domains_and_context_size_shape_the_results() {
    let (base, seen) = server().await;
    let ws = searxng_config(&base).build().unwrap();
    let tool = WebSearchTool {
        filters: Some(WebSearchFilters {
            allowed_domains: Some(vec!["example.org".into()]),
        }),
        search_context_size: Some(SearchContextSize::Low),
        ..WebSearchTool::default()
    };
    let call = run(&ws, &tool, json!({"query": "async"})).await;
    let got = sources(&call);
    let urls: Vec<_> = got.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        urls,
        [
            "https://docs.example.org/guide",
            "http://blog.example.org/news"
        ]
    );
    assert_eq!(got[0].2.chars().count(), 301);
    // One allowed domain is also passed to SearXNG as `site:`.
    assert_eq!(
        seen.lock().unwrap().searxng[0]["q"],
        "async site:example.org"
    );
}

#[tokio::test]
async fn brave_gets_its_key_and_the_users_country() {
    let (base, seen) = server().await;
    let var = "WINDLASS_TEST_BRAVE_KEY_HOSTED";
    std::env::set_var(var, BRAVE_KEY);
    let cfg = config(&format!(
        "provider = \"brave\"\nurl = \"{base}/brave\"\napi_key_env = \"{var}\"\n\
         allow_hosts = [\"127.0.0.1\"]\n"
    ));
    let ws = cfg.build().unwrap();
    // The key is in no Debug output.
    for shown in [format!("{cfg:?}"), format!("{ws:?}")] {
        assert!(!shown.contains(BRAVE_KEY), "{shown}");
    }
    let tool = WebSearchTool {
        user_location: Some(UserLocation {
            country: Some("de".into()),
            ..UserLocation::default()
        }),
        search_context_size: Some(SearchContextSize::High),
        ..WebSearchTool::default()
    };
    let call = run(&ws, &tool, json!({"query": "rust"})).await;
    assert_eq!(call.status, WebSearchCallStatus::Completed, "{call:?}");
    assert_eq!(sources(&call).len(), 3);
    let asked = seen.lock().unwrap().brave[0].clone();
    assert_eq!(asked["country"], "DE");
    assert_eq!(asked["count"], "10");

    let none = run(&ws, &tool, json!({"query": "nothing at all"})).await;
    assert_eq!(none.status, WebSearchCallStatus::Completed);
    assert!(sources(&none).is_empty());
    assert!(render(&none).starts_with("No results"));

    // A wrong key: the backend's 401 is a failed call, the key not in it.
    let bad = config(&format!(
        "provider = \"brave\"\nurl = \"{base}/brave\"\napi_key = \"wrong\"\n\
         allow_hosts = [\"127.0.0.1\"]\n"
    ))
    .build()
    .unwrap();
    let call = run(&bad, &tool, json!({"query": "rust"})).await;
    assert_eq!(call.status, WebSearchCallStatus::Failed);
    assert_eq!(
        call.error.as_deref(),
        Some("the search backend answered HTTP 401")
    );

    // A key variable that is not set is a config error.
    let unset = config(&format!(
        "provider = \"brave\"\napi_key_env = \"WINDLASS_TEST_UNSET_VAR_9f\"\nurl = \"{base}\"\n"
    ));
    let err = unset.build().unwrap_err().to_string();
    assert!(err.contains("WINDLASS_TEST_UNSET_VAR_9f"), "{err}");
}

#[tokio::test]
async fn tavily_gets_domains_depth_and_a_bearer_key() {
    let (base, seen) = server().await;
    let cfg = config(&format!(
        "provider = \"tavily\"\nurl = \"{base}/tavily\"\napi_key = \"{TAVILY_KEY}\"\n\
         allow_hosts = [\"127.0.0.0/8\"]\n"
    ));
    assert!(!format!("{cfg:?}").contains(TAVILY_KEY));
    let ws = cfg.build().unwrap();
    let tool = WebSearchTool {
        filters: Some(WebSearchFilters {
            allowed_domains: Some(vec!["example.org".into(), "other.test".into()]),
        }),
        search_context_size: Some(SearchContextSize::High),
        ..WebSearchTool::default()
    };
    let call = run(&ws, &tool, json!({"query": "crates"})).await;
    assert_eq!(call.status, WebSearchCallStatus::Completed, "{call:?}");
    assert_eq!(sources(&call).len(), 3);
    let body = seen.lock().unwrap().tavily[0].clone();
    assert_eq!(body["query"], "crates");
    assert_eq!(body["search_depth"], "advanced");
    assert_eq!(
        body["include_domains"],
        json!(["example.org", "other.test"])
    );
    assert!(body["max_results"].as_u64().unwrap() >= 10);
}

#[tokio::test]
async fn broken_backends_are_failed_calls() {
    let (base, _) = server().await;
    let ws = searxng_config(&base).build().unwrap();
    let tool = WebSearchTool::default();
    for (query, expect) in [
        ("garbage", "not JSON"),
        ("wrong shape", "no `results`"),
        ("boom", "HTTP 500"),
    ] {
        let call = run(&ws, &tool, json!({"query": query})).await;
        assert_eq!(call.status, WebSearchCallStatus::Failed, "{query}");
        let error = call.error.clone().unwrap();
        assert!(error.contains(expect), "{query}: {error}");
        assert_eq!(render(&call), format!("Error: {error}"));
    }

    // Too slow: the timeout ends it.
    let mut slow_cfg = searxng_config(&base);
    slow_cfg.timeout_ms = 300;
    let slow = run(&slow_cfg.build().unwrap(), &tool, json!({"query": "slow"})).await;
    assert_eq!(slow.status, WebSearchCallStatus::Failed);
    assert!(slow.error.unwrap().contains("within 300 ms"));

    // Down: nothing listens there.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let down = config(&format!(
        "provider = \"searxng\"\nurl = \"http://127.0.0.1:{port}\"\nallow_hosts = [\"127.0.0.1\"]\n"
    ));
    let call = run(&down.build().unwrap(), &tool, json!({"query": "x"})).await;
    assert_eq!(call.status, WebSearchCallStatus::Failed);
    assert!(call.error.unwrap().contains("could not be reached"));

    // A backend on loopback without allow_hosts is refused by the guard.
    let guarded = config(&format!(
        "provider = \"searxng\"\nurl = \"{base}/searxng\"\n"
    ));
    let call = run(&guarded.build().unwrap(), &tool, json!({"query": "x"})).await;
    assert_eq!(call.status, WebSearchCallStatus::Failed);
    let error = call.error.unwrap();
    assert!(
        error.contains("loopback") && error.contains("allow_hosts"),
        "{error}"
    );

    // Bad arguments from the model: a failed call saying what to send.
    let call = run(&ws, &tool, json!({"q": "typo"})).await;
    assert_eq!(call.status, WebSearchCallStatus::Failed);
    assert!(call.error.unwrap().contains("invalid arguments"));
}

#[tokio::test]
async fn pages_are_opened_through_the_guarded_fetch() {
    let (base, _) = server().await;
    let ws = searxng_config(&base).build().unwrap();
    let tool = WebSearchTool::default();
    let page = format!("{base}/page");
    let call = run(&ws, &tool, json!({"url": page})).await;
    assert_eq!(call.status, WebSearchCallStatus::Completed, "{call:?}");
    let WebSearchAction::OpenPage(open) = &call.action else {
        panic!("{call:?}")
    };
    assert_eq!(open.url.as_deref(), Some(page.as_str()));
    let text = open.content.clone().unwrap();
    assert!(
        text.contains("Tokio guide") && !text.contains("<h1>"),
        "{text}"
    );
    assert!(render(&call).contains("Spawn tasks"));

    let find = run(&ws, &tool, json!({"url": page, "pattern": "SPAWN"})).await;
    let WebSearchAction::FindInPage(found) = &find.action else {
        panic!("{find:?}")
    };
    assert_eq!(found.pattern, "SPAWN");
    assert!(found.content.as_deref().unwrap().contains("tokio::spawn"));
    assert!(!found.content.as_deref().unwrap().contains("Other text"));

    // A page redirecting to the metadata address is not followed.
    let call = run(&ws, &tool, json!({"url": format!("{base}/to-metadata")})).await;
    assert_eq!(call.status, WebSearchCallStatus::Failed);
    let error = call.error.unwrap();
    assert!(
        error.contains("redirect") && error.contains("169.254.169.254"),
        "{error}"
    );
    // Nor is the private address itself fetched.
    let call = run(
        &ws,
        &tool,
        json!({"url": "http://169.254.169.254/latest/meta-data/"}),
    )
    .await;
    assert_eq!(call.status, WebSearchCallStatus::Failed);
    assert!(call.error.unwrap().contains("link-local"));
    // A page outside the allowed domains is refused before any fetch.
    let limited = WebSearchTool {
        filters: Some(WebSearchFilters {
            allowed_domains: Some(vec!["example.org".into()]),
        }),
        ..WebSearchTool::default()
    };
    let call = run(&ws, &limited, json!({"url": page})).await;
    assert_eq!(call.status, WebSearchCallStatus::Failed);
    assert!(call.error.unwrap().contains("domains"));
}

#[tokio::test]
async fn config_mistakes_are_named() {
    let err = config("provider = \"searxng\"\n").build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "web_search.url is required for provider searxng"
    );
    let err = config("provider = \"tavily\"\n").build().unwrap_err();
    assert!(err.to_string().contains("api_key_env"), "{err}");
    let err =
        config("provider = \"searxng\"\nurl = \"http://x\"\nallow_hosts = [\"not a host!\"]\n")
            .build()
            .unwrap_err();
    assert!(err.to_string().contains("allow_hosts"), "{err}");
    let bad: Result<WebSearchConfig, _> = toml::from_str("provider = \"bing\"\n");
    assert!(bad.is_err());
    let bad: Result<WebSearchConfig, _> =
        toml::from_str("provider = \"searxng\"\nurl = \"http://x\"\ncolour = 1\n");
    assert!(bad.unwrap_err().to_string().contains("colour"));
}
