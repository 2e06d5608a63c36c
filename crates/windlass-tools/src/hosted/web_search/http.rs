//! Requests to a search backend: through the outbound guard (a backend on a
//! loopback or private address needs the operator's `allow_hosts`), to the
//! addresses the guard approved only, no redirects, a timeout, and a cap on
//! the answer's size.

use std::time::Duration;

use reqwest::redirect;
use serde_json::Value;

use super::search::SearchError;
use crate::ssrf::{check_url, AllowList, SsrfError};

/// Largest backend answer read, in bytes.
const MAX_ANSWER: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone)]
pub(crate) struct Outbound {
    pub allow: AllowList,
    pub timeout: Duration,
}

/// A request: GET with query parameters, or POST with a JSON body.
pub(crate) enum Call<'a> {
    Get(&'a [(&'a str, String)]),
    Post(&'a Value),
}

fn refused(e: SsrfError) -> SearchError {
    SearchError::Refused(match e {
        SsrfError::BadUrl(_) => "not a valid http(s) URL".to_owned(),
        SsrfError::Credentials => "URLs with credentials (user:password@) are refused".to_owned(),
        SsrfError::Scheme(s) => format!("scheme {s:?} is not http or https"),
        SsrfError::Unresolved(h) => format!("host '{h}' could not be resolved"),
        SsrfError::Forbidden { host, addr, kind } => format!(
            "host '{host}' resolves to {addr}, a {kind} address (allow it with web_search.allow_hosts)"
        ),
    })
}

impl Outbound {
    /// Sends `call` to `url` with `headers`; Ok is the answer's JSON.
    pub(crate) async fn json(
        &self,
        url: &str,
        call: Call<'_>,
        headers: &[(&str, &str)],
    ) -> Result<Value, SearchError> {
        let ms = self.timeout.as_millis() as u64;
        tokio::time::timeout(self.timeout, self.send(url, call, headers))
            .await
            .map_err(|_| SearchError::Timeout(ms))?
    }

    async fn send(
        &self,
        url: &str,
        call: Call<'_>,
        headers: &[(&str, &str)],
    ) -> Result<Value, SearchError> {
        let mut checked = check_url(url, &self.allow).await.map_err(refused)?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(
                crate::transport::tls_config()
                    .map_err(|e| SearchError::Unreachable(e.to_string()))?,
            )
            .resolve_to_addrs(&checked.host, &checked.addrs)
            .redirect(redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| SearchError::Unreachable(format!("HTTP client setup: {e}")))?;
        let request = match call {
            Call::Get(params) => {
                checked
                    .url
                    .query_pairs_mut()
                    .extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())));
                client.get(checked.url)
            }
            Call::Post(body) => client
                .post(checked.url)
                .header("Content-Type", "application/json")
                .body(body.to_string()),
        };
        let mut request = request
            .header("Accept", "application/json")
            .header("User-Agent", "windlass-web-search");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| SearchError::Unreachable(e.without_url().to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(SearchError::Status(status.as_u16()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| SearchError::Unreachable(e.without_url().to_string()))?
        {
            if body.len() + chunk.len() > MAX_ANSWER {
                return Err(SearchError::Garbage(format!(
                    "the answer is larger than {MAX_ANSWER} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body)
            .map_err(|e| SearchError::Garbage(format!("the answer is not JSON ({e})")))
    }
}
