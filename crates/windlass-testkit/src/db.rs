//! The gateway's SQLite file, read the way an operator would: with the
//! `sqlite3` CLI (or Python's `sqlite3` module where the CLI is missing).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::gateway::Gateway;

/// Runs `sql` read-only on the gateway's database with the `sqlite3` CLI,
/// or, where it is not installed (a fresh CI machine), with Python's
/// built-in `sqlite3` module, printing rows the way the CLI does. Never
/// skips: a DB-level check that cannot run fails. Always `Some`.
pub fn sqlite(db: &Path, sql: &str) -> Option<String> {
    let out = match Command::new("sqlite3")
        .arg("-readonly")
        .arg(db)
        .arg(sql)
        .output()
    {
        Ok(out) => out,
        Err(_) => Command::new("python3")
            .arg("-c")
            .arg(PY_SQLITE)
            .arg(db)
            .arg(sql)
            .output()
            .unwrap_or_else(|e| panic!("neither sqlite3 nor python3 can run ({e}): {sql}")),
    };
    assert!(
        out.status.success(),
        "sqlite query failed on {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `sqlite3 -readonly DB SQL` in Python: rows as `a|b|c`, NULL as empty.
const PY_SQLITE: &str = "import sqlite3, sys\n\
c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)\n\
for r in c.execute(sys.argv[2]):\n    \
print('|'.join('' if v is None else str(v) for v in r))\n";

/// Number of rows in the `responses` table.
pub fn stored_response_count(gw: &Gateway) -> Option<usize> {
    sqlite(&gw.db, "SELECT count(*) FROM responses;").map(|s| {
        s.trim()
            .parse()
            .unwrap_or_else(|e| panic!("count: {e}: {s}"))
    })
}

/// Number of rows in the `items` table.
pub fn stored_item_count(gw: &Gateway) -> Option<usize> {
    sqlite(&gw.db, "SELECT count(*) FROM items;").map(|s| {
        s.trim()
            .parse()
            .unwrap_or_else(|e| panic!("count: {e}: {s}"))
    })
}

/// `(id, status, error.code)` of every stored response, oldest first.
pub fn stored_statuses(gw: &Gateway) -> Option<Vec<(String, String, String)>> {
    sqlite(
        &gw.db,
        "SELECT id, json_extract(body, '$.status'), coalesce(json_extract(body, '$.error.code'), '') \
         FROM responses ORDER BY created_at, rowid;",
    )
    .map(|s| {
        s.lines()
            .filter(|l| !l.is_empty())
            .map(|l| {
                let mut p = l.splitn(3, '|');
                (
                    p.next().unwrap_or_default().to_owned(),
                    p.next().unwrap_or_default().to_owned(),
                    p.next().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    })
}

/// Polls the DB until some response is stored with `status`; returns its
/// `(id, status, error.code)`.
pub async fn wait_db_status(
    gw: &Gateway,
    status: &str,
    timeout: Duration,
) -> Option<(String, String, String)> {
    let deadline = Instant::now() + timeout;
    loop {
        let rows = stored_statuses(gw)?;
        if let Some(r) = rows.iter().find(|r| r.1 == status) {
            return Some(r.clone());
        }
        if Instant::now() >= deadline {
            panic!("no response stored with status {status} in time; stored: {rows:?}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Asserts nothing at all was written to the database.
pub fn assert_db_empty(gw: &Gateway, what: &str) {
    if let Some(n) = stored_response_count(gw) {
        assert_eq!(n, 0, "{what}: responses were stored");
    }
    if let Some(n) = stored_item_count(gw) {
        assert_eq!(n, 0, "{what}: items were stored");
    }
}

/// Whether the store knows an item with this public id (in-process check).
pub async fn item_stored(gw: &Gateway, item_id: &str) -> bool {
    gw.state
        .engine
        .store()
        .find_item(windlass_engine::DEFAULT_TENANT, item_id)
        .await
        .expect("find_item")
        .is_some()
}
