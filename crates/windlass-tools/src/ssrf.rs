//! Outbound-URL guard for MCP servers that a request declares (`server_url`).
//!
//! A request must not make the gateway reach its own network: loopback,
//! private, link-local (cloud metadata), CGNAT, multicast and reserved
//! addresses are refused unless the operator allowlisted the host name or the
//! address. The check resolves the host once and returns the addresses it
//! approved; the HTTP client for that server connects only to those
//! addresses and follows no redirects, so neither DNS rebinding nor a 30x can
//! lead it elsewhere. Operator-configured servers are trusted and not
//! guarded.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::IpNet;
use reqwest::Url;

/// Operator exceptions to the guard (`mcp.allow_hosts`).
#[derive(Debug, Clone, Default)]
pub struct AllowList {
    /// Lower-case host names without a trailing dot; matched exactly.
    hosts: HashSet<String>,
    nets: Vec<IpNet>,
}

impl AllowList {
    /// Parses entries: a CIDR (`10.0.0.0/8`), an address (`127.0.0.1`,
    /// `::1`) or a host name (`mcp.internal`). Err names the bad entry.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut list = AllowList::default();
        for entry in entries {
            let entry = entry.trim();
            if entry.contains('/') {
                let net: IpNet = entry
                    .parse()
                    .map_err(|_| format!("{entry:?} is not a valid CIDR"))?;
                list.nets.push(net.trunc());
            } else if let Ok(ip) = entry.trim_matches(['[', ']']).parse::<IpAddr>() {
                list.nets.push(IpNet::from(ip));
            } else if valid_host_name(entry) {
                list.hosts.insert(normalize_host(entry));
            } else {
                return Err(format!("{entry:?} is not a host name, address or CIDR"));
            }
        }
        Ok(list)
    }

    pub fn allows_host(&self, host: &str) -> bool {
        self.hosts.contains(&normalize_host(host))
    }

    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.nets.iter().any(|net| net.contains(&ip))
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

fn valid_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
}

/// A URL that passed the guard, with the only addresses it may be reached at.
#[derive(Debug, Clone)]
pub struct CheckedUrl {
    pub url: Url,
    /// The host as written in the URL (for `resolve_to_addrs`).
    pub host: String,
    pub addrs: Vec<SocketAddr>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsrfError {
    /// Holds the URL for callers; the message does not show it (it may
    /// carry a secret).
    #[error("MCP server_url is not a valid http(s) URL")]
    BadUrl(String),
    #[error("MCP server_url must not carry credentials (user:password@); send them as headers or `authorization` instead")]
    Credentials,
    #[error("MCP server_url must use http or https, not {0:?}")]
    Scheme(String),
    #[error("MCP server_url host '{0}' could not be resolved")]
    Unresolved(String),
    #[error("MCP server_url host '{host}' resolves to {addr}, a {kind} address, which this gateway does not allow (the operator can allow it with mcp.allow_hosts)")]
    Forbidden {
        host: String,
        addr: IpAddr,
        kind: &'static str,
    },
}

/// Checks `url` for use as a request-declared MCP server.
pub async fn check_url(url: &str, allow: &AllowList) -> Result<CheckedUrl, SsrfError> {
    let parsed = Url::parse(url).map_err(|_| SsrfError::BadUrl(url.to_owned()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(SsrfError::Scheme(parsed.scheme().to_owned()));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(SsrfError::Credentials);
    }
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| SsrfError::BadUrl(url.to_owned()))?;
    let host = match parsed.host() {
        Some(url::Host::Domain(d)) => d.to_owned(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => return Err(SsrfError::BadUrl(url.to_owned())),
    };
    // Literal addresses need no DNS; names are resolved once, here.
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| SsrfError::Unresolved(host.clone()))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(SsrfError::Unresolved(host));
    }
    if !allow.allows_host(&host) {
        // Every address must pass: a name with one public and one private
        // address could otherwise be steered to the private one.
        for addr in &addrs {
            let ip = addr.ip();
            if allow.allows_ip(ip) {
                continue;
            }
            if let Some(kind) = forbidden_kind(ip) {
                return Err(SsrfError::Forbidden {
                    host: host.clone(),
                    addr: ip,
                    kind,
                });
            }
        }
    }
    Ok(CheckedUrl {
        url: parsed,
        host,
        addrs,
    })
}

/// IPv4 addresses carried inside IPv6 are judged as IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64
/// (`64:ff9b::a.b.c.d`) address: both reach that IPv4 host.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        let [.., a, b, c, d] = v6.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

/// Why `ip` may not be reached by a request, or `None` if it is public.
pub fn forbidden_kind(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, base: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(base)) & mask)
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    const RANGES: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "unspecified (\"this network\")"),
        ([127, 0, 0, 0], 8, "loopback"),
        ([10, 0, 0, 0], 8, "private"),
        ([172, 16, 0, 0], 12, "private"),
        ([192, 168, 0, 0], 16, "private"),
        ([169, 254, 0, 0], 16, "link-local (cloud metadata)"),
        ([100, 64, 0, 0], 10, "carrier-grade NAT"),
        ([192, 0, 0, 0], 24, "IETF protocol assignment"),
        ([192, 0, 2, 0], 24, "documentation"),
        ([198, 51, 100, 0], 24, "documentation"),
        ([203, 0, 113, 0], 24, "documentation"),
        ([198, 18, 0, 0], 15, "benchmarking"),
        ([224, 0, 0, 0], 4, "multicast"),
        ([240, 0, 0, 0], 4, "reserved or broadcast"),
    ];
    RANGES
        .iter()
        .find(|(base, prefix, _)| in_v4(ip, *base, *prefix))
        .map(|(_, _, kind)| *kind)
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    let first = ip.segments()[0];
    if first & 0xfe00 == 0xfc00 {
        return Some("private (unique local)");
    }
    if first & 0xffc0 == 0xfe80 {
        return Some("link-local");
    }
    if first & 0xffc0 == 0xfec0 {
        return Some("site-local");
    }
    if first & 0xff00 == 0xff00 {
        return Some("multicast");
    }
    // IPv4-compatible (`::a.b.c.d`, deprecated) also reaches IPv4 hosts.
    let s = ip.segments();
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        let [.., a, b, c, d] = ip.octets();
        return forbidden_v4(Ipv4Addr::new(a, b, c, d)).or(Some("IPv4-compatible"));
    }
    if first == 0x2001 && s[1] == 0x0db8 {
        return Some("documentation");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn credentials_are_refused_and_never_shown() {
        let allow = AllowList::parse(&["127.0.0.1".to_owned()]).expect("allow list");
        for url in [
            "http://user:hunter2@127.0.0.1:1/mcp",
            "http://hunter2@127.0.0.1:1/",
        ] {
            let err = check_url(url, &allow).await.expect_err(url);
            assert_eq!(err, SsrfError::Credentials);
            assert!(!err.to_string().contains("hunter2"));
        }
        let err = check_url("ht!tp://hunter2@x", &allow)
            .await
            .expect_err("bad");
        assert!(!err.to_string().contains("hunter2"));
    }

    fn kind(ip: &str) -> Option<&'static str> {
        forbidden_kind(ip.parse().expect("ip"))
    }

    #[test]
    fn private_and_special_ranges_are_forbidden() {
        for ip in [
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.0.1",
            "0.0.0.0",
            "100.64.0.1",
            "100.127.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "::127.0.0.1",
        ] {
            assert!(kind(ip).is_some(), "{ip} should be forbidden");
        }
        assert_eq!(kind("169.254.169.254"), Some("link-local (cloud metadata)"));
        assert_eq!(kind("::ffff:127.0.0.1"), Some("loopback"));
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(kind(ip), None, "{ip} should pass");
        }
    }

    fn allow(entries: &[&str]) -> AllowList {
        AllowList::parse(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .expect("allow list")
    }

    #[test]
    fn allow_list_matches_hosts_and_cidrs() {
        let list = allow(&[
            "127.0.0.1",
            "10.0.0.0/8",
            "LocalHost",
            "mcp.internal.",
            "::1",
        ]);
        assert!(list.allows_host("localhost"));
        assert!(list.allows_host("MCP.internal"));
        assert!(!list.allows_host("evil.internal"));
        assert!(list.allows_ip("127.0.0.1".parse().expect("ip")));
        assert!(!list.allows_ip("127.0.0.2".parse().expect("ip")));
        assert!(list.allows_ip("10.200.0.1".parse().expect("ip")));
        assert!(list.allows_ip("::ffff:10.0.0.1".parse().expect("ip")));
        assert!(list.allows_ip("::1".parse().expect("ip")));
        assert!(!list.allows_ip("192.168.0.1".parse().expect("ip")));
    }

    #[test]
    fn allow_list_rejects_garbage() {
        assert!(AllowList::parse(&["10.0.0.0/40".into()]).is_err());
        assert!(AllowList::parse(&["http://x".into()]).is_err());
        assert!(AllowList::parse(&["".into()]).is_err());
    }

    #[tokio::test]
    async fn loopback_url_refused_without_allowlist() {
        let err = check_url("http://127.0.0.1:8091/mcp", &AllowList::default())
            .await
            .expect_err("refused");
        assert!(matches!(
            err,
            SsrfError::Forbidden {
                kind: "loopback",
                ..
            }
        ));
        assert!(err.to_string().contains("127.0.0.1"));

        let err = check_url("http://[::1]:80/mcp", &AllowList::default())
            .await
            .expect_err("refused");
        assert!(matches!(err, SsrfError::Forbidden { .. }));

        let err = check_url("http://169.254.169.254/latest", &AllowList::default())
            .await
            .expect_err("refused");
        assert!(err.to_string().contains("metadata"), "{err}");
    }

    #[tokio::test]
    async fn localhost_name_resolves_and_is_refused() {
        let err = check_url("http://localhost:9/mcp", &AllowList::default())
            .await
            .expect_err("refused");
        assert!(matches!(err, SsrfError::Forbidden { .. }), "{err}");
    }

    #[tokio::test]
    async fn allowlisted_address_or_host_passes() {
        let checked = check_url("http://127.0.0.1:8091/mcp", &allow(&["127.0.0.0/8"]))
            .await
            .expect("allowed");
        assert_eq!(checked.addrs, vec!["127.0.0.1:8091".parse().expect("addr")]);
        assert_eq!(checked.host, "127.0.0.1");

        let checked = check_url("http://localhost:8091/mcp", &allow(&["localhost"]))
            .await
            .expect("allowed by name");
        assert!(checked.addrs.iter().all(|a| a.port() == 8091));
    }

    #[tokio::test]
    async fn only_http_schemes() {
        let err = check_url("file:///etc/passwd", &AllowList::default())
            .await
            .expect_err("refused");
        assert_eq!(err, SsrfError::Scheme("file".into()));
        assert!(matches!(
            check_url("not a url", &AllowList::default()).await,
            Err(SsrfError::BadUrl(_))
        ));
    }
}
