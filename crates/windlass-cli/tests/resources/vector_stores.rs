//! `/v1/vector_stores` over HTTP on SQLite and Postgres, keyword-only (no
//! embedding model configured): create with files, background ingestion,
//! search with filters, attributes, batches, chunk content, deletes; files
//! that cannot be read end `failed` with `last_error`; unknown and other
//! tenants' ids.

use serde_json::{json, Value};

use crate::support::{config, databases, As, Server};

const NOTES: &str = "Office notes.\nThe office cat is named Biscuit and sleeps by the radiator.\n";
const POLICY: &str = "# Refund policy\n\nRefunds are paid within 30 days of the request.\n";
const PAGE: &str = "<html><head><script>var hidden = 1;</script></head><body><h1>Sales</h1><p>The sales team meets on Tuesdays.</p></body></html>";
const CODE: &str = "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)\n";

async fn search(me: &As<'_>, store: &str, body: Value) -> (u16, Value) {
    me.post(&format!("/v1/vector_stores/{store}/search"), &body)
        .await
}

fn hit_files(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|h| h["filename"].as_str().expect("filename").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vector_store_ingests_searches_and_forgets_its_files() {
    for db in databases().await {
        let server = Server::start(&db, None).await;
        let me = server.me();
        let notes = me.upload_file("notes.txt", NOTES.as_bytes()).await;
        let policy = me.upload_file("policy.md", POLICY.as_bytes()).await;
        let page = me.upload_file("team.html", PAGE.as_bytes()).await;
        let code = me.upload_file("fib.py", CODE.as_bytes()).await;

        let (status, store) = me
            .post(
                "/v1/vector_stores",
                &json!({"name": "kb", "file_ids": [notes, policy], "metadata": {"owner": "ops"}}),
            )
            .await;
        assert_eq!(status, 200, "{store}");
        assert_eq!(store["object"], "vector_store");
        assert_eq!(store["search_mode"], "keyword");
        assert_eq!(store["file_counts"]["total"], 2);
        let vs = store["id"].as_str().unwrap().to_owned();
        assert!(vs.starts_with("vs_"));
        for f in [&notes, &policy] {
            assert_eq!(me.settled(&vs, f).await["status"], "completed");
        }
        let (status, attached) = me
            .post(
                &format!("/v1/vector_stores/{vs}/files"),
                &json!({"file_id": page, "attributes": {"team": "sales", "year": 2024}}),
            )
            .await;
        assert_eq!(status, 200, "{attached}");
        assert_eq!(attached["object"], "vector_store.file");
        let static_chunks = json!({"type": "static", "static": {"max_chunk_size_tokens": 100, "chunk_overlap_tokens": 20}});
        let (status, attached) = me
            .post(
                &format!("/v1/vector_stores/{vs}/files"),
                &json!({"file_id": code, "chunking_strategy": static_chunks}),
            )
            .await;
        assert_eq!(status, 200, "{attached}");
        assert_eq!(attached["chunking_strategy"], static_chunks);
        for f in [&page, &code] {
            assert_eq!(me.settled(&vs, f).await["status"], "completed");
        }
        let (_, store) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(store["status"], "completed");
        assert_eq!(store["file_counts"]["completed"], 4);
        assert!(store["usage_bytes"].as_u64().unwrap() > 0, "{store}");

        // Natural-language queries; punctuation is never syntax.
        let (status, found) = search(&me, &vs, json!({"query": "What's the cat called?"})).await;
        assert_eq!(status, 200, "{found}");
        assert_eq!(found["object"], "vector_store.search_results.page");
        assert_eq!(found["search_query"], json!(["What's the cat called?"]));
        assert_eq!(hit_files(&found)[0], "notes.txt");
        assert!(found["data"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Biscuit"));
        let (_, found) = search(
            &me,
            &vs,
            json!({"query": ["refunds", "\"C++\" AND NEAR( *"]}),
        )
        .await;
        assert_eq!(hit_files(&found)[0], "policy.md");
        // HTML reduced to text: the script is not indexed.
        let (_, found) = search(&me, &vs, json!({"query": "hidden var"})).await;
        assert!(
            !hit_files(&found).contains(&"team.html".to_owned()),
            "{found}"
        );
        // Filters on attributes, result counts, bounds.
        let filter = json!({"type": "eq", "key": "team", "value": "sales"});
        let (_, found) = search(
            &me,
            &vs,
            json!({"query": "team meets sales cat refunds", "filters": filter}),
        )
        .await;
        assert_eq!(hit_files(&found), ["team.html"]);
        let (_, found) = search(
            &me,
            &vs,
            json!({"query": "the", "max_num_results": 1, "rewrite_query": false}),
        )
        .await;
        assert!(hit_files(&found).len() <= 1);
        assert_eq!(found["search_query"], json!(["the"]), "{found}");
        // No model rewrites queries: asking for it is refused, not ignored.
        let (status, err) = search(&me, &vs, json!({"query": "cat", "rewrite_query": true})).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["param"], "rewrite_query");
        assert_eq!(err["error"]["code"], "unsupported_parameter");
        for bad in [
            json!({"query": "x", "max_num_results": 0}),
            json!({"query": "x", "ranking_options": {"score_threshold": 1.5}}),
            json!({"query": ""}),
        ] {
            let (status, err) = search(&me, &vs, bad.clone()).await;
            assert_eq!(status, 400, "{bad}: {err}");
        }

        // Lists by status, attribute updates, chunks.
        let (_, done) = me
            .get(&format!("/v1/vector_stores/{vs}/files?filter=completed"))
            .await;
        assert_eq!(done["data"].as_array().unwrap().len(), 4);
        let (_, failed) = me
            .get(&format!("/v1/vector_stores/{vs}/files?filter=failed"))
            .await;
        assert_eq!(failed["data"], json!([]));
        let (status, _) = me
            .get(&format!("/v1/vector_stores/{vs}/files?filter=sideways"))
            .await;
        assert_eq!(status, 400);
        let (status, updated) = me
            .post(
                &format!("/v1/vector_stores/{vs}/files/{notes}"),
                &json!({"attributes": {"team": "office"}}),
            )
            .await;
        assert_eq!(
            (status, &updated["attributes"]),
            (200, &json!({"team": "office"}))
        );
        let (status, chunks) = me
            .get(&format!("/v1/vector_stores/{vs}/files/{code}/content"))
            .await;
        assert_eq!(status, 200, "{chunks}");
        assert_eq!(chunks["object"], "vector_store.file_content.page");
        assert!(chunks["data"][0]["text"]
            .as_str()
            .unwrap()
            .contains("fibonacci"));

        // Modify and list stores.
        let (status, changed) = me
            .post(
                &format!("/v1/vector_stores/{vs}"),
                &json!({"name": "kb2", "expires_after": {"anchor": "last_active_at", "days": 7}}),
            )
            .await;
        assert_eq!(status, 200, "{changed}");
        assert_eq!(
            (
                changed["name"].as_str(),
                changed["expires_after"]["days"].as_u64()
            ),
            (Some("kb2"), Some(7))
        );
        assert!(changed["expires_at"].as_u64().is_some());
        let (_, stores) = me.get("/v1/vector_stores").await;
        assert_eq!(stores["data"][0]["id"], vs.as_str());

        // Detach one file; delete another through the Files API: both stop
        // being found.
        let (status, gone) = me
            .delete(&format!("/v1/vector_stores/{vs}/files/{policy}"))
            .await;
        assert_eq!(
            (status, gone["object"].as_str()),
            (200, Some("vector_store.file.deleted"))
        );
        let (status, _) = me
            .get(&format!("/v1/vector_stores/{vs}/files/{policy}"))
            .await;
        assert_eq!(status, 404);
        let (status, _) = me.delete(&format!("/v1/files/{notes}")).await;
        assert_eq!(status, 200);
        let (_, found) = search(&me, &vs, json!({"query": "cat Biscuit refunds"})).await;
        assert!(
            hit_files(&found)
                .iter()
                .all(|f| f != "notes.txt" && f != "policy.md"),
            "{found}"
        );
        let (_, store) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(store["file_counts"]["total"], 2);

        let (status, gone) = me.delete(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(
            (status, gone["object"].as_str()),
            (200, Some("vector_store.deleted"))
        );
        let (status, _) = search(&me, &vs, json!({"query": "sales"})).await;
        assert_eq!(status, 404);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_files_end_failed_with_last_error_and_the_server_keeps_serving() {
    for db in databases().await {
        let server = Server::start(&db, None).await;
        let me = server.me();
        let image = me.upload_file("photo.bmp", &[0x42, 0x4d, 0, 1, 2, 3]).await;
        let pdf = me
            .upload_file(
                "broken.pdf",
                b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage",
            )
            .await;
        let latin1 = me
            .upload_file("old.txt", &[0x63, 0x61, 0x66, 0xe9, 0xff, 0xfe])
            .await;
        let (status, store) = me
            .post(
                "/v1/vector_stores",
                &json!({"file_ids": [image, pdf, latin1]}),
            )
            .await;
        assert_eq!(status, 200, "{store}");
        let vs = store["id"].as_str().unwrap();
        for (file, code) in [
            (&image, "unsupported_file"),
            (&pdf, "invalid_file"),
            (&latin1, "invalid_file"),
        ] {
            let f = me.settled(vs, file).await;
            assert_eq!(f["status"], "failed", "{f}");
            assert_eq!(f["last_error"]["code"], code, "{f}");
            assert!(!f["last_error"]["message"].as_str().unwrap().is_empty());
            let (_, chunks) = me
                .get(&format!("/v1/vector_stores/{vs}/files/{file}/content"))
                .await;
            assert_eq!(chunks["data"], json!([]), "nothing half-indexed");
        }
        let (_, store) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(store["file_counts"]["failed"], 3);
        let (status, _) = me.get("/health").await;
        assert_eq!(status, 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_batches_attach_list_and_cancel() {
    for db in databases().await {
        let server = Server::start(&db, None).await;
        let me = server.me();
        let files = [
            me.upload_file("a.txt", b"apples are red").await,
            me.upload_file("b.txt", b"bananas are yellow").await,
            me.upload_file("c.txt", b"cherries are dark").await,
        ];
        let (_, store) = me
            .post("/v1/vector_stores", &json!({"name": "fruit"}))
            .await;
        let vs = store["id"].as_str().unwrap();
        let (status, batch) = me
            .post(
                &format!("/v1/vector_stores/{vs}/file_batches"),
                &json!({"file_ids": files, "attributes": {"kind": "fruit"}}),
            )
            .await;
        assert_eq!(status, 200, "{batch}");
        assert_eq!(batch["object"], "vector_store.files_batch");
        assert_eq!(batch["file_counts"]["total"], 3);
        let id = batch["id"].as_str().unwrap();
        assert!(id.starts_with("vsfb_"));
        for f in &files {
            me.settled(vs, f).await;
        }
        let (_, batch) = me
            .get(&format!("/v1/vector_stores/{vs}/file_batches/{id}"))
            .await;
        assert_eq!(
            (
                batch["status"].as_str(),
                batch["file_counts"]["completed"].as_u64()
            ),
            (Some("completed"), Some(3))
        );
        let (_, listed) = me
            .get(&format!(
                "/v1/vector_stores/{vs}/file_batches/{id}/files?order=asc"
            ))
            .await;
        assert_eq!(listed["data"].as_array().unwrap().len(), 3);
        assert_eq!(listed["data"][0]["attributes"], json!({"kind": "fruit"}));
        let (status, cancelled) = me
            .post(
                &format!("/v1/vector_stores/{vs}/file_batches/{id}/cancel"),
                &json!({}),
            )
            .await;
        assert_eq!(status, 200, "{cancelled}");
        assert_eq!(
            cancelled["file_counts"]["completed"], 3,
            "completed files stay"
        );
        // Bad batches change nothing.
        for bad in [
            json!({}),
            json!({"file_ids": []}),
            json!({"file_ids": ["file-nope"]}),
            json!({"file_ids": [files[0]], "files": []}),
        ] {
            let (status, err) = me
                .post(&format!("/v1/vector_stores/{vs}/file_batches"), &bad)
                .await;
            assert!(status == 400 || status == 404, "{bad}: {status} {err}");
        }
        let (_, store) = me.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(store["file_counts"]["total"], 3);
        let (status, _) = me
            .get(&format!("/v1/vector_stores/{vs}/file_batches/vsfb_nope"))
            .await;
        assert_eq!(status, 404);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_other_tenants_stores_are_not_found() {
    let cfg = config(
        "[upstream]\nurl = \"http://127.0.0.1:1/v1\"\n\
         [[server.keys]]\nname = \"alice\"\nkey = \"sk-alice\"\ntenant = \"acme\"\n\
         [[server.keys]]\nname = \"bob\"\nkey = \"sk-bob\"\ntenant = \"globex\"\n",
    );
    for db in databases().await {
        let server = Server::start(&db, Some(&cfg)).await;
        let (alice, bob) = (server.as_key("sk-alice"), server.as_key("sk-bob"));
        let file = alice.upload_file("a.txt", b"acme only").await;
        // An unknown (or another tenant's) file: no store is created.
        let (status, err) = bob
            .post("/v1/vector_stores", &json!({"file_ids": [file]}))
            .await;
        assert_eq!(
            (status, err["error"]["param"].as_str()),
            (404, Some("file_ids")),
            "{err}"
        );
        let (_, list) = bob.get("/v1/vector_stores").await;
        assert_eq!(list["data"], json!([]));
        let (_, store) = alice
            .post("/v1/vector_stores", &json!({"file_ids": [file]}))
            .await;
        let vs = store["id"].as_str().unwrap().to_owned();
        alice.settled(&vs, &file).await;
        let unknown = "vs_0123456789abcdef0123456789abcdef0123456789abcdef";
        let routes = |id: &str| {
            vec![
                ("GET", format!("/v1/vector_stores/{id}")),
                ("POST", format!("/v1/vector_stores/{id}")),
                ("POST", format!("/v1/vector_stores/{id}/search")),
                ("GET", format!("/v1/vector_stores/{id}/files")),
                ("GET", format!("/v1/vector_stores/{id}/files/{file}")),
                (
                    "GET",
                    format!("/v1/vector_stores/{id}/files/{file}/content"),
                ),
                ("POST", format!("/v1/vector_stores/{id}/files")),
                ("DELETE", format!("/v1/vector_stores/{id}/files/{file}")),
                ("DELETE", format!("/v1/vector_stores/{id}")),
            ]
        };
        for ((method, theirs), (_, nobody)) in routes(&vs).into_iter().zip(routes(unknown)) {
            let call = |path: String| {
                let bob = &bob;
                let body = json!({"query": "acme", "file_id": file, "name": "stolen"});
                async move {
                    match method {
                        "GET" => bob.get(&path).await,
                        "POST" => bob.post(&path, &body).await,
                        _ => bob.delete(&path).await,
                    }
                }
            };
            let (s1, b1) = call(theirs.clone()).await;
            let (s2, b2) = call(nobody).await;
            assert_eq!(s1, 404, "{method} {theirs}: {b1}");
            assert_eq!(s1, s2, "{method} {theirs}");
            assert_eq!(
                b1.to_string().replace(&vs, "ID"),
                b2.to_string().replace(unknown, "ID")
            );
        }
        // Alice's store is untouched.
        let (_, store) = alice.get(&format!("/v1/vector_stores/{vs}")).await;
        assert_eq!(
            (
                store["name"].as_str(),
                store["file_counts"]["completed"].as_u64()
            ),
            (Some(""), Some(1))
        );
    }
}
