-- A vector store's `description` (given at creation, returned on every
-- read), and when the expiry sweep found it expired: from then on it stays
-- `expired` whatever its policy or activity, and holds no chunks.
ALTER TABLE vector_stores ADD COLUMN description TEXT;
ALTER TABLE vector_stores ADD COLUMN expired_at INTEGER;
-- The sweep's scan: stores with a policy that have not expired yet.
CREATE INDEX IF NOT EXISTS vector_stores_expiring ON vector_stores (last_active_at)
    WHERE expires_after_days IS NOT NULL AND expired_at IS NULL;
