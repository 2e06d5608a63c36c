//! A SearXNG-shaped search backend for the hosted `web_search` tool's tests.

use serde_json::json;

/// Serves `/search` on a free port, answering every query with the same
/// two results; returns its base URL.
pub async fn searxng() -> String {
    use axum::routing::get;
    let app = axum::Router::new().route(
        "/search",
        get(|| async {
            axum::Json(json!({"results": [
                {"url": "https://tokio.rs/", "title": "Tokio", "content": "An asynchronous runtime for Rust."},
                {"url": "https://docs.rs/tokio", "title": "tokio - docs.rs", "content": "API docs."}
            ]}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}
