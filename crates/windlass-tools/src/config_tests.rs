//! Unit tests of the `[mcp]` config (kept apart so config.rs stays short).
use super::*;
use windlass_protocol::McpApprovalMode;

#[derive(Deserialize)]
struct Root {
    mcp: McpConfig,
}

fn parse(text: &str) -> McpConfig {
    toml::from_str::<Root>(text).expect("toml").mcp
}

#[test]
fn full_example_parses_and_validates() {
    let config = parse(
        r#"
        [mcp]
        call_timeout_secs = 30
        allow_hosts = ["127.0.0.1", "10.0.0.0/8", "localhost", "mcp.internal"]

        [[mcp.servers]]
        label = "calc"
        url = "http://127.0.0.1:8091/mcp"
        headers = { "X-Key" = "k" }
        bearer_token = "secret-token"
        require_approval = "never"

        [[mcp.servers]]
        label = "time_2"
        command = "python"
        args = ["server.py", "--stdio"]
        env = { K = "v" }
        cwd = "/tmp"
        "#,
    );
    config.validate().expect("valid");
    assert_eq!(config.call_timeout(), Duration::from_secs(30));
    assert_eq!(config.session_idle_secs, DEFAULT_SESSION_IDLE_SECS);
    assert_eq!(
        config.servers[0].require_approval,
        Some(McpRequireApproval::Mode(McpApprovalMode::Never))
    );
    match config.servers[0].transport().expect("http") {
        ServerTransport::Http { headers, .. } => {
            assert!(headers.contains(&("X-Key".into(), "k".into())));
            assert!(headers.contains(&("Authorization".into(), "Bearer secret-token".into())));
        }
        ServerTransport::Stdio { .. } => panic!("expected http"),
    }
    assert!(matches!(
        config.servers[1].transport(),
        Ok(ServerTransport::Stdio { .. })
    ));
}

#[test]
fn defaults_apply_to_an_empty_table() {
    let config = parse("[mcp]\n");
    config.validate().expect("valid");
    assert_eq!(config.call_timeout_secs, DEFAULT_CALL_TIMEOUT_SECS);
    assert!(config.servers.is_empty());
}

#[test]
fn debug_redacts_secrets() {
    let config = parse(
        r#"
        [mcp]
        [[mcp.servers]]
        label = "calc"
        url = "http://x/mcp"
        headers = { "X-Key" = "hidden-header" }
        bearer_token = "hidden-token"
        "#,
    );
    let shown = format!("{config:?}");
    assert!(!shown.contains("hidden"), "{shown}");
    assert!(shown.contains("calc"));
}

fn server(label: &str) -> McpServerConfig {
    McpServerConfig {
        label: label.into(),
        url: Some("http://127.0.0.1:1/mcp".into()),
        ..McpServerConfig::default()
    }
}

fn invalid(servers: Vec<McpServerConfig>) -> ConfigError {
    McpConfig {
        servers,
        ..McpConfig::default()
    }
    .validate()
    .expect_err("invalid")
}

#[test]
fn labels_are_checked() {
    assert!(matches!(
        invalid(vec![server("bad label")]),
        ConfigError::BadLabel(_)
    ));
    assert!(matches!(
        invalid(vec![server("")]),
        ConfigError::BadLabel(_)
    ));
    assert_eq!(
        invalid(vec![server("a"), server("a")]),
        ConfigError::DuplicateLabel("a".into())
    );
}

#[test]
fn exactly_one_transport() {
    let mut both = server("x");
    both.command = Some("python".into());
    assert!(matches!(
        invalid(vec![both]),
        ConfigError::TransportChoice(_)
    ));
    let mut neither = server("x");
    neither.url = None;
    assert!(matches!(
        invalid(vec![neither]),
        ConfigError::TransportChoice(_)
    ));
    let mut args_on_http = server("x");
    args_on_http.args = vec!["a".into()];
    assert!(matches!(
        invalid(vec![args_on_http]),
        ConfigError::MisplacedField { field: "args", .. }
    ));
}

#[test]
fn urls_headers_tokens_and_hosts_are_checked() {
    let mut bad_url = server("x");
    bad_url.url = Some("ftp://host/x".into());
    assert!(matches!(invalid(vec![bad_url]), ConfigError::BadUrl { .. }));

    let mut bad_header = server("x");
    bad_header.headers.insert("Bad Name".into(), "v".into());
    assert!(matches!(
        invalid(vec![bad_header]),
        ConfigError::BadHeader { .. }
    ));

    let mut two = server("x");
    two.bearer_token = Some("a".into());
    two.bearer_token_env = Some("B".into());
    assert!(matches!(invalid(vec![two]), ConfigError::TwoTokens(_)));

    let mut missing = server("x");
    missing.bearer_token_env = Some("WINDLASS_TOOLS_TEST_UNSET_TOKEN_VAR".into());
    assert!(matches!(
        invalid(vec![missing]),
        ConfigError::MissingTokenEnv { .. }
    ));

    let hosts = McpConfig {
        allow_hosts: vec!["10.0.0.0/33".into()],
        ..McpConfig::default()
    };
    assert!(matches!(hosts.validate(), Err(ConfigError::AllowHost(_))));

    let zero = McpConfig {
        call_timeout_secs: 0,
        ..McpConfig::default()
    };
    assert_eq!(zero.validate(), Err(ConfigError::ZeroTimeout));
}

#[test]
fn unknown_fields_are_rejected() {
    let err = toml::from_str::<Root>("[mcp]\ncall_timeout = 3\n");
    assert!(err.is_err());
}
