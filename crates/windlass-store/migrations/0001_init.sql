-- Items are stored once and shared by reference: a continued conversation
-- points at its predecessor's item rows instead of copying them.
CREATE TABLE items (
    -- Internal key; monotonic while rows exist, so the highest key with a
    -- given public id is the most recently stored one.
    key       INTEGER PRIMARY KEY,
    -- The item's public id. Not unique: the same item may be re-sent.
    public_id TEXT,
    body      TEXT NOT NULL
);

CREATE INDEX items_by_public_id ON items (public_id);

CREATE TABLE responses (
    id                   TEXT PRIMARY KEY NOT NULL,
    created_at           INTEGER NOT NULL,
    previous_response_id TEXT,
    -- The resource JSON with `output` emptied; the output lives in items.
    body                 TEXT NOT NULL
);

-- The ordered item references of each response. section: 0 = history (the
-- context it continued from), 1 = its own input, 2 = its output. The primary
-- key order is the transcript order, so a context load is one range scan.
CREATE TABLE response_items (
    response_id TEXT NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
    section     INTEGER NOT NULL CHECK (section IN (0, 1, 2)),
    position    INTEGER NOT NULL,
    -- Deferred so a delete can garbage-collect orphaned items before it
    -- removes the references that pointed at them, in one transaction.
    item_key    INTEGER NOT NULL REFERENCES items (key) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (response_id, section, position)
) WITHOUT ROWID;

-- Garbage collection asks "does anyone else still reference this item?".
CREATE INDEX response_items_by_item ON response_items (item_key);
