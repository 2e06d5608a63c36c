//! `web_fetch`: an HTTP(S) GET returned as text. The URL passes the same
//! outbound guard as request-declared MCP servers (no private, loopback or
//! link-local address unless allowlisted, the connection pinned to the
//! checked addresses, no redirects followed) and the domain allowlist; the
//! body is read up to a size cap and HTML is reduced to readable text.

use std::time::Duration;

use reqwest::redirect;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::config::FetchConfig;
use crate::ssrf::{check_url, AllowList, SsrfError};

/// Width HTML is wrapped at.
const TEXT_WIDTH: usize = 100;

#[derive(Debug)]
pub struct Fetch {
    config: FetchConfig,
    allow: AllowList,
    /// The config table these settings come from, named in refusals.
    table: &'static str,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchArgs {
    url: String,
}

impl Fetch {
    pub fn new(config: FetchConfig) -> Result<Fetch, String> {
        Fetch::for_table(config, "builtins.web_fetch")
    }

    /// Settings read from the config table `table` (e.g.
    /// `web_search.open_page`).
    pub(crate) fn for_table(config: FetchConfig, table: &'static str) -> Result<Fetch, String> {
        let allow = AllowList::parse(&config.allow_hosts)
            .map_err(|e| format!("{table}.allow_hosts: {e}"))?;
        Ok(Fetch {
            config,
            allow,
            table,
        })
    }

    pub async fn run(&self, arguments: &str, cancel: &CancellationToken) -> Result<String, String> {
        let args: FetchArgs =
            serde_json::from_str(arguments).map_err(|e| format!("invalid arguments: {e}"))?;
        let limit = Duration::from_millis(self.config.timeout_ms);
        tokio::select! {
            r = tokio::time::timeout(limit, self.fetch(&args.url)) => {
                r.map_err(|_| format!("no complete answer from {} within {} ms", args.url, self.config.timeout_ms))?
            }
            _ = cancel.cancelled() => Err("cancelled".to_owned()),
        }
    }

    /// GETs `url` as text within the timeout (for `web_search`'s
    /// `open_page`, which has no JSON arguments).
    pub(crate) async fn get(
        &self,
        url: &str,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        self.run(&serde_json::json!({ "url": url }).to_string(), cancel)
            .await
    }

    async fn fetch(&self, url: &str) -> Result<String, String> {
        let checked = check_url(url, &self.allow)
            .await
            .map_err(|e| refusal(e, self.table))?;
        if let Some(domains) = &self.config.allow_domains {
            if !domain_allowed(domains, &checked.host) {
                return Err(format!(
                    "host '{}' is not on this gateway's {} domain allowlist",
                    checked.host, self.table
                ));
            }
        }
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(crate::transport::tls_config().map_err(|e| e.to_string())?)
            .resolve_to_addrs(&checked.host, &checked.addrs)
            .redirect(redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| format!("HTTP client setup failed: {e}"))?;
        let response = client
            .get(checked.url.clone())
            .header("User-Agent", "windlass-web-fetch")
            .send()
            .await
            .map_err(|e| format!("request to {url} failed: {e}"))?;
        let status = response.status();
        if status.is_redirection() {
            let to = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("?");
            return Err(format!(
                "{url} redirects (HTTP {status}) to {to}; redirects are not followed, fetch that URL instead"
            ));
        }
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let (body, more) = read_capped(response, self.config.max_bytes).await?;
        let textual = kind.is_empty()
            || kind.starts_with("text/")
            || kind.contains("json")
            || kind.contains("xml")
            || kind.contains("javascript");
        if !textual {
            return Err(format!("{url} is not text (content-type {kind})"));
        }
        let mut text = if kind.contains("html") {
            html2text::from_read(body.as_slice(), TEXT_WIDTH)
                .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned())
        } else {
            String::from_utf8_lossy(&body).into_owned()
        };
        if more {
            text.push_str(&format!(
                "\n[truncated: only the first {} bytes of the page were read]",
                self.config.max_bytes
            ));
        }
        if !status.is_success() {
            return Err(format!("{url} answered HTTP {status}:\n{text}"));
        }
        Ok(text)
    }
}

async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading the page failed: {e}"))?
    {
        let room = cap.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..room.min(chunk.len())]);
        if chunk.len() > room {
            return Ok((body, true));
        }
    }
    Ok((body, false))
}

/// The guard's refusal, worded for a fetch rather than an MCP server.
fn refusal(e: SsrfError, table: &str) -> String {
    match e {
        SsrfError::BadUrl(u) => format!("{u:?} is not a valid URL"),
        SsrfError::Credentials => "URLs with credentials (user:password@) are not fetched".to_owned(),
        SsrfError::Scheme(s) => format!("only http and https URLs can be fetched, not {s:?}"),
        SsrfError::Unresolved(h) => format!("host '{h}' could not be resolved"),
        SsrfError::Forbidden { host, addr, kind } => format!(
            "host '{host}' resolves to {addr}, a {kind} address, which this gateway does not fetch from (the operator can allow it with {table}.allow_hosts)"
        ),
    }
}

/// Exact host names (case-insensitive) or `*.suffix` for sub-domains.
pub fn domain_allowed(domains: &[String], host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    domains.iter().any(|d| {
        let d = d.trim_end_matches('.').to_ascii_lowercase();
        match d.strip_prefix("*.") {
            Some(suffix) => host.ends_with(&format!(".{suffix}")),
            None => host == d,
        }
    })
}
