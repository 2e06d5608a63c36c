//! Tenant isolation in every store: another tenant's id behaves exactly like
//! an unknown one, for every read, for delete, and for chains and item
//! references.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{transcript, user, TempDb, Turn};
use windlass_engine::{NewResponse, PageRequest, ResponseStore, SortOrder, Trace};
use windlass_store::{MemoryStore, SqliteStore};

const ACME: &str = "acme";
const GLOBEX: &str = "globex";

fn page() -> PageRequest {
    PageRequest {
        after: None,
        limit: 20,
        order: SortOrder::Asc,
    }
}

async fn foreign_ids_are_unknown(store: &dyn ResponseStore) {
    let a = Turn::new("a", None, 2, 2);
    let trace = Trace {
        response_id: "a".into(),
        ..Trace::default()
    };
    store
        .save(NewResponse {
            tenant: ACME,
            response: &a.resource,
            input: &a.input,
            trace: Some(&trace),
        })
        .await
        .expect("save");

    assert_eq!(store.get(GLOBEX, "a").await.expect("get"), None);
    assert_eq!(store.load_context(GLOBEX, "a").await.expect("load"), None);
    let items = store.input_items(GLOBEX, "a", &page()).await.expect("page");
    assert_eq!(items, None);
    assert_eq!(store.trace(GLOBEX, "a").await.expect("trace"), None);
    assert_eq!(store.find_item(GLOBEX, "a_in0").await.expect("find"), None);
    assert!(!store.delete(GLOBEX, "a").await.expect("delete"));

    // The owner still sees everything: the foreign delete changed nothing.
    assert_eq!(
        store.get(ACME, "a").await.expect("get"),
        Some(a.resource.clone())
    );
    assert_eq!(
        store.load_context(ACME, "a").await.expect("load"),
        Some(transcript(&[&a]))
    );
    assert_eq!(store.trace(ACME, "a").await.expect("trace"), Some(trace));
    assert!(store
        .find_item(ACME, "a_out1")
        .await
        .expect("find")
        .is_some());
    let own = store.input_items(ACME, "a", &page()).await.expect("page");
    assert_eq!(own.map(|p| p.items), Some(a.input.clone()));
    assert!(store.delete(ACME, "a").await.expect("delete"));
}

/// A save naming another tenant's response as its predecessor starts from
/// an empty history, as with an unknown predecessor.
async fn chains_never_cross(store: &dyn ResponseStore) {
    let a = Turn::new("a", None, 1, 1);
    a.save_as(store, ACME).await;
    let b = Turn::new("b", Some("a"), 1, 1);
    b.save_as(store, GLOBEX).await;
    assert_eq!(
        store.load_context(GLOBEX, "b").await.expect("load"),
        Some(transcript(&[&b]))
    );
    // Deleting the foreign "predecessor" leaves b as it was.
    assert!(store.delete(ACME, "a").await.expect("delete"));
    assert_eq!(
        store.load_context(GLOBEX, "b").await.expect("load"),
        Some(transcript(&[&b]))
    );
}

/// The same public item id stored by two tenants: each finds its own.
async fn item_references_stay_home(store: &dyn ResponseStore) {
    let mut x = Turn::new("x", None, 0, 0);
    x.input = vec![user("msg_shared", "acme's words")];
    x.save_as(store, ACME).await;
    let mut y = Turn::new("y", None, 0, 0);
    y.input = vec![user("msg_shared", "globex's words")];
    y.save_as(store, GLOBEX).await;
    let found = |t| store.find_item(t, "msg_shared");
    assert_eq!(found(ACME).await.expect("find"), Some(x.input[0].clone()));
    assert_eq!(found(GLOBEX).await.expect("find"), Some(y.input[0].clone()));
    assert!(store.delete(GLOBEX, "y").await.expect("delete"));
    assert_eq!(found(GLOBEX).await.expect("find"), None);
    assert_eq!(found(ACME).await.expect("find"), Some(x.input[0].clone()));
}

macro_rules! tenancy_tests {
    ($open:expr) => {
        use super::*;

        #[tokio::test]
        async fn foreign_ids() {
            let (store, _db) = $open;
            foreign_ids_are_unknown(&*store).await;
        }
        #[tokio::test]
        async fn chains() {
            let (store, _db) = $open;
            chains_never_cross(&*store).await;
        }
        #[tokio::test]
        async fn item_references() {
            let (store, _db) = $open;
            item_references_stay_home(&*store).await;
        }
    };
}

mod memory {
    fn open() -> (Box<dyn ResponseStore>, Option<TempDb>) {
        (Box::new(MemoryStore::new()), None)
    }
    tenancy_tests!(open());
}

mod sqlite_file {
    async fn open() -> (Box<dyn ResponseStore>, Option<TempDb>) {
        let db = TempDb::new();
        let store = SqliteStore::open(&db.path).await.expect("open");
        (Box::new(store), Some(db))
    }
    tenancy_tests!(open().await);
}

/// Skipped (and says so) when `WINDLASS_TEST_PG` is unset.
#[cfg(feature = "postgres")]
mod postgres {
    use super::*;

    async fn open() -> Option<Box<dyn ResponseStore>> {
        let url = common::pg_schema_url().await?;
        let store = windlass_store::PgStore::open(&url).await.expect("open");
        Some(Box::new(store))
    }

    #[tokio::test]
    async fn foreign_ids() {
        let Some(store) = open().await else { return };
        foreign_ids_are_unknown(&*store).await;
    }
    #[tokio::test]
    async fn chains() {
        let Some(store) = open().await else { return };
        chains_never_cross(&*store).await;
    }
    #[tokio::test]
    async fn item_references() {
        let Some(store) = open().await else { return };
        item_references_stay_home(&*store).await;
    }
}
