//! The `ConversationStore` contract on the in-memory store, SQLite and
//! Postgres (feature `postgres`, when `WINDLASS_TEST_PG` is set).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;

use common::{assistant, ids, user, TempDb};
use serde_json::{json, Map, Value};
use windlass_engine::{Conversation, ConversationStore, PageRequest, SortOrder, StoreError};
use windlass_store::{MemoryStore, SqliteStore};

async fn stores() -> Vec<(Arc<dyn ConversationStore>, Option<TempDb>)> {
    let db = TempDb::new();
    let sqlite = SqliteStore::open(&db.path).await.expect("open");
    #[allow(unused_mut)]
    let mut stores = vec![
        (
            Arc::new(MemoryStore::new()) as Arc<dyn ConversationStore>,
            None,
        ),
        (Arc::new(sqlite) as Arc<dyn ConversationStore>, Some(db)),
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

fn conversation(id: &str) -> Conversation {
    let metadata: Map<String, Value> = serde_json::from_value(json!({"k": "v"})).expect("map");
    Conversation {
        id: id.to_owned(),
        object: "conversation".to_owned(),
        created_at: 1_700_000_000,
        metadata,
    }
}

fn page(after: Option<&str>, limit: usize, order: SortOrder) -> PageRequest {
    PageRequest {
        after: after.map(str::to_owned),
        limit,
        order,
    }
}

#[tokio::test]
async fn items_are_kept_in_order_paged_and_scoped_to_the_tenant() {
    for (store, _db) in stores().await {
        let conv = conversation("conv_1");
        store
            .create_conversation("t1", &conv, &[user("msg_1", "a")])
            .await
            .expect("create");
        let dup = store.create_conversation("t1", &conv, &[]).await;
        assert!(matches!(dup, Err(StoreError::Duplicate(_))), "{dup:?}");
        assert_eq!(
            store.get_conversation("t1", "conv_1").await.expect("get"),
            Some(conv.clone())
        );
        assert_eq!(
            store.get_conversation("t2", "conv_1").await.expect("get"),
            None
        );

        let more = [assistant("msg_2", "b"), user("msg_3", "c")];
        assert!(store
            .append_conversation_items("t1", "conv_1", &more)
            .await
            .expect("append"));
        assert!(!store
            .append_conversation_items("t2", "conv_1", &more)
            .await
            .expect("append"));
        let all = store
            .conversation_context("t1", "conv_1")
            .await
            .expect("ctx");
        assert_eq!(ids(&all.expect("items")), ["msg_1", "msg_2", "msg_3"]);
        let p = store
            .conversation_items("t1", "conv_1", &page(Some("msg_3"), 1, SortOrder::Desc))
            .await
            .expect("page")
            .expect("known");
        assert_eq!(ids(&p.items), ["msg_2"]);
        assert!(p.has_more);

        let item = store
            .conversation_item("t1", "conv_1", "msg_2")
            .await
            .expect("item");
        assert_eq!(
            item.and_then(|i| i.id().map(str::to_owned)).as_deref(),
            Some("msg_2")
        );
        assert!(store
            .delete_conversation_item("t1", "conv_1", "msg_2")
            .await
            .expect("del"));
        assert!(!store
            .delete_conversation_item("t1", "conv_1", "msg_2")
            .await
            .expect("del"));
        // Appends after a delete still go last.
        store
            .append_conversation_items("t1", "conv_1", &[user("msg_4", "d")])
            .await
            .expect("append");
        let all = store
            .conversation_context("t1", "conv_1")
            .await
            .expect("ctx");
        assert_eq!(ids(&all.expect("items")), ["msg_1", "msg_3", "msg_4"]);

        let mut metadata = Map::new();
        metadata.insert("new".into(), json!("x"));
        let updated = store
            .update_conversation("t1", "conv_1", &metadata)
            .await
            .expect("update");
        assert_eq!(updated.expect("known").metadata, metadata);
        assert!(!store
            .delete_conversation("t2", "conv_1")
            .await
            .expect("delete"));
        assert!(store
            .delete_conversation("t1", "conv_1")
            .await
            .expect("delete"));
        assert_eq!(
            store
                .conversation_context("t1", "conv_1")
                .await
                .expect("ctx"),
            None
        );
    }
}

#[tokio::test]
async fn concurrent_appends_keep_every_item_once_and_in_append_order_per_caller() {
    for (store, _db) in stores().await {
        store
            .create_conversation("t1", &conversation("conv_c"), &[])
            .await
            .expect("create");
        let tasks: Vec<_> = (0..8)
            .map(|n| {
                let store = store.clone();
                tokio::spawn(async move {
                    let items = [
                        user(&format!("msg_{n}_a"), "a"),
                        assistant(&format!("msg_{n}_b"), "b"),
                    ];
                    store
                        .append_conversation_items("t1", "conv_c", &items)
                        .await
                })
            })
            .collect();
        for task in tasks {
            assert!(task.await.expect("join").expect("append"));
        }
        let all = store
            .conversation_context("t1", "conv_c")
            .await
            .expect("ctx")
            .expect("known");
        let got = ids(&all);
        assert_eq!(got.len(), 16, "{got:?}");
        // Each append's two items stay adjacent and in order.
        for pair in got.chunks(2) {
            assert_eq!(pair[0].replace("_a", "_b"), pair[1], "{got:?}");
        }
        // Empty conversations are known, not missing.
        store
            .create_conversation("t1", &conversation("conv_empty"), &[])
            .await
            .expect("create");
        let empty = store
            .conversation_items("t1", "conv_empty", &page(None, 10, SortOrder::Asc))
            .await
            .expect("page");
        assert_eq!(empty.map(|p| p.items.len()), Some(0));
        assert_eq!(
            store
                .conversation_item("t1", "conv_empty", "msg_x")
                .await
                .expect("item"),
            None
        );
    }
}
