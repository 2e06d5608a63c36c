//! The statements a save runs on the writer connection (`group.rs`), in
//! one transaction: the response row with its trace, then per item its
//! row and its reference, then the end of its live run.
//!
//! Plain prepared statements, not one `INSERT` into a view with an
//! `INSTEAD OF` trigger as before: that single statement paid off while
//! every statement was a round trip to a connection thread. On the writer
//! connection a statement is a function call, and the trigger parsed the
//! items from a JSON array twice (`json_each`), materialised its own
//! `SELECT` and took the item bodies escaped inside that array (an escape
//! when encoding, an unescape in SQLite). Measured at 16 clients (wrk, 20 ms
//! upstream, two items and a trace per save): the save thread's CPU went
//! from 97-103 to 76-81 µs per save, the gateway's from 363-383 to 315-319
//! µs per stored request (BENCHMARKS.md, session 7).

/// The response row, with its trace. It names its predecessor in
/// `history_parent` only if that response exists and has the same tenant,
/// so an unknown, deleted or foreign predecessor means an empty history;
/// the history itself is not copied (`load_context` walks the chain).
pub(super) const INSERT_RESPONSE: &str = "\
INSERT INTO responses (id, created_at, previous_response_id, body, history_parent, tenant, trace) \
VALUES (?1, ?2, ?3, ?4, \
        (SELECT p.id FROM responses p WHERE p.id = ?3 AND p.tenant = ?5), ?5, ?6)";

/// One item. SQLite assigns its key (one above the highest, so the highest
/// key with a given public id is the most recently stored one).
pub(super) const INSERT_ITEM: &str =
    "INSERT INTO items (public_id, body, tenant) VALUES (?1, ?2, ?3)";

/// The response's reference to the item just inserted.
pub(super) const INSERT_REFERENCE: &str = "\
INSERT INTO response_items (response_id, section, position, item_key) VALUES (?1, ?2, ?3, ?4)";

/// A background response that ends stored is no longer live.
pub(super) const END_LIVE_RUN: &str = "DELETE FROM live_runs WHERE id = ?1";
