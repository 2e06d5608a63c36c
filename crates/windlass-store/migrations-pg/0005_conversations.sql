-- Conversations: durable item lists responses read as history and append
-- their input and output to (the same layout as the SQLite store's).
-- `next_position` is where the next appended item goes: an append reserves
-- its positions by bumping it, which serializes concurrent appends to one
-- conversation on its row without a separate lock. Deleting an item leaves
-- a gap.
CREATE TABLE conversations (
    id            TEXT PRIMARY KEY,
    tenant        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    metadata      TEXT NOT NULL,
    next_position BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE conversation_items (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    position        BIGINT NOT NULL,
    item_id         TEXT,
    -- The item JSON exactly as encoded, never queried into.
    body            TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
);

CREATE INDEX conversation_items_by_id ON conversation_items (conversation_id, item_id);
