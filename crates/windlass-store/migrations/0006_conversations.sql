-- Conversations: durable item lists responses read as history and append
-- their input and output to. Items are kept per conversation, in order
-- (`position` grows; deleting an item leaves a gap).
CREATE TABLE IF NOT EXISTS conversations (
    id         TEXT PRIMARY KEY NOT NULL,
    tenant     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    metadata   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS conversation_items (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    item_id         TEXT,
    body            TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS conversation_items_by_id ON conversation_items (conversation_id, item_id);
