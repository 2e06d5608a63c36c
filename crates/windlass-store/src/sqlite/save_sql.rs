//! The statements behind a save: the temporary view and trigger each
//! writer connection creates (`conn.rs`), and the insert into that view a
//! save runs (`write.rs`, `group.rs`).

/// The view and trigger behind [`SAVE`], in the connection's `temp` schema
/// (they are how this code writes, not part of the stored data).
///
/// The response row names its predecessor in `history_parent` only if that
/// response exists and has the same tenant, so an unknown, deleted or
/// foreign predecessor means an empty history; the history itself is not copied (`load_context` walks the
/// chain).
///
/// Item keys are assigned here rather than by SQLite so the references can
/// be written without reading keys back: item `n` (0-based) of the save gets
/// `MAX(key) + 1 + n`. The references, written first, compute the same keys
/// from the same `MAX(key)` (their foreign key is checked at commit), and
/// the single writer means nothing inserts items in between.
pub(super) const SAVE_TRIGGER: &str = "\
CREATE TEMP VIEW IF NOT EXISTS save_response \
    (id, created_at, previous_response_id, body, items, tenant, trace) \
    AS SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL; \
CREATE TEMP TRIGGER IF NOT EXISTS save_response_insert INSTEAD OF INSERT ON save_response \
BEGIN \
    INSERT INTO responses (id, created_at, previous_response_id, body, history_parent, tenant) \
        VALUES (NEW.id, NEW.created_at, NEW.previous_response_id, NEW.body, \
                (SELECT p.id FROM responses p \
                 WHERE p.id = NEW.previous_response_id AND p.tenant = NEW.tenant), \
                NEW.tenant); \
    INSERT INTO response_items (response_id, section, position, item_key) \
        SELECT NEW.id, j.value ->> 0, j.value ->> 1, \
               (SELECT IFNULL(MAX(i.key), 0) FROM items i) + 1 + j.key \
        FROM json_each(NEW.items) j; \
    INSERT INTO items (key, public_id, body, tenant) \
        SELECT (SELECT IFNULL(MAX(i.key), 0) FROM items i) + 1 + j.key, \
               j.value ->> 2, j.value ->> 3, NEW.tenant \
        FROM json_each(NEW.items) j; \
    DELETE FROM live_runs WHERE id = NEW.id; \
    INSERT OR REPLACE INTO response_traces (response_id, body) \
        SELECT NEW.id, NEW.trace WHERE NEW.trace IS NOT NULL; \
END;";

/// The save statement: one row of the `save_response` view.
pub(super) const SAVE: &str = "INSERT INTO save_response \
                    (id, created_at, previous_response_id, body, items, tenant, trace) \
                    VALUES (?, ?, ?, ?, ?, ?, ?)";
