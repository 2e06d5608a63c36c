//! The `ContainerStore` contract on the in-memory store, SQLite and Postgres
//! (feature `postgres`, when `WINDLASS_TEST_PG` is set): containers and their
//! files per tenant, paging, replacing a path, expiry.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;

use common::TempDb;
use windlass_engine::{
    ContainerListRequest, ContainerStore, ExpiredContainer, SortOrder, StoreError,
};
use windlass_protocol::{
    Container, ContainerExpiresAfter, ContainerExpiryAnchor, ContainerFile, ContainerFileSource,
    ContainerStatus, MemoryLimit,
};
use windlass_store::{MemoryStore, SqliteStore};

const ACME: &str = "acme";
const GLOBEX: &str = "globex";

async fn stores() -> Vec<(Arc<dyn ContainerStore>, Option<TempDb>)> {
    let db = TempDb::new();
    let sqlite = SqliteStore::open(&db.path).await.expect("open");
    #[allow(unused_mut)]
    let mut stores = vec![
        (
            Arc::new(MemoryStore::new()) as Arc<dyn ContainerStore>,
            None,
        ),
        (Arc::new(sqlite) as Arc<dyn ContainerStore>, Some(db)),
    ];
    #[cfg(feature = "postgres")]
    if let Some(url) = common::pg_schema_url().await {
        let pg = windlass_store::PgStore::open(&url)
            .await
            .expect("open postgres");
        stores.push((Arc::new(pg), None));
    }
    stores
}

fn container(id: &str, created_at: u64, minutes: Option<u64>) -> Container {
    Container {
        id: id.to_owned(),
        object: "container".to_owned(),
        created_at,
        name: format!("name of {id}"),
        status: ContainerStatus::Running,
        expires_after: minutes.map(|minutes| ContainerExpiresAfter {
            anchor: ContainerExpiryAnchor::LastActiveAt,
            minutes,
        }),
        last_active_at: Some(created_at),
        memory_limit: Some(MemoryLimit::G1),
    }
}

fn file(id: &str, container_id: &str, path: &str, bytes: &[u8], at: u64) -> ContainerFile {
    ContainerFile {
        id: id.to_owned(),
        object: "container.file".to_owned(),
        bytes: bytes.len() as u64,
        container_id: container_id.to_owned(),
        created_at: at,
        path: path.to_owned(),
        source: ContainerFileSource::Assistant,
    }
}

fn page(after: Option<&str>, limit: usize, order: SortOrder) -> ContainerListRequest {
    ContainerListRequest {
        after: after.map(str::to_owned),
        limit,
        order,
    }
}

#[tokio::test]
async fn containers_are_created_read_paged_and_deleted_per_tenant() {
    for (store, _db) in stores().await {
        for (i, id) in ["cntr_a", "cntr_b", "cntr_c"].iter().enumerate() {
            store
                .create_container(ACME, &container(id, 100 + i as u64, Some(20)))
                .await
                .expect("create");
        }
        store
            .create_container(GLOBEX, &container("cntr_g", 50, None))
            .await
            .expect("create");
        let dup = store
            .create_container(GLOBEX, &container("cntr_a", 1, None))
            .await;
        assert!(matches!(dup, Err(StoreError::Duplicate(id)) if id == "cntr_a"));

        let got = store.get_container(ACME, "cntr_b").await.expect("get");
        assert_eq!(got, Some(container("cntr_b", 101, Some(20))));
        // Another tenant's id is an unknown id.
        assert_eq!(
            store.get_container(GLOBEX, "cntr_b").await.expect("get"),
            None
        );
        assert!(!store.delete_container(GLOBEX, "cntr_b").await.expect("del"));

        let first = store
            .list_containers(ACME, &page(None, 2, SortOrder::Asc))
            .await
            .expect("list");
        let names: Vec<_> = first.data.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(names, ["cntr_a", "cntr_b"]);
        assert!(first.has_more);
        let rest = store
            .list_containers(ACME, &page(Some("cntr_b"), 2, SortOrder::Asc))
            .await
            .expect("list");
        assert_eq!(rest.data.len(), 1);
        assert_eq!(rest.data[0].id, "cntr_c");
        assert!(!rest.has_more);
        let desc = store
            .list_containers(ACME, &page(None, 10, SortOrder::Desc))
            .await
            .expect("list");
        let names: Vec<_> = desc.data.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(names, ["cntr_c", "cntr_b", "cntr_a"]);
        let desc_after = store
            .list_containers(ACME, &page(Some("cntr_c"), 10, SortOrder::Desc))
            .await
            .expect("list");
        assert_eq!(desc_after.data.len(), 2);
        // A cursor of another tenant is unknown.
        let foreign = store
            .list_containers(ACME, &page(Some("cntr_g"), 2, SortOrder::Asc))
            .await;
        assert!(matches!(foreign, Err(StoreError::UnknownCursor(_))));

        assert!(store.delete_container(ACME, "cntr_b").await.expect("del"));
        assert_eq!(
            store.get_container(ACME, "cntr_b").await.expect("get"),
            None
        );
        assert!(!store.delete_container(ACME, "cntr_b").await.expect("del"));
    }
}

#[tokio::test]
async fn files_live_in_their_container_and_a_path_is_replaced() {
    for (store, _db) in stores().await {
        store
            .create_container(ACME, &container("cntr_1", 10, None))
            .await
            .expect("create");
        store
            .create_container(GLOBEX, &container("cntr_2", 10, None))
            .await
            .expect("create");
        let png = b"\x89PNG\r\n\x1a\nrest";
        let f1 = file("cfile_1", "cntr_1", "/mnt/data/plot.png", png, 20);
        assert!(store.put_container_file(ACME, &f1, png).await.expect("put"));
        let f2 = file("cfile_2", "cntr_1", "/mnt/data/out.csv", b"a,b\n", 21);
        assert!(store
            .put_container_file(ACME, &f2, b"a,b\n")
            .await
            .expect("put"));
        // Not into another tenant's container, and not into an unknown one.
        let stray = file("cfile_3", "cntr_2", "/mnt/data/x", b"x", 22);
        assert!(!store
            .put_container_file(ACME, &stray, b"x")
            .await
            .expect("put"));
        let stray = file("cfile_4", "cntr_nope", "/mnt/data/x", b"x", 22);
        assert!(!store
            .put_container_file(ACME, &stray, b"x")
            .await
            .expect("put"));

        assert_eq!(
            store
                .get_container_file(ACME, "cntr_1", "cfile_1")
                .await
                .expect("get"),
            Some(f1.clone())
        );
        assert_eq!(
            store
                .container_file_content(ACME, "cntr_1", "cfile_1")
                .await
                .expect("content"),
            Some(png.to_vec())
        );
        // Other tenant, or the file named through another container: unknown.
        assert_eq!(
            store
                .get_container_file(GLOBEX, "cntr_1", "cfile_1")
                .await
                .expect("get"),
            None
        );
        assert_eq!(
            store
                .container_file_content(GLOBEX, "cntr_1", "cfile_1")
                .await
                .expect("content"),
            None
        );
        assert_eq!(
            store
                .get_container_file(GLOBEX, "cntr_2", "cfile_1")
                .await
                .expect("get"),
            None
        );
        assert_eq!(
            store
                .list_container_files(GLOBEX, "cntr_1", &page(None, 10, SortOrder::Asc))
                .await
                .expect("list"),
            None
        );
        assert!(!store
            .delete_container_file(GLOBEX, "cntr_1", "cfile_1")
            .await
            .expect("delete"));

        // A new file at an existing path replaces the old one.
        let f3 = file("cfile_5", "cntr_1", "/mnt/data/out.csv", b"a,b\n1,2\n", 30);
        assert!(store
            .put_container_file(ACME, &f3, b"a,b\n1,2\n")
            .await
            .expect("put"));
        let listed = store
            .list_container_files(ACME, "cntr_1", &page(None, 10, SortOrder::Asc))
            .await
            .expect("list")
            .expect("known");
        let ids: Vec<_> = listed.data.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["cfile_1", "cfile_5"]);
        assert_eq!(listed.data[1].bytes, 8);
        let paged = store
            .list_container_files(ACME, "cntr_1", &page(Some("cfile_1"), 1, SortOrder::Asc))
            .await
            .expect("list")
            .expect("known");
        assert_eq!(paged.data[0].id, "cfile_5");
        assert!(!paged.has_more);
        let unknown_cursor = store
            .list_container_files(ACME, "cntr_1", &page(Some("cfile_2"), 1, SortOrder::Asc))
            .await;
        assert!(matches!(unknown_cursor, Err(StoreError::UnknownCursor(_))));

        assert!(store
            .delete_container_file(ACME, "cntr_1", "cfile_1")
            .await
            .expect("delete"));
        assert_eq!(
            store
                .get_container_file(ACME, "cntr_1", "cfile_1")
                .await
                .expect("get"),
            None
        );
        // Deleting the container takes its files.
        assert!(store.delete_container(ACME, "cntr_1").await.expect("del"));
        assert_eq!(
            store
                .container_file_content(ACME, "cntr_1", "cfile_5")
                .await
                .expect("content"),
            None
        );
    }
}

#[tokio::test]
async fn idle_containers_expire_and_lose_their_files() {
    for (store, _db) in stores().await {
        // Idle for 10 minutes after t=1000; never-expiring; idle for 60.
        store
            .create_container(ACME, &container("cntr_idle", 1000, Some(10)))
            .await
            .expect("create");
        store
            .create_container(ACME, &container("cntr_forever", 1000, None))
            .await
            .expect("create");
        store
            .create_container(GLOBEX, &container("cntr_long", 1000, Some(60)))
            .await
            .expect("create");
        let f = file("cfile_i", "cntr_idle", "/mnt/data/a.txt", b"a", 1001);
        assert!(store.put_container_file(ACME, &f, b"a").await.expect("put"));

        // Use at t=1300 moves expiry to 1300 + 600; never backwards.
        let touched = store
            .touch_container(ACME, "cntr_idle", 1300)
            .await
            .expect("touch")
            .expect("running");
        assert_eq!(touched.last_active_at, Some(1300));
        assert_eq!(touched.expires_at(), Some(1900));
        let again = store
            .touch_container(ACME, "cntr_idle", 1200)
            .await
            .expect("touch")
            .expect("running");
        assert_eq!(again.last_active_at, Some(1300));
        assert_eq!(
            store
                .touch_container(GLOBEX, "cntr_idle", 1400)
                .await
                .expect("touch"),
            None
        );

        assert_eq!(store.expire_containers(1899).await.expect("sweep"), vec![]);
        let gone = store.expire_containers(1900).await.expect("sweep");
        assert_eq!(
            gone,
            vec![ExpiredContainer {
                tenant: ACME.into(),
                id: "cntr_idle".into()
            }]
        );
        let idle = store
            .get_container(ACME, "cntr_idle")
            .await
            .expect("get")
            .expect("kept");
        assert_eq!(idle.status, ContainerStatus::Expired);
        assert_eq!(
            store
                .container_file_content(ACME, "cntr_idle", "cfile_i")
                .await
                .expect("content"),
            None
        );
        // An expired container is not used again: no touch, no new files.
        assert_eq!(
            store
                .touch_container(ACME, "cntr_idle", 2000)
                .await
                .expect("touch"),
            None
        );
        let late = file("cfile_l", "cntr_idle", "/mnt/data/b.txt", b"b", 2000);
        assert!(!store
            .put_container_file(ACME, &late, b"b")
            .await
            .expect("put"));

        // Sweeping again finds nothing new; the long one goes at 1000 + 3600.
        assert_eq!(store.expire_containers(2000).await.expect("sweep"), vec![]);
        let later = store.expire_containers(4600).await.expect("sweep");
        assert_eq!(later.len(), 1);
        assert_eq!(later[0].id, "cntr_long");
        assert_eq!(
            store
                .get_container(ACME, "cntr_forever")
                .await
                .expect("get")
                .expect("kept")
                .status,
            ContainerStatus::Running
        );
    }
}
