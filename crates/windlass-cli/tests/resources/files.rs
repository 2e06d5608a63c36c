//! `/v1/files` over HTTP on SQLite and Postgres: upload, list and paging,
//! retrieve, content, delete; bad uploads; the browser rule for multipart;
//! tenants and scopes.

use serde_json::Value;

use crate::support::{config, databases, multipart, Part, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_are_uploaded_listed_read_and_deleted() {
    for db in databases().await {
        let server = Server::start(&db, None).await;
        let me = server.me();
        let a = me.upload_file("a.txt", b"alpha").await;
        let (status, b) = me
            .upload(
                "/v1/files",
                &[
                    Part::text("purpose", "user_data"),
                    Part::file("file", "b.md", b"# beta"),
                ],
            )
            .await;
        assert_eq!(status, 200, "{b}");
        assert_eq!(b["object"], "file");
        assert_eq!(b["purpose"], "user_data");
        assert_eq!(b["bytes"], 6);
        assert_eq!(b["filename"], "b.md");
        let b = b["id"].as_str().unwrap().to_owned();
        assert!(b.starts_with("file-"), "{b}");
        let c = me.upload_file("c.json", br#"{"k": 1}"#).await;

        let (_, all) = me.get("/v1/files").await;
        let ids: Vec<&str> = ids(&all);
        assert_eq!(ids, [c.as_str(), b.as_str(), a.as_str()], "newest first");
        let (_, user) = me.get("/v1/files?purpose=user_data").await;
        assert_eq!(ids_of(&user), vec![b.as_str()]);
        let (_, first) = me.get("/v1/files?order=asc&limit=1").await;
        assert_eq!(
            (ids_of(&first), &first["has_more"]),
            (vec![a.clone()], &Value::Bool(true))
        );
        let (_, next) = me
            .get(&format!("/v1/files?order=asc&limit=1&after={a}"))
            .await;
        assert_eq!(ids_of(&next), vec![b.as_str()]);
        let (status, bad) = me.get("/v1/files?after=file-nope").await;
        assert_eq!(
            (status, &bad["error"]["param"]),
            (400, &Value::from("after"))
        );
        let (status, _) = me.get("/v1/files?limit=0").await;
        assert_eq!(status, 400);

        let (status, got) = me.get(&format!("/v1/files/{a}")).await;
        assert_eq!((status, got["filename"].as_str()), (200, Some("a.txt")));
        let (status, bytes) = me.get_bytes(&format!("/v1/files/{a}/content")).await;
        assert_eq!((status, bytes.as_slice()), (200, &b"alpha"[..]));

        let (status, gone) = me.delete(&format!("/v1/files/{a}")).await;
        assert_eq!(status, 200, "{gone}");
        assert_eq!(gone["deleted"], true);
        for path in [format!("/v1/files/{a}"), format!("/v1/files/{a}/content")] {
            let (status, err) = me.get(&path).await;
            assert_eq!(status, 404, "{path}: {err}");
            assert_eq!(err["error"]["type"], "invalid_request_error");
        }
        let (status, _) = me.delete(&format!("/v1/files/{a}")).await;
        assert_eq!(status, 404);
    }
}

fn ids(list: &Value) -> Vec<&str> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|f| f["id"].as_str().expect("id"))
        .collect()
}

fn ids_of(list: &Value) -> Vec<String> {
    ids(list).into_iter().map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_uploads_are_refused_and_store_nothing() {
    let cfg = config("[files]\nmax_bytes = 1000\n[upstream]\nurl = \"http://127.0.0.1:1/v1\"\n");
    for db in databases().await {
        let server = Server::start(&db, Some(&cfg)).await;
        let me = server.me();
        let big = vec![b'x'; 2000];
        let cases: Vec<(Vec<Part>, u16, &str)> = vec![
            (
                vec![
                    Part::text("purpose", "assistants"),
                    Part::file("file", "big.txt", &big),
                ],
                413,
                "file_too_large",
            ),
            (
                vec![Part::file("file", "a.txt", b"a")],
                400,
                "missing_required_parameter",
            ),
            (
                vec![
                    Part::text("purpose", "vacation"),
                    Part::file("file", "a.txt", b"a"),
                ],
                400,
                "invalid_value",
            ),
            (
                vec![Part::text("purpose", "assistants")],
                400,
                "missing_required_parameter",
            ),
            (
                vec![
                    Part::text("purpose", "assistants"),
                    Part::text("colour", "red"),
                ],
                400,
                "unknown_parameter",
            ),
        ];
        for (fields, want, code) in cases {
            let (status, err) = me.upload("/v1/files", &fields).await;
            assert_eq!(
                (status, err["error"]["code"].as_str()),
                (want, Some(code)),
                "{err}"
            );
        }
        // A body cut before its closing boundary, and one with no boundary.
        let (boundary, body) = multipart(&[Part::text("purpose", "assistants")]);
        let cut = body[..body.len() - 10].to_vec();
        for (content_type, body) in [
            (format!("multipart/form-data; boundary={boundary}"), cut),
            ("multipart/form-data".to_owned(), b"garbage".to_vec()),
        ] {
            let resp = server
                .client
                .post(server.url("/v1/files"))
                .bearer_auth("x")
                .header("content-type", content_type)
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), 400);
            let err: Value = resp.json().await.unwrap();
            assert_eq!(err["error"]["code"], "invalid_multipart", "{err}");
        }
        // JSON is not an upload.
        let (status, err) = me
            .post("/v1/files", &serde_json::json!({"purpose": "assistants"}))
            .await;
        assert_eq!(status, 400, "{err}");
        // Nothing was stored; the server still serves.
        let (status, list) = me.get("/v1/files").await;
        assert_eq!(status, 200);
        assert_eq!(list["data"], serde_json::json!([]));
        assert!(me
            .upload_file("ok.txt", &big[..900])
            .await
            .starts_with("file-"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_cannot_upload_to_a_keyless_local_gateway() {
    let db = databases().await.remove(0);
    let server = Server::start(&db, None).await;
    let (boundary, body) = multipart(&[
        Part::text("purpose", "assistants"),
        Part::file("file", "x.txt", b"planted"),
    ]);
    let form = format!("multipart/form-data; boundary={boundary}");
    // What a cross-site HTML form post sends: no Authorization.
    let browser = |origin: Option<&str>, auth: bool| {
        let mut req = server
            .client
            .post(server.url("/v1/files"))
            .header("content-type", &form)
            .header("sec-fetch-site", "cross-site")
            .header("sec-fetch-mode", "navigate")
            .body(body.clone());
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        if auth {
            req = req.bearer_auth("anything");
        }
        req
    };
    for (origin, auth) in [
        (Some("https://evil.example"), false),
        (None, false),
        (Some("https://evil.example"), true),
        (Some("null"), false),
    ] {
        let resp = browser(origin, auth).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 403, "{origin:?} {auth}");
        let err: Value = resp.json().await.unwrap();
        assert_eq!(err["error"]["code"], "upload_refused");
    }
    // The same bytes as text/plain (another preflight-free type): refused.
    let resp = server
        .client
        .post(server.url("/v1/files"))
        .header("content-type", "text/plain")
        .header("origin", "https://evil.example")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 415);
    let (_, list) = server.me().get("/v1/files").await;
    assert_eq!(list["data"], serde_json::json!([]), "nothing was stored");
    // A CORS preflight from that page is not answered with permission.
    let pre = server
        .client
        .request(reqwest::Method::OPTIONS, server.url("/v1/files"))
        .header("origin", "https://evil.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization")
        .send()
        .await
        .unwrap();
    assert!(pre.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tenants_file_is_an_unknown_id_and_scopes_hold() {
    let cfg = config(
        "[upstream]\nurl = \"http://127.0.0.1:1/v1\"\n\
         [[server.keys]]\nname = \"alice\"\nkey = \"sk-alice\"\ntenant = \"acme\"\n\
         [[server.keys]]\nname = \"bob\"\nkey = \"sk-bob\"\ntenant = \"globex\"\n\
         [[server.keys]]\nname = \"reader\"\nkey = \"sk-reader\"\ntenant = \"acme\"\nscopes = [\"files:read\"]\n\
         [[server.keys]]\nname = \"chat\"\nkey = \"sk-chat\"\ntenant = \"acme\"\nscopes = [\"responses:read\", \"responses:write\"]\n",
    );
    for db in databases().await {
        let server = Server::start(&db, Some(&cfg)).await;
        let (alice, bob) = (server.as_key("sk-alice"), server.as_key("sk-bob"));
        let id = alice.upload_file("secret.txt", b"acme plans").await;
        let unknown = "file-0123456789abcdef0123456789abcdef0123456789abcdef";
        for (path_of, delete) in [
            ("/v1/files/{}", false),
            ("/v1/files/{}/content", false),
            ("/v1/files/{}", true),
        ] {
            let theirs = path_of.replace("{}", &id);
            let nobody = path_of.replace("{}", unknown);
            let ((s1, b1), (s2, b2)) = match delete {
                false => (bob.get(&theirs).await, bob.get(&nobody).await),
                true => (bob.delete(&theirs).await, bob.delete(&nobody).await),
            };
            assert_eq!(s1, 404, "{theirs}: {b1}");
            assert_eq!(s1, s2);
            let strip = |v: &Value, id: &str| v.to_string().replace(id, "ID");
            assert_eq!(strip(&b1, &id), strip(&b2, unknown));
        }
        let (_, list) = bob.get("/v1/files").await;
        assert_eq!(list["data"], serde_json::json!([]));
        // Alice still has it (bob's delete changed nothing).
        let (status, _) = alice.get(&format!("/v1/files/{id}/content")).await;
        assert_eq!(status, 200);
        // files:read lists but cannot upload or delete; responses-only keys
        // cannot touch files.
        let reader = server.as_key("sk-reader");
        let (status, list) = reader.get("/v1/files").await;
        assert_eq!(
            (status, list["data"].as_array().map(Vec::len)),
            (200, Some(1))
        );
        let (status, err) = reader
            .upload(
                "/v1/files",
                &[
                    Part::text("purpose", "assistants"),
                    Part::file("file", "x", b"x"),
                ],
            )
            .await;
        assert_eq!(
            (status, err["error"]["code"].as_str()),
            (403, Some("insufficient_permissions"))
        );
        let (status, _) = reader.delete(&format!("/v1/files/{id}")).await;
        assert_eq!(status, 403);
        let (status, _) = server.as_key("sk-chat").get("/v1/files").await;
        assert_eq!(status, 403);
        let (status, _) = server.as_key("sk-wrong").get("/v1/files").await;
        assert_eq!(status, 401);
    }
}
