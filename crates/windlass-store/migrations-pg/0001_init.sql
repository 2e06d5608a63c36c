-- The Postgres schema: the same layout as the SQLite store's (items stored
-- once and shared by reference, a response's history named by its
-- `history_parent`), in one migration.

-- Keys come from the sequence; a higher key is a more recently stored item.
CREATE TABLE items (
    key       BIGSERIAL PRIMARY KEY,
    -- The item's public id. Not unique: the same item may be re-sent.
    public_id TEXT,
    -- The item JSON exactly as encoded (TEXT, not JSONB: stored and
    -- returned byte for byte, never queried into).
    body      TEXT NOT NULL
);

CREATE INDEX items_by_public_id ON items (public_id, key DESC);

CREATE TABLE responses (
    id                   TEXT PRIMARY KEY,
    created_at           BIGINT NOT NULL,
    previous_response_id TEXT,
    -- The response this one's history continues; NULL when none (or when
    -- the history was inherited as section-0 rows on a delete).
    history_parent       TEXT,
    -- The resource JSON with `output` emptied; the output lives in items.
    body                 TEXT NOT NULL
);

CREATE INDEX responses_by_history_parent ON responses (history_parent)
    WHERE history_parent IS NOT NULL;

-- section: 0 = inherited history, 1 = the response's own input, 2 = output.
CREATE TABLE response_items (
    response_id TEXT NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
    section     SMALLINT NOT NULL CHECK (section IN (0, 1, 2)),
    position    INTEGER NOT NULL,
    -- Deferred so a delete can collect orphaned items before it removes the
    -- references that pointed at them, in one transaction.
    item_key    BIGINT NOT NULL REFERENCES items (key) DEFERRABLE INITIALLY DEFERRED,
    PRIMARY KEY (response_id, section, position)
);

CREATE INDEX response_items_by_item ON response_items (item_key);

CREATE TABLE response_traces (
    response_id TEXT PRIMARY KEY REFERENCES responses (id) ON DELETE CASCADE,
    body        TEXT NOT NULL
);
