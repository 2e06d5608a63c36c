//! Retention for conversations on the in-memory store, SQLite and Postgres
//! (feature `postgres`, when `WINDLASS_TEST_PG` is set): conversations idle
//! since before the cutoff go with their items, across tenants; one used
//! since (appended to, its metadata changed) stays, however old; responses
//! stay.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use common::{user, TempDb, Turn, T};
use serde_json::Map;
use windlass_engine::{Conversation, ConversationRetention, ConversationStore, ResponseStore};
use windlass_store::{MemoryStore, SqliteStore};

fn conversation(id: &str, created_at: u64) -> Conversation {
    Conversation {
        id: id.to_owned(),
        object: "conversation".to_owned(),
        created_at,
        metadata: Map::new(),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

async fn prunes_idle_conversations<S>(store: &S)
where
    S: ConversationStore + ConversationRetention + ResponseStore,
{
    let long_ago = 1_000;
    let recent = now();
    for (tenant, id, at) in [
        (T, "conv_idle", long_ago),
        ("acme", "conv_idle_acme", long_ago),
        (T, "conv_appended", long_ago),
        (T, "conv_renamed", long_ago),
        (T, "conv_new", recent),
    ] {
        let items = [user(&format!("{id}_m0"), "hello")];
        store
            .create_conversation(tenant, &conversation(id, at), &items)
            .await
            .expect("create");
    }
    // Used since: an append, a metadata change.
    assert!(store
        .append_conversation_items(T, "conv_appended", &[user("conv_appended_m1", "again")])
        .await
        .expect("append"));
    let mut metadata = Map::new();
    metadata.insert("topic".into(), "kept".into());
    assert!(store
        .update_conversation(T, "conv_renamed", &metadata)
        .await
        .expect("update")
        .is_some());
    // A response saved beside them is not the conversations' to prune.
    Turn::new("resp_kept", None, 1, 1).save(store).await;

    let cutoff = recent - 3600;
    assert_eq!(store.prune_conversations(cutoff).await.expect("prune"), 2);
    for (tenant, id) in [(T, "conv_idle"), ("acme", "conv_idle_acme")] {
        assert_eq!(
            store.get_conversation(tenant, id).await.unwrap(),
            None,
            "{id}"
        );
        assert_eq!(
            store.conversation_context(tenant, id).await.unwrap(),
            None,
            "{id}'s items"
        );
    }
    let appended = store
        .conversation_context(T, "conv_appended")
        .await
        .unwrap()
        .expect("used since the cutoff: kept");
    assert_eq!(appended.len(), 2);
    for id in ["conv_renamed", "conv_new"] {
        assert!(
            store.get_conversation(T, id).await.unwrap().is_some(),
            "{id}"
        );
    }
    assert!(store.get(T, "resp_kept").await.unwrap().is_some());
    assert_eq!(store.prune_conversations(cutoff).await.expect("again"), 0);
    // Everything is idle before a cutoff in the future.
    assert_eq!(
        store.prune_conversations(recent + 3600).await.expect("all"),
        3
    );
}

#[tokio::test]
async fn memory() {
    prunes_idle_conversations(&MemoryStore::new()).await;
}

#[tokio::test]
async fn sqlite() {
    let db = TempDb::new();
    let store = SqliteStore::open(&db.path).await.expect("open");
    prunes_idle_conversations(&store).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres() {
    let Some(url) = common::pg_schema_url().await else {
        return;
    };
    let store = windlass_store::PgStore::open(&url).await.expect("open");
    prunes_idle_conversations(&store).await;
}
