//! Every config-file setting from the environment: `WINDLASS_` + the TOML
//! path in capitals with `__` between parts, read by the setting's type.

use std::path::PathBuf;

use windlass_cli::config::{file_schema, load, ConfigError, Environment, FileConfig};
use windlass_cli::config_env::apply;
use windlass_cli::config_schema::Kind;

fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windlass-env-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("windlass.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn load_with(text: &str, name: &str, vars: &[(&str, &str)]) -> Result<FileConfig, ConfigError> {
    load(
        Some(&file(name, text)),
        &Environment::from_pairs(vars.iter().copied()),
    )
}

#[test]
fn variables_override_the_file_by_type() {
    let text = "[server]\nmax_connections = 10\napi_keys = [\"f\"]\n\
                [[upstreams]]\nname = \"a\"\nurl = \"http://a/v1\"\n";
    let f = load_with(
        text,
        "types",
        &[
            ("WINDLASS_SERVER__MAX_CONNECTIONS", "2048"),
            ("WINDLASS_SERVER__API_KEYS", "k1, k2"),
            ("WINDLASS_SERVER__SHUTDOWN_GRACE_SECS", "45"),
            // Digits for a text setting stay text.
            ("WINDLASS_UPSTREAM__API_KEY", "12345"),
            ("WINDLASS_UPSTREAMS__0__API_KEY", "sk-a"),
            ("WINDLASS_LOOP__COMPLETION_CHECK", "true"),
            ("WINDLASS_BUILTINS__SHELL__TIMEOUT_MS", "90000"),
            ("WINDLASS_GOVERNANCE__KEYS__CI__AUTONOMY", "read_only"),
            ("WINDLASS_GOVERNANCE__RATE_LIMIT", "{ per_minute = 7 }"),
            (
                "WINDLASS_MCP__ALLOW_HOSTS",
                "[\"10.0.0.0/8\", \"mcp.internal\"]",
            ),
            // Not the rule (no `__`): the flags' own variables, ignored here.
            ("WINDLASS_UPSTREAM_URL", "http://ignored"),
            ("UNRELATED__VAR", "x"),
        ],
    )
    .expect("loads");
    assert_eq!(f.server.max_connections, Some(2048));
    assert_eq!(f.server.api_keys, ["k1", "k2"]);
    assert_eq!(f.server.shutdown_grace_secs, Some(45));
    assert_eq!(f.upstream.api_key.as_deref(), Some("12345"));
    assert_eq!(f.upstream.url, None);
    assert_eq!(f.upstreams[0].api_key.as_deref(), Some("sk-a"));
    assert_eq!(f.upstreams[0].name, "a", "the file's other keys stay");
    assert_eq!(f.agent_loop.completion_check, Some(true));
    assert_eq!(f.builtins.shell.timeout_ms, 90000);
    assert_eq!(
        f.governance.keys["ci"].autonomy,
        Some(windlass_governance::Autonomy::ReadOnly)
    );
    assert_eq!(
        f.governance.defaults.rate_limit.map(|r| r.per_minute.get()),
        Some(7)
    );
    assert_eq!(f.mcp.allow_hosts, ["10.0.0.0/8", "mcp.internal"]);
}

#[test]
fn without_a_file_the_environment_alone_configures() {
    let env = Environment::from_pairs([
        ("WINDLASS_UPSTREAM__URL", "http://127.0.0.1:9/v1"),
        ("WINDLASS_SERVER__SSE_KEEPALIVE_SECS", "5"),
    ]);
    let f = load(None, &env).expect("loads");
    assert_eq!(f.upstream.url.as_deref(), Some("http://127.0.0.1:9/v1"));
    assert_eq!(f.server.sse_keepalive_secs, Some(5));
}

#[test]
fn a_variable_naming_no_setting_or_a_bad_value_refuses_to_start() {
    for (var, value, says) in [
        ("WINDLASS_SERVER__MAX_CONECTIONS", "1", "max_conections"),
        ("WINDLASS_SERVER__MAX_CONNECTIONS", "many", "integer"),
        ("WINDLASS_LOOP__COMPLETION_CHECK", "maybe", "true or false"),
        ("WINDLASS_NOPE__X", "1", "nope"),
    ] {
        let err = load_with("", "bad", &[(var, value)]).expect_err(var);
        let text = err.to_string();
        assert!(matches!(err, ConfigError::Env(_)), "{var}: {text}");
        assert!(text.contains(var) && text.contains(says), "{var}: {text}");
    }
    // A value of the wrong shape for the setting is refused by the loader.
    let err = load_with(
        "",
        "enum",
        &[("WINDLASS_LOOP__CLIENT_TOOLS_STATUS", "sometimes")],
    )
    .expect_err("refused");
    assert!(matches!(err, ConfigError::EnvParse(_)), "{err}");
}

#[test]
fn every_setting_has_a_variable() {
    let schema = file_schema();
    for setting in schema.settings() {
        let var = format!(
            "WINDLASS_{}",
            setting
                .replace("[]", "0")
                .replace('*', "name")
                .replace('.', "__")
                .to_uppercase()
        );
        if !setting.contains('.') {
            // Top-level settings are the flags' own variables (same name).
            assert!(
                serve_flag_vars().contains(&var),
                "{var} is no flag variable"
            );
            continue;
        }
        let kind = schema.kind(&setting).unwrap_or(Kind::Any);
        let value = match kind {
            Kind::Int => "1",
            Kind::Float => "1.5",
            Kind::Bool => "true",
            _ => "x",
        };
        let mut table = toml::Table::new();
        let n = apply(&mut table, [(var.clone(), value.to_owned())], &schema)
            .unwrap_or_else(|e| panic!("{setting}: {e}"));
        assert_eq!(n, 1, "{var}");
        // The value landed under the setting's own path.
        let mut node = &toml::Value::Table(table);
        for part in setting.split('.') {
            node = match (node, part) {
                (toml::Value::Array(a), "[]") => &a[0],
                (toml::Value::Table(t), "*") => &t["name"],
                (toml::Value::Table(t), key) => t.get(key).unwrap_or_else(|| panic!("{var}")),
                _ => panic!("{var}: {node:?} at {part}"),
            };
        }
        if matches!(kind, Kind::Seq) {
            assert!(node.is_array(), "{var}: {node:?}");
        }
    }
}

/// The variables `windlass serve`'s flags read.
fn serve_flag_vars() -> Vec<String> {
    use clap::CommandFactory;
    let cli = windlass_cli::cli::Cli::command();
    let serve = cli.find_subcommand("serve").expect("serve");
    serve
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect()
}
