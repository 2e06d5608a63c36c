//! A real `windlass serve` with the resource routes, on SQLite or on
//! Postgres (a fresh schema of `WINDLASS_TEST_PG`), and the HTTP helpers
//! the resource tests share: multipart bodies written by hand (so broken
//! ones can be sent too), polling a vector store file to its end state.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use windlass_testkit::http::{read, send};

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn unique(tag: &str) -> String {
    format!(
        "{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// The databases every test runs on: a fresh SQLite file, and a fresh
/// Postgres schema when `WINDLASS_TEST_PG` is set (`scripts/postgres.sh`).
pub(crate) async fn databases() -> Vec<String> {
    let file = std::env::temp_dir().join(format!("{}.db", unique("windlass-res")));
    let mut dbs = vec![file.to_string_lossy().into_owned()];
    if let Some(pg) = pg_schema_url().await {
        dbs.push(pg);
    }
    dbs
}

/// A fresh schema as a database URL; `None` when `WINDLASS_TEST_PG` is unset.
pub(crate) async fn pg_schema_url() -> Option<String> {
    let base = std::env::var("WINDLASS_TEST_PG").ok()?;
    let schema = unique("res").replace('-', "_");
    let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
        .await
        .expect("connect to WINDLASS_TEST_PG");
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .expect("create schema");
    drop(client);
    let _ = driver.await;
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}options=-csearch_path%3D{schema}"))
}

/// The machine's load average (1, 5, 15 minutes), printed beside the
/// measurements' figures.
pub(crate) fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A config file in a fresh directory.
pub(crate) fn config(toml: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique("windlass-res-cfg"));
    std::fs::create_dir_all(&dir).expect("config dir");
    let path = dir.join("windlass.toml");
    std::fs::write(&path, toml).expect("write config");
    path
}

/// One `windlass serve` process; killed (SIGKILL) on drop.
pub(crate) struct Server {
    child: Child,
    pub base: String,
    pub client: reqwest::Client,
    /// Sent as `Authorization: Bearer` (uploads need one even without keys).
    pub key: String,
}

impl Server {
    /// Starts on a free port and waits until `/health` answers.
    pub(crate) async fn start(db: &str, config: Option<&Path>) -> Server {
        let port = crate::ports::free_port();
        windlass_providers::install_crypto_provider();
        // Built before the child exists, so nothing below can leak it.
        let client = reqwest::Client::new();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_windlass"));
        cmd.args(["serve", "--db", db])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .env_remove("WINDLASS_API_KEYS")
            .env_remove("WINDLASS_CONFIG")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        match config {
            Some(c) => cmd.arg("--config").arg(c),
            None => cmd.args(["--upstream", "http://127.0.0.1:1/v1"]),
        };
        let child = cmd.spawn().expect("start windlass");
        let mut server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            client,
            key: "sk-none".to_owned(),
        };
        for _ in 0..400 {
            if let Ok(r) = server.client.get(server.url("/health")).send().await {
                if r.status().is_success() {
                    return server;
                }
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("windlass exited at start: {status}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = server.child.kill();
        panic!("windlass did not start");
    }

    /// Requests with the server's default key.
    pub(crate) fn me(&self) -> As<'_> {
        self.as_key(&self.key)
    }

    /// The same server, acting with another key.
    pub(crate) fn as_key(&self, key: &str) -> As<'_> {
        As {
            server: self,
            key: key.to_owned(),
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no drain, nothing finished.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits for the process to exit.
    pub(crate) async fn terminate(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        for _ in 0..600 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("windlass did not exit after SIGTERM");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Requests with one key.
pub(crate) struct As<'a> {
    server: &'a Server,
    key: String,
}

impl As<'_> {
    fn auth(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        req.bearer_auth(&self.key)
    }

    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        send(self.auth(self.server.client.get(self.server.url(path)))).await
    }

    pub(crate) async fn get_bytes(&self, path: &str) -> (u16, Vec<u8>) {
        let resp = self
            .auth(self.server.client.get(self.server.url(path)))
            .send()
            .await
            .expect("request");
        let status = resp.status().as_u16();
        (status, resp.bytes().await.expect("body").to_vec())
    }

    pub(crate) async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        send(self.auth(self.server.client.post(self.server.url(path)).json(body))).await
    }

    pub(crate) async fn delete(&self, path: &str) -> (u16, Value) {
        send(self.auth(self.server.client.delete(self.server.url(path)))).await
    }

    /// A multipart upload of `fields` (`(name, filename, bytes)`).
    pub(crate) async fn upload(&self, path: &str, fields: &[Part<'_>]) -> (u16, Value) {
        let (boundary, body) = multipart(fields);
        let req = self
            .server
            .client
            .post(self.server.url(path))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body);
        read(self.auth(req).send().await.expect("request")).await
    }

    /// `POST /v1/files` with `purpose` and one file; the file's id.
    pub(crate) async fn upload_file(&self, name: &str, bytes: &[u8]) -> String {
        let (status, file) = self
            .upload(
                "/v1/files",
                &[
                    Part::text("purpose", "assistants"),
                    Part::file("file", name, bytes),
                ],
            )
            .await;
        assert_eq!(status, 200, "{file}");
        file["id"].as_str().expect("file id").to_owned()
    }

    /// Polls a vector store file until it leaves `in_progress`.
    pub(crate) async fn settled(&self, store: &str, file: &str) -> Value {
        for _ in 0..600 {
            let (status, f) = self
                .get(&format!("/v1/vector_stores/{store}/files/{file}"))
                .await;
            assert_eq!(status, 200, "{f}");
            if f["status"] != "in_progress" {
                return f;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("file {file} still in_progress");
    }
}

/// One form field: text, or a file with its name.
pub(crate) struct Part<'a> {
    pub name: &'a str,
    pub filename: Option<&'a str>,
    pub bytes: &'a [u8],
}

impl<'a> Part<'a> {
    pub(crate) fn text(name: &'a str, value: &'a str) -> Part<'a> {
        Part {
            name,
            filename: None,
            bytes: value.as_bytes(),
        }
    }

    pub(crate) fn file(name: &'a str, filename: &'a str, bytes: &'a [u8]) -> Part<'a> {
        Part {
            name,
            filename: Some(filename),
            bytes,
        }
    }
}

/// A `multipart/form-data` body as a browser or an SDK writes it.
pub(crate) fn multipart(fields: &[Part<'_>]) -> (String, Vec<u8>) {
    let boundary = "windlass-test-boundary-7f3a".to_owned();
    let mut body = Vec::new();
    for f in fields {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let disposition = match f.filename {
            Some(n) => format!("form-data; name=\"{}\"; filename=\"{n}\"", f.name),
            None => format!("form-data; name=\"{}\"", f.name),
        };
        body.extend_from_slice(format!("Content-Disposition: {disposition}\r\n").as_bytes());
        if f.filename.is_some() {
            body.extend_from_slice(b"Content-Type: application/octet-stream\r\n");
        }
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(f.bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (boundary, body)
}
