use super::*;
use crate::config::FileConfig;

fn table(text: &str) -> Vec<ResolvedUpstream> {
    let file: FileConfig = toml::from_str(text).unwrap();
    file.upstreams
        .into_iter()
        .map(|u| u.resolve().unwrap())
        .collect()
}

#[test]
fn the_readme_example_parses() {
    std::env::set_var("WINDLASS_TEST_ANTHROPIC_KEY", "sk-ant-test");
    let ups = table(
        r#"
[[upstreams]]
name = "local"
url = "http://127.0.0.1:8081/v1"
models = ["qwen2.5-1.5b", "qwen-*", { name = "fast", upstream_name = "qwen2.5-0.5b" }]
fallbacks = ["cloud"]
first_byte_timeout_ms = 120000
max_retries = 1

[[upstreams]]
name = "cloud"
kind = "responses"
url = "https://api.openai.com/v1"
api_key = "sk-test"
models = ["gpt-*", "o4-mini"]
ca_file = "/etc/ssl/certs/private-ca.pem"

[[upstreams]]
name = "claude"
kind = "anthropic"
url = "https://api.anthropic.com/v1"
api_key_env = "WINDLASS_TEST_ANTHROPIC_KEY"
models = ["claude-*"]
headers = { "anthropic-beta" = "interleaved-thinking-2025-05-14" }
"#,
    );
    assert_eq!(ups.len(), 3);
    assert_eq!(ups[0].kind, UpstreamKind::Chat);
    assert_eq!(ups[0].models[2].pattern, "fast");
    assert_eq!(
        ups[0].models[2].upstream_name.as_deref(),
        Some("qwen2.5-0.5b")
    );
    assert_eq!(ups[0].fallbacks, ["cloud"]);
    assert_eq!(ups[0].provider.first_byte_timeout, Duration::from_secs(120));
    assert_eq!(ups[0].provider.max_retries, 1);
    assert_eq!(ups[1].kind, UpstreamKind::Responses);
    // Timeouts not given wait as long as the OpenAI SDKs do: ten minutes.
    assert_eq!(ups[1].provider.first_byte_timeout, Duration::from_secs(600));
    assert_eq!(ups[1].provider.idle_timeout, Duration::from_secs(600));
    assert_eq!(ups[0].provider.idle_timeout, Duration::from_secs(600));
    assert_eq!(ups[1].provider.api_key.as_deref(), Some("sk-test"));
    assert_eq!(
        ups[1].provider.ca_file.as_deref(),
        Some(std::path::Path::new("/etc/ssl/certs/private-ca.pem"))
    );
    assert_eq!(ups[2].kind, UpstreamKind::Anthropic);
    assert_eq!(ups[2].provider.api_key.as_deref(), Some("sk-ant-test"));
    assert_eq!(ups[2].provider.extra_headers.len(), 1);
}

#[test]
fn unknown_keys_kinds_and_missing_env_are_errors() {
    let bad_key = toml::from_str::<FileConfig>(
        "[[upstreams]]\nname = \"a\"\nurl = \"http://x/v1\"\nmodle = [\"m\"]\n",
    );
    assert!(bad_key.unwrap_err().to_string().contains("modle"));
    let bad_kind = toml::from_str::<FileConfig>(
        "[[upstreams]]\nname = \"a\"\nkind = \"grpc\"\nurl = \"http://x/v1\"\n",
    );
    assert!(bad_kind.unwrap_err().to_string().contains("grpc"));
    let file: FileConfig = toml::from_str(
        "[[upstreams]]\nname = \"a\"\nurl = \"http://x/v1\"\napi_key_env = \"WINDLASS_TEST_UNSET_VAR_42\"\n",
    )
    .unwrap();
    let err = file
        .upstreams
        .into_iter()
        .next()
        .unwrap()
        .resolve()
        .unwrap_err();
    assert!(
        err.to_string().contains("WINDLASS_TEST_UNSET_VAR_42"),
        "{err}"
    );
}

#[test]
fn an_unknown_fallback_is_refused_at_start_up() {
    let ups = table(
        "[[upstreams]]\nname = \"a\"\nurl = \"http://127.0.0.1:1/v1\"\nfallbacks = [\"b\"]\n",
    );
    let err = build_router(&ups).err().unwrap();
    assert!(err.to_string().contains("`b`"), "{err}");
}
