//! The connection pool, and the settings each of its sessions gets before
//! its first use.
//!
//! JIT off: the store's queries are short lookups and writes by key, which
//! JIT compilation never pays off for. But where statistics lag a table's
//! size (a new database before autovacuum's first `ANALYZE`), the history
//! load's estimate grew with the tables, crossed `jit_above_cost` (100,000
//! by default) at some tens of thousands of responses, and every request
//! continuing a response then compiled it first: 10-100 ms each, for a
//! query that takes 1 ms without.
//!
//! A `SET` after connecting rather than a startup `options` parameter:
//! connection poolers such as PgBouncer refuse startup parameters they do
//! not know. A server that refuses the `SET` (no such setting) keeps its
//! own; the connection is used all the same.

use deadpool_postgres::{ClientWrapper, Hook, Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres_rustls::MakeRustlsConnect;
use windlass_engine::StoreError;

const SESSION: &str = "SET jit = off";

/// A pool of at most `max_size` connections to `config`.
pub(super) fn build(
    config: &tokio_postgres::Config,
    tls: MakeRustlsConnect,
    max_size: usize,
) -> Result<Pool, StoreError> {
    let manager = Manager::from_config(
        config.clone(),
        tls,
        ManagerConfig {
            // Checking each connection with a query before use would add
            // a round trip to every request; a broken one fails its
            // query and is dropped instead.
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let mut builder = Pool::builder(manager).max_size(max_size.max(1));
    if let Some(hook) = session_hook(config) {
        builder = builder.post_create(hook);
    }
    builder
        .build()
        .map_err(|e| StoreError::Backend(format!("postgres pool: {e}")))
}

/// [`SESSION`] on each new connection, unless the URL's own `options` name
/// `jit` (the operator's choice stands).
fn session_hook(config: &tokio_postgres::Config) -> Option<Hook> {
    let own = config.get_options().unwrap_or_default();
    if own.contains("jit") {
        return None;
    }
    Some(Hook::async_fn(|client: &mut ClientWrapper, _| {
        Box::pin(async move {
            if let Err(error) = client.batch_execute(SESSION).await {
                tracing::warn!(%error, "postgres: `SET jit = off` refused; the session keeps its JIT setting");
            }
            Ok(())
        })
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic
    use super::*;

    /// The store's pool runs its sessions without JIT, and a URL that asks
    /// for JIT gets it. Needs `WINDLASS_TEST_PG` (`scripts/postgres.sh`);
    /// skipped without.
    #[tokio::test]
    async fn sessions_run_without_jit_unless_the_url_says() {
        let Ok(base) = std::env::var("WINDLASS_TEST_PG") else {
            return;
        };
        let sep = if base.contains('?') { '&' } else { '?' };
        for (url, expected) in [
            (base.clone(), "off"),
            (format!("{base}{sep}options=-c%20jit%3Don"), "on"),
        ] {
            let connect = super::super::tls::parse(&url).expect("url");
            let pool = build(&connect.config, connect.tls, 1).expect("pool");
            let client = pool.get().await.expect("connection");
            let row = client.query_one("SHOW jit", &[]).await.expect("show");
            assert_eq!(row.get::<_, String>(0), expected, "{url}");
        }
    }
}
