//! The built-in tools against real files, a real bubblewrap sandbox and a
//! real local HTTP server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use windlass_engine::{McpHub, McpServerRef, ToolResult};
use windlass_protocol::ToolOutput;
use windlass_tools::builtins::{Builtins, BuiltinsConfig, SandboxKind, WithBuiltins};

fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "windlass-builtins-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(r: &ToolResult) -> String {
    match &r.output {
        ToolOutput::Text(t) => t.clone(),
        other => format!("{other:?}"),
    }
}

fn config(work: &Path, tools: &[&str]) -> BuiltinsConfig {
    let mut c: BuiltinsConfig = toml::from_str("").unwrap();
    c.enabled = tools.iter().map(|s| s.to_string()).collect();
    c.work_dir = Some(work.to_path_buf());
    c
}

async fn call(b: &Builtins, tool: &str, args: serde_json::Value) -> ToolResult {
    b.call(tool, &args.to_string(), &CancellationToken::new())
        .await
        .unwrap()
}

const FILE_TOOLS: [&str; 4] = ["read_file", "write_file", "edit_file", "list_dir"];

#[tokio::test]
async fn file_tools_work_inside_the_roots() {
    let work = temp_dir("files");
    let b = Builtins::start(config(&work, &FILE_TOOLS)).await.unwrap();
    let w = call(
        &b,
        "write_file",
        json!({"path": "notes/a.txt", "content": "one\ntwo\nthree\n"}),
    )
    .await;
    assert!(!w.is_error, "{}", text(&w));
    assert_eq!(
        std::fs::read_to_string(work.join("notes/a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    let r = call(&b, "read_file", json!({"path": "notes/a.txt"})).await;
    assert_eq!(text(&r), "one\ntwo\nthree\n");
    let e = call(
        &b,
        "edit_file",
        json!({"path": "notes/a.txt", "old_string": "two", "new_string": "2"}),
    )
    .await;
    assert!(!e.is_error, "{}", text(&e));
    assert_eq!(
        std::fs::read_to_string(work.join("notes/a.txt")).unwrap(),
        "one\n2\nthree\n"
    );
    // Not unique, and absent: refused, file unchanged.
    std::fs::write(work.join("dup.txt"), "x x").unwrap();
    let dup = call(
        &b,
        "edit_file",
        json!({"path": "dup.txt", "old_string": "x", "new_string": "y"}),
    )
    .await;
    assert!(
        dup.is_error && text(&dup).contains("2 times"),
        "{}",
        text(&dup)
    );
    assert_eq!(
        std::fs::read_to_string(work.join("dup.txt")).unwrap(),
        "x x"
    );
    let l = call(&b, "list_dir", json!({})).await;
    assert_eq!(text(&l), "dup.txt\nnotes/");
}

#[tokio::test]
async fn escapes_are_refused() {
    let work = temp_dir("escape-work");
    let outside = temp_dir("escape-outside");
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), work.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, work.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(outside.join("planted.txt"), work.join("dangling.txt")).unwrap();
    let b = Builtins::start(config(&work, &FILE_TOOLS)).await.unwrap();
    let secret = outside.join("secret.txt").display().to_string();
    let attempts = [
        ("read_file", json!({"path": "../escape-outside/secret.txt"})),
        ("read_file", json!({"path": secret})),
        ("read_file", json!({"path": "link.txt"})),
        ("read_file", json!({"path": "linkdir/secret.txt"})),
        (
            "write_file",
            json!({"path": "linkdir/new.txt", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": outside.join("new.txt").display().to_string(), "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "a/../../x.txt", "content": "x"}),
        ),
        (
            "edit_file",
            json!({"path": "link.txt", "old_string": "secret", "new_string": "gone"}),
        ),
        ("list_dir", json!({"path": "linkdir"})),
        ("list_dir", json!({"path": "/"})),
        (
            "write_file",
            json!({"path": "dangling.txt", "content": "x"}),
        ),
    ];
    for (tool, args) in attempts {
        let r = call(&b, tool, args.clone()).await;
        assert!(r.is_error, "{tool} {args} was not refused: {}", text(&r));
        assert!(!text(&r).contains("secret\n") && text(&r) != "secret");
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(!outside.join("new.txt").exists());
    assert!(
        !outside.join("planted.txt").exists(),
        "a dangling symlink led outside"
    );
    // A second root is usable by absolute path.
    let mut c = config(&work, &FILE_TOOLS);
    c.roots = vec![outside.clone()];
    let b = Builtins::start(c).await.unwrap();
    let r = call(&b, "read_file", json!({"path": secret})).await;
    assert_eq!(text(&r), "secret");
}

fn shell_config(work: &Path) -> BuiltinsConfig {
    let mut c = config(work, &["shell"]);
    c.shell.timeout_ms = 20_000;
    c
}

async fn shell(b: &Builtins, command: &str) -> ToolResult {
    call(b, "shell", json!({"command": command})).await
}

#[tokio::test]
async fn shell_runs_in_the_work_dir_and_reports_exit_status() {
    let work = temp_dir("sh-ok");
    std::fs::write(work.join("README.md"), "a\nb\nc\n").unwrap();
    let b = Builtins::start(shell_config(&work)).await.unwrap();
    assert_eq!(
        b.shell_unavailable(),
        None,
        "bubblewrap must work for these tests"
    );
    let r = shell(&b, "wc -l < README.md && echo made > out.txt").await;
    assert!(!r.is_error, "{}", text(&r));
    assert!(text(&r).starts_with("exit status: 0"), "{}", text(&r));
    assert!(text(&r).contains("3"), "{}", text(&r));
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "made\n"
    );
    let r = shell(&b, "echo oops >&2; exit 3").await;
    assert!(r.is_error);
    assert!(
        text(&r).contains("exit status: 3") && text(&r).contains("--- stderr ---\noops"),
        "{}",
        text(&r)
    );
}

#[tokio::test]
async fn shell_cannot_write_outside_the_work_dir() {
    let work = temp_dir("sh-write");
    let outside = temp_dir("sh-outside");
    let b = Builtins::start(shell_config(&work)).await.unwrap();
    for target in [
        outside.join("x"),
        PathBuf::from("/etc/windlass-test"),
        PathBuf::from("/usr/windlass-test"),
    ] {
        let r = shell(&b, &format!("echo x > {}", target.display())).await;
        assert!(r.is_error, "{}", text(&r));
        assert!(!target.exists(), "{} was written", target.display());
    }
    // /tmp is private to the call.
    let r = shell(
        &b,
        "echo x > /tmp/windlass-private && cat /tmp/windlass-private",
    )
    .await;
    assert!(!r.is_error, "{}", text(&r));
    assert!(!Path::new("/tmp/windlass-private").exists());
}

#[tokio::test]
async fn shell_has_no_network_unless_allowed() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo connected");
    let work = temp_dir("sh-net");
    let b = Builtins::start(shell_config(&work)).await.unwrap();
    let r = shell(&b, &probe).await;
    assert!(r.is_error, "{}", text(&r));
    assert!(!text(&r).contains("connected"));
    // The same line reaches the port when the operator allows the network.
    let mut c = shell_config(&work);
    c.shell.network = true;
    let b = Builtins::start(c).await.unwrap();
    let r = shell(&b, &probe).await;
    assert!(text(&r).contains("connected"), "{}", text(&r));
}

#[tokio::test]
async fn shell_is_killed_at_its_limits() {
    let work = temp_dir("sh-limits");
    let mut c = shell_config(&work);
    c.shell.cpu_seconds = 1;
    c.shell.memory_mb = 64;
    c.shell.max_output_bytes = 1000;
    let b = Builtins::start(c).await.unwrap();
    let r = shell(&b, "while :; do :; done").await;
    assert!(r.is_error);
    assert!(text(&r).contains("signal"), "{}", text(&r));
    let r = call(
        &b,
        "shell",
        json!({"command": "sleep 30", "timeout_ms": 300}),
    )
    .await;
    assert!(r.is_error);
    assert!(text(&r).contains("timed out after 300 ms"), "{}", text(&r));
    // A zero (what small models send for "default") means the operator's timeout.
    let r = call(&b, "shell", json!({"command": "echo ok", "timeout_ms": 0})).await;
    assert!(!r.is_error, "{}", text(&r));
    assert!(text(&r).contains("ok"), "{}", text(&r));
    let r = shell(
        &b,
        "python3 -c 'x = bytearray(256 * 1024 * 1024); print(\"allocated\")'",
    )
    .await;
    assert!(r.is_error, "{}", text(&r));
    assert!(
        !text(&r).contains("allocated") && text(&r).contains("MemoryError"),
        "{}",
        text(&r)
    );
    let r = shell(&b, "yes | head -c 100000").await;
    assert!(
        text(&r).contains("[stdout truncated: 99000 more bytes not shown"),
        "{}",
        text(&r)
    );
}

#[tokio::test]
async fn shell_without_sandbox_needs_saying_so() {
    let work = temp_dir("sh-none");
    let mut c = shell_config(&work);
    c.shell.sandbox = SandboxKind::None;
    let b = Builtins::start(c).await.unwrap();
    let r = shell(&b, "pwd").await;
    assert!(
        text(&r).contains(&work.canonicalize().unwrap().display().to_string()),
        "{}",
        text(&r)
    );
}

async fn html_server() -> std::net::SocketAddr {
    use axum::response::Html;
    let app = axum::Router::new()
        .route("/page", axum::routing::get(|| async { Html("<html><body><h1>Title</h1><p>Hello <b>web</b> fetch</p><script>x()</script></body></html>") }))
        .route("/big", axum::routing::get(|| async { "y".repeat(5000) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test]
async fn web_fetch_is_guarded_and_returns_text() {
    let addr = html_server().await;
    let work = temp_dir("fetch");
    let url = format!("http://127.0.0.1:{}/page", addr.port());
    // Loopback is refused by the outbound guard by default.
    let b = Builtins::start(config(&work, &["web_fetch"]))
        .await
        .unwrap();
    let r = call(&b, "web_fetch", json!({"url": url})).await;
    assert!(r.is_error && text(&r).contains("loopback"), "{}", text(&r));
    // Allowed by the operator: the page comes back as text.
    let mut c = config(&work, &["web_fetch"]);
    c.web_fetch.allow_hosts = vec!["127.0.0.1".to_owned()];
    c.web_fetch.max_bytes = 1000;
    let b = Builtins::start(c.clone()).await.unwrap();
    let r = call(&b, "web_fetch", json!({"url": url})).await;
    assert!(!r.is_error, "{}", text(&r));
    assert!(
        text(&r).contains("Title") && text(&r).contains("Hello") && !text(&r).contains("<p>"),
        "{}",
        text(&r)
    );
    let big = call(
        &b,
        "web_fetch",
        json!({"url": format!("http://127.0.0.1:{}/big", addr.port())}),
    )
    .await;
    assert!(text(&big).contains("[truncated"), "{}", text(&big));
    // A domain allowlist that does not name the host refuses it.
    c.web_fetch.allow_domains = Some(vec!["example.com".to_owned()]);
    let b = Builtins::start(c).await.unwrap();
    let r = call(&b, "web_fetch", json!({"url": url})).await;
    assert!(r.is_error && text(&r).contains("allowlist"), "{}", text(&r));
    let r = call(&b, "web_fetch", json!({"url": "file:///etc/passwd"})).await;
    assert!(r.is_error, "{}", text(&r));
}

#[tokio::test]
async fn the_hub_serves_only_enabled_builtins_under_the_reserved_label() {
    let work = temp_dir("hub");
    let b = Arc::new(
        Builtins::start(config(&work, &["read_file", "shell"]))
            .await
            .unwrap(),
    );
    let hub = WithBuiltins::new(b, None);
    let server = McpServerRef {
        label: "windlass".to_owned(),
        url: None,
        headers: vec![],
    };
    hub.check(&server).await.unwrap();
    let tools = hub
        .list_tools(&server, &CancellationToken::new())
        .await
        .unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read_file", "shell"]);
    assert_eq!(tools[0].annotations.as_ref().unwrap()["readOnlyHint"], true);
    assert_eq!(
        tools[1].annotations.as_ref().unwrap()["readOnlyHint"],
        false
    );
    let r = hub
        .call_tool(&server, "write_file", "{}", &CancellationToken::new())
        .await;
    assert!(
        r.is_err(),
        "a tool the operator did not enable must not run"
    );
    // A request may not put its own server under the reserved label.
    let fake = McpServerRef {
        url: Some("https://example.com/mcp".to_owned()),
        ..server
    };
    assert!(hub.check(&fake).await.is_err());
    let other = McpServerRef {
        label: "calc".to_owned(),
        url: None,
        headers: vec![],
    };
    assert!(hub.check(&other).await.is_err());
    // Nor may the operator configure one.
    let cfg: windlass_tools::McpConfig =
        toml::from_str("[[servers]]\nlabel = \"windlass\"\ncommand = \"x\"\n").unwrap();
    assert!(cfg.validate().is_err());
}
