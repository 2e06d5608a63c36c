//! `/v1/containers` over HTTP on SQLite and Postgres: create (with Files
//! API files copied in), list, retrieve, delete; container files from an
//! upload or a `file_id`, list, retrieve, content, delete; bad input;
//! another tenant's container is an unknown id.

use serde_json::json;

use crate::support::{config, databases, Part, Server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_and_their_files() {
    for db in databases().await {
        let server = Server::start(&db, None).await;
        let me = server.me();
        let data = me.upload_file("data.csv", b"x,y\n1,2\n").await;
        let (status, c) = me
            .post("/v1/containers", &json!({"name": "work", "file_ids": [data], "expires_after": {"anchor": "last_active_at", "minutes": 5}}))
            .await;
        assert_eq!(status, 200, "{c}");
        assert_eq!(
            (c["object"].as_str(), c["status"].as_str()),
            (Some("container"), Some("running"))
        );
        assert_eq!(c["expires_after"]["minutes"], 5);
        let id = c["id"].as_str().unwrap().to_owned();
        assert!(id.starts_with("cntr_"));

        let (_, files) = me.get(&format!("/v1/containers/{id}/files")).await;
        assert_eq!(files["data"][0]["path"], "/mnt/data/data.csv");
        assert_eq!(files["data"][0]["source"], "user");

        let (status, up) = me
            .upload(
                &format!("/v1/containers/{id}/files"),
                &[Part::file("file", "notes.txt", b"hello")],
            )
            .await;
        assert_eq!(status, 200, "{up}");
        assert_eq!(
            (up["object"].as_str(), up["bytes"].as_u64()),
            (Some("container.file"), Some(5))
        );
        let up_id = up["id"].as_str().unwrap().to_owned();
        let (status, copied) = me
            .post(
                &format!("/v1/containers/{id}/files"),
                &json!({"file_id": data}),
            )
            .await;
        assert_eq!(status, 200, "{copied}");
        // Same path: the copy replaced the first one.
        let (_, files) = me
            .get(&format!("/v1/containers/{id}/files?order=asc"))
            .await;
        assert_eq!(files["data"].as_array().unwrap().len(), 2, "{files}");

        let (status, got) = me.get(&format!("/v1/containers/{id}/files/{up_id}")).await;
        assert_eq!(
            (status, got["path"].as_str()),
            (200, Some("/mnt/data/notes.txt"))
        );
        let (status, bytes) = me
            .get_bytes(&format!("/v1/containers/{id}/files/{up_id}/content"))
            .await;
        assert_eq!((status, bytes.as_slice()), (200, &b"hello"[..]));
        let (status, gone) = me
            .delete(&format!("/v1/containers/{id}/files/{up_id}"))
            .await;
        assert_eq!(
            (status, gone["object"].as_str()),
            (200, Some("container.file.deleted"))
        );
        let (status, _) = me.get(&format!("/v1/containers/{id}/files/{up_id}")).await;
        assert_eq!(status, 404);

        let (_, list) = me.get("/v1/containers").await;
        assert_eq!(list["data"][0]["id"], id.as_str());
        // Bad input changes nothing.
        for bad in [
            json!({}),
            json!({"name": "x", "expires_after": {"anchor": "last_active_at", "minutes": 0}}),
            json!({"name": "x", "file_ids": ["file-nope"]}),
        ] {
            let (status, err) = me.post("/v1/containers", &bad).await;
            assert!(status == 400 || status == 404, "{bad}: {status} {err}");
        }
        let (status, _) = me
            .post(
                &format!("/v1/containers/{id}/files"),
                &json!({"file_id": "file-nope"}),
            )
            .await;
        assert_eq!(status, 404);
        let (status, _) = me
            .upload(
                &format!("/v1/containers/{id}/files"),
                &[Part::text("other", "x")],
            )
            .await;
        assert_eq!(status, 400);
        let (_, list) = me.get("/v1/containers").await;
        assert_eq!(list["data"].as_array().unwrap().len(), 1);

        let (status, gone) = me.delete(&format!("/v1/containers/{id}")).await;
        assert_eq!(
            (status, gone["object"].as_str()),
            (200, Some("container.deleted"))
        );
        for path in [
            format!("/v1/containers/{id}"),
            format!("/v1/containers/{id}/files"),
        ] {
            let (status, _) = me.get(&path).await;
            assert_eq!(status, 404, "{path}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_tenants_container_is_an_unknown_id() {
    let cfg = config(
        "[upstream]\nurl = \"http://127.0.0.1:1/v1\"\n\
         [[server.keys]]\nname = \"alice\"\nkey = \"sk-alice\"\ntenant = \"acme\"\n\
         [[server.keys]]\nname = \"bob\"\nkey = \"sk-bob\"\ntenant = \"globex\"\n",
    );
    for db in databases().await {
        let server = Server::start(&db, Some(&cfg)).await;
        let (alice, bob) = (server.as_key("sk-alice"), server.as_key("sk-bob"));
        let (_, c) = alice.post("/v1/containers", &json!({"name": "acme"})).await;
        let id = c["id"].as_str().unwrap().to_owned();
        let (_, f) = alice
            .upload(
                &format!("/v1/containers/{id}/files"),
                &[Part::file("file", "s.txt", b"secret")],
            )
            .await;
        let fid = f["id"].as_str().unwrap().to_owned();
        let unknown = "cntr_0123456789abcdef0123456789abcdef0123456789abcdef";
        for path in [
            "/v1/containers/{}",
            "/v1/containers/{}/files",
            "/v1/containers/{}/files/FID",
            "/v1/containers/{}/files/FID/content",
        ] {
            let theirs = path.replace("{}", &id).replace("FID", &fid);
            let nobody = path.replace("{}", unknown).replace("FID", &fid);
            let (s1, b1) = bob.get(&theirs).await;
            let (s2, b2) = bob.get(&nobody).await;
            assert_eq!((s1, s2), (404, 404), "{theirs}: {b1}");
            assert_eq!(
                b1.to_string().replace(&id, "ID"),
                b2.to_string().replace(unknown, "ID")
            );
        }
        let (status, _) = bob
            .upload(
                &format!("/v1/containers/{id}/files"),
                &[Part::file("file", "x.txt", b"x")],
            )
            .await;
        assert_eq!(status, 404);
        let (status, _) = bob.delete(&format!("/v1/containers/{id}")).await;
        assert_eq!(status, 404);
        let (_, files) = alice.get(&format!("/v1/containers/{id}/files")).await;
        assert_eq!(files["data"].as_array().unwrap().len(), 1, "{files}");
    }
}
