-- When a conversation was last used (created, appended to, its metadata
-- changed), in Unix seconds: retention deletes conversations idle longer
-- than its window. Existing conversations start from their creation.
ALTER TABLE conversations ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE conversations SET updated_at = created_at;
CREATE INDEX IF NOT EXISTS conversations_by_activity ON conversations (updated_at);
