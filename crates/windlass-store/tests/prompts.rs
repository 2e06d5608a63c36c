//! The `PromptStore` contract on the in-memory store, SQLite and Postgres
//! (feature `postgres`, when `WINDLASS_TEST_PG` is set).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

mod common;

use std::sync::Arc;

use common::TempDb;
use serde_json::json;
use windlass_engine::{PromptStore, StoreError};
use windlass_protocol::{Item, Prompt, PromptTemplate, PromptVersion};
use windlass_store::{MemoryStore, SqliteStore};

async fn stores() -> Vec<(&'static str, Arc<dyn PromptStore>, Option<TempDb>)> {
    let db = TempDb::new();
    let sqlite = SqliteStore::open(&db.path).await.expect("open");
    #[allow(unused_mut)]
    let mut stores: Vec<(&'static str, Arc<dyn PromptStore>, Option<TempDb>)> = vec![
        ("memory", Arc::new(MemoryStore::new()), None),
        ("sqlite", Arc::new(sqlite), Some(db)),
    ];
    #[cfg(feature = "postgres")]
    if let Some(url) = common::pg_schema_url().await {
        let pg = windlass_store::PgStore::open(&url)
            .await
            .expect("open postgres");
        stores.push(("postgres", Arc::new(pg), None));
    }
    stores
}

fn template(instructions: &str) -> PromptTemplate {
    PromptTemplate {
        instructions: Some(instructions.to_owned()),
        input: vec![Item::user_text("Hi {{name}}")],
    }
}

async fn create(store: &dyn PromptStore, tenant: &str, id: &str, at: u64) -> Prompt {
    let prompt = Prompt {
        id: id.to_owned(),
        object: Prompt::OBJECT.to_owned(),
        created_at: at,
        name: Some(format!("name of {id}")),
        metadata: json!({"team": "a"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        latest_version: "1".to_owned(),
    };
    let first = PromptVersion::new(id, 1, at, template("v1 for {{name}}"));
    store
        .create_prompt(tenant, &prompt, &first)
        .await
        .expect("create");
    prompt
}

#[tokio::test]
async fn versions_are_numbered_and_the_latest_is_the_default() {
    for (name, store, _db) in stores().await {
        let created = create(&*store, "t1", "pmpt_a", 100).await;
        assert_eq!(
            store.get_prompt("t1", "pmpt_a").await.unwrap(),
            Some(created),
            "{name}"
        );
        let v2 = store
            .add_prompt_version("t1", "pmpt_a", &template("v2 {{name}} {{tone}}"), 200)
            .await
            .unwrap()
            .expect("known prompt");
        assert_eq!(v2.version, "2", "{name}");
        assert_eq!(v2.variables, ["name", "tone"], "{name}");
        let latest = store.prompt_version("t1", "pmpt_a", None).await.unwrap();
        assert_eq!(latest.as_ref(), Some(&v2), "{name}");
        let first = store
            .prompt_version("t1", "pmpt_a", Some("1"))
            .await
            .unwrap()
            .expect("v1");
        assert_eq!(
            first.template.instructions.as_deref(),
            Some("v1 for {{name}}"),
            "{name}"
        );
        assert_eq!(first.created_at, 100, "{name}");
        assert_eq!(
            first.template.input,
            [Item::user_text("Hi {{name}}")],
            "{name}"
        );
        for unknown in ["3", "0", "x", "-1"] {
            assert_eq!(
                store
                    .prompt_version("t1", "pmpt_a", Some(unknown))
                    .await
                    .unwrap(),
                None,
                "{name} {unknown}"
            );
        }
        let prompt = store
            .get_prompt("t1", "pmpt_a")
            .await
            .unwrap()
            .expect("prompt");
        assert_eq!(prompt.latest_version, "2", "{name}");
        let all = store
            .prompt_versions("t1", "pmpt_a")
            .await
            .unwrap()
            .expect("versions");
        let numbers: Vec<&str> = all.iter().map(|v| v.version.as_str()).collect();
        assert_eq!(numbers, ["1", "2"], "{name}");
    }
}

#[tokio::test]
async fn another_tenant_sees_nothing_and_changes_nothing() {
    for (name, store, _db) in stores().await {
        create(&*store, "t1", "pmpt_b", 100).await;
        assert_eq!(
            store.get_prompt("t2", "pmpt_b").await.unwrap(),
            None,
            "{name}"
        );
        assert_eq!(
            store.prompt_version("t2", "pmpt_b", None).await.unwrap(),
            None,
            "{name}"
        );
        assert_eq!(
            store.prompt_versions("t2", "pmpt_b").await.unwrap(),
            None,
            "{name}"
        );
        assert!(store.list_prompts("t2").await.unwrap().is_empty(), "{name}");
        let added = store
            .add_prompt_version("t2", "pmpt_b", &template("x"), 1)
            .await
            .unwrap();
        assert_eq!(added, None, "{name}");
        assert!(
            !store.delete_prompt("t2", "pmpt_b").await.unwrap(),
            "{name}"
        );
        let still = store
            .get_prompt("t1", "pmpt_b")
            .await
            .unwrap()
            .expect("kept");
        assert_eq!(still.latest_version, "1", "{name}");
    }
}

#[tokio::test]
async fn list_is_newest_first_and_delete_removes_every_version() {
    for (name, store, _db) in stores().await {
        create(&*store, "t1", "pmpt_old", 100).await;
        create(&*store, "t1", "pmpt_new", 300).await;
        create(&*store, "t9", "pmpt_other", 200).await;
        let ids: Vec<String> = store
            .list_prompts("t1")
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(ids, ["pmpt_new", "pmpt_old"], "{name}");
        store
            .add_prompt_version("t1", "pmpt_old", &template("v2"), 400)
            .await
            .unwrap();
        assert!(
            store.delete_prompt("t1", "pmpt_old").await.unwrap(),
            "{name}"
        );
        assert!(
            !store.delete_prompt("t1", "pmpt_old").await.unwrap(),
            "{name}"
        );
        assert_eq!(
            store.get_prompt("t1", "pmpt_old").await.unwrap(),
            None,
            "{name}"
        );
        assert_eq!(
            store.prompt_versions("t1", "pmpt_old").await.unwrap(),
            None,
            "{name}"
        );
        assert_eq!(
            store
                .prompt_version("t1", "pmpt_old", Some("1"))
                .await
                .unwrap(),
            None,
            "{name}"
        );
        let again = store.list_prompts("t1").await.unwrap();
        assert_eq!(again.len(), 1, "{name}");
    }
}

#[tokio::test]
async fn an_id_in_use_is_a_duplicate_for_any_tenant() {
    for (name, store, _db) in stores().await {
        let prompt = create(&*store, "t1", "pmpt_dup", 100).await;
        let first = PromptVersion::new("pmpt_dup", 1, 100, template("other"));
        let err = store
            .create_prompt("t2", &prompt, &first)
            .await
            .expect_err("duplicate");
        assert!(
            matches!(err, StoreError::Duplicate(ref id) if id == "pmpt_dup"),
            "{name}: {err:?}"
        );
        let kept = store
            .prompt_version("t1", "pmpt_dup", None)
            .await
            .unwrap()
            .expect("kept");
        assert_eq!(
            kept.template.instructions.as_deref(),
            Some("v1 for {{name}}"),
            "{name}"
        );
    }
}

/// Concurrent additions to one prompt each get their own number.
#[tokio::test]
async fn concurrent_versions_never_share_a_number() {
    for (name, store, _db) in stores().await {
        create(&*store, "t1", "pmpt_c", 100).await;
        let adds = (0..8).map(|i| {
            let store = store.clone();
            async move {
                store
                    .add_prompt_version("t1", "pmpt_c", &template(&format!("v{i}")), 100 + i)
                    .await
                    .unwrap()
                    .expect("known")
                    .version
            }
        });
        let mut numbers: Vec<u64> = futures_join(adds)
            .await
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        numbers.sort_unstable();
        assert_eq!(numbers, (2..=9).collect::<Vec<u64>>(), "{name}");
    }
}

async fn futures_join<F: std::future::Future<Output = String> + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<String> {
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("task"));
    }
    out
}
