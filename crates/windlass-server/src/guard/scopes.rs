//! What a key may do: a small set of scopes, each route needing one.
//!
//! - `responses:write`: create responses (`POST /v1/responses`, also the
//!   WebSocket upgrade on `GET /v1/responses`), delete and cancel them;
//!   also Anthropic's Messages API (`POST /v1/messages` and
//!   `/v1/messages/count_tokens`), which creates responses too;
//! - `responses:read`: retrieve responses and list their input items;
//! - `traces:read`: execution traces (`GET /v1/responses/{id}/trace`), which
//!   show tool arguments and policy decisions, hence their own scope;
//! - `models:read`: `GET /v1/models` and `GET /v1/mcp/servers`;
//! - `files:read`: read uploaded files, vector stores (search included) and
//!   containers (`GET` on `/v1/files`, `/v1/vector_stores`, `/v1/containers`,
//!   and `POST /v1/vector_stores/{id}/search`);
//! - `files:write`: upload, change and delete them.
//!
//! A key without `scopes` has all of them. Routes not listed here need
//! `responses:read` to read (GET) and `responses:write` for anything else.

use std::fmt;

use axum::http::Method;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    ResponsesRead,
    ResponsesWrite,
    TracesRead,
    ModelsRead,
    FilesRead,
    FilesWrite,
}

impl Scope {
    pub const ALL: [Scope; 6] = [
        Scope::ResponsesRead,
        Scope::ResponsesWrite,
        Scope::TracesRead,
        Scope::ModelsRead,
        Scope::FilesRead,
        Scope::FilesWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ResponsesRead => "responses:read",
            Scope::ResponsesWrite => "responses:write",
            Scope::TracesRead => "traces:read",
            Scope::ModelsRead => "models:read",
            Scope::FilesRead => "files:read",
            Scope::FilesWrite => "files:write",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|k| k.as_str() == s.trim())
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Scopes(u8);

impl Scopes {
    pub fn all() -> Scopes {
        Scopes::of(Scope::ALL)
    }

    pub fn of(scopes: impl IntoIterator<Item = Scope>) -> Scopes {
        Scopes(scopes.into_iter().fold(0, |acc, s| acc | s.bit()))
    }

    pub fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// The scopes named in a config list; the first unknown name otherwise.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a String>) -> Result<Scopes, String> {
        names
            .into_iter()
            .map(|n| Scope::parse(n).ok_or_else(|| n.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map(Scopes::of)
    }
}

impl Default for Scopes {
    fn default() -> Self {
        Scopes::all()
    }
}

impl fmt::Debug for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = Scope::ALL.into_iter().filter(|s| self.contains(*s));
        f.debug_list().entries(names.map(Scope::as_str)).finish()
    }
}

/// The scope a request needs.
pub fn required(method: &Method, path: &str) -> Scope {
    let read = *method == Method::GET || *method == Method::HEAD;
    if path == "/v1/models" || path.starts_with("/v1/mcp/") {
        return Scope::ModelsRead;
    }
    if is_resource(path) {
        let search = *method == Method::POST && path.ends_with("/search");
        return if read || search {
            Scope::FilesRead
        } else {
            Scope::FilesWrite
        };
    }
    if path.starts_with("/v1/responses/") && path.ends_with("/trace") {
        return Scope::TracesRead;
    }
    // `GET /v1/responses` is the WebSocket mode's upgrade: it creates.
    if path == "/v1/responses" || !read {
        return Scope::ResponsesWrite;
    }
    Scope::ResponsesRead
}

/// Files, vector stores and containers (`files:*`).
fn is_resource(path: &str) -> bool {
    ["/v1/files", "/v1/vector_stores", "/v1/containers"]
        .iter()
        .any(|root| {
            path.strip_prefix(root)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_need_their_scope() {
        let need = |m: Method, p: &str| required(&m, p);
        assert_eq!(need(Method::POST, "/v1/responses"), Scope::ResponsesWrite);
        assert_eq!(need(Method::GET, "/v1/responses"), Scope::ResponsesWrite);
        assert_eq!(need(Method::GET, "/v1/responses/r"), Scope::ResponsesRead);
        assert_eq!(
            need(Method::GET, "/v1/responses/r/input_items"),
            Scope::ResponsesRead
        );
        assert_eq!(
            need(Method::DELETE, "/v1/responses/r"),
            Scope::ResponsesWrite
        );
        assert_eq!(
            need(Method::POST, "/v1/responses/r/cancel"),
            Scope::ResponsesWrite
        );
        assert_eq!(
            need(Method::GET, "/v1/responses/r/trace"),
            Scope::TracesRead
        );
        assert_eq!(need(Method::GET, "/v1/models"), Scope::ModelsRead);
        assert_eq!(need(Method::GET, "/v1/mcp/servers"), Scope::ModelsRead);
        assert_eq!(need(Method::POST, "/v1/other"), Scope::ResponsesWrite);
        assert_eq!(need(Method::POST, "/v1/messages"), Scope::ResponsesWrite);
        assert_eq!(
            need(Method::POST, "/v1/messages/count_tokens"),
            Scope::ResponsesWrite
        );
        assert_eq!(need(Method::GET, "/v1/files"), Scope::FilesRead);
        assert_eq!(need(Method::GET, "/v1/files/f/content"), Scope::FilesRead);
        assert_eq!(need(Method::POST, "/v1/files"), Scope::FilesWrite);
        assert_eq!(need(Method::DELETE, "/v1/files/f"), Scope::FilesWrite);
        assert_eq!(
            need(Method::POST, "/v1/vector_stores/vs_1/search"),
            Scope::FilesRead
        );
        assert_eq!(
            need(Method::POST, "/v1/vector_stores/vs_1/files"),
            Scope::FilesWrite
        );
        assert_eq!(need(Method::GET, "/v1/containers/c"), Scope::FilesRead);
        assert_eq!(need(Method::POST, "/v1/containers"), Scope::FilesWrite);
        assert_eq!(need(Method::GET, "/v1/filesystem"), Scope::ResponsesRead);
        assert_eq!(need(Method::POST, "/v1/embeddings"), Scope::ResponsesWrite);
    }

    #[test]
    fn parse_and_contain() {
        let names = ["responses:read".to_owned(), " traces:read".to_owned()];
        let s = Scopes::parse(&names).unwrap();
        assert!(s.contains(Scope::ResponsesRead) && s.contains(Scope::TracesRead));
        assert!(!s.contains(Scope::ResponsesWrite));
        assert_eq!(
            Scopes::parse(&["admin".to_owned()]),
            Err("admin".to_owned())
        );
        assert!(Scope::ALL.iter().all(|x| Scopes::all().contains(*x)));
        assert_eq!(format!("{s:?}"), r#"["responses:read", "traces:read"]"#);
    }
}
