-- Files and vector stores (retrieval). `seq` keys give list order and
-- cheap integer joins; public ids stay unique text.
CREATE TABLE IF NOT EXISTS files (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    tenant     TEXT NOT NULL,
    filename   TEXT NOT NULL,
    purpose    TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    content    BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS files_by_tenant ON files (tenant, seq);

CREATE TABLE IF NOT EXISTS vector_stores (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,
    tenant             TEXT NOT NULL,
    name               TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    last_active_at     INTEGER NOT NULL,
    metadata           TEXT NOT NULL,
    expires_after_days INTEGER,
    -- NULL: keyword-only (no embedding model when it was created).
    embedding_model    TEXT
);
CREATE INDEX IF NOT EXISTS vector_stores_by_tenant ON vector_stores (tenant, seq);

CREATE TABLE IF NOT EXISTS vector_store_batches (
    id              TEXT PRIMARY KEY NOT NULL,
    vector_store_id TEXT NOT NULL REFERENCES vector_stores (id) ON DELETE CASCADE,
    created_at      INTEGER NOT NULL,
    cancelled       INTEGER NOT NULL DEFAULT 0
);

-- A file attached to a store; ingestion state and the claim of the worker
-- ingesting it.
CREATE TABLE IF NOT EXISTS vector_store_files (
    seq                  INTEGER PRIMARY KEY,
    vector_store_id      TEXT NOT NULL REFERENCES vector_stores (id) ON DELETE CASCADE,
    file_id              TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    batch_id             TEXT,
    created_at           INTEGER NOT NULL,
    status               TEXT NOT NULL,
    usage_bytes          INTEGER NOT NULL DEFAULT 0,
    last_error           TEXT,
    attributes           TEXT,
    max_chunk_tokens     INTEGER NOT NULL,
    chunk_overlap_tokens INTEGER NOT NULL,
    claimed_by           TEXT,
    claimed_until        INTEGER,
    UNIQUE (vector_store_id, file_id)
);
CREATE INDEX IF NOT EXISTS vector_store_files_by_file ON vector_store_files (file_id);
CREATE INDEX IF NOT EXISTS vector_store_files_by_batch ON vector_store_files (batch_id);
CREATE INDEX IF NOT EXISTS vector_store_files_pending ON vector_store_files (seq)
    WHERE status = 'in_progress';

-- Chunks of a completed attachment; `embedding` is little-endian f32 (NULL
-- in keyword-only stores).
CREATE TABLE IF NOT EXISTS vector_store_chunks (
    id         INTEGER PRIMARY KEY,
    attachment INTEGER NOT NULL REFERENCES vector_store_files (seq) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    text       TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    embedding  BLOB
);
CREATE INDEX IF NOT EXISTS vector_store_chunks_by_attachment
    ON vector_store_chunks (attachment, position);

-- BM25 over chunk text, kept in step by triggers (which also run for rows
-- removed by ON DELETE CASCADE).
CREATE VIRTUAL TABLE IF NOT EXISTS vector_store_chunks_fts USING fts5 (
    text,
    content = 'vector_store_chunks',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS vector_store_chunks_fts_insert AFTER INSERT ON vector_store_chunks
BEGIN
    INSERT INTO vector_store_chunks_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS vector_store_chunks_fts_delete AFTER DELETE ON vector_store_chunks
BEGIN
    INSERT INTO vector_store_chunks_fts (vector_store_chunks_fts, rowid, text)
    VALUES ('delete', old.id, old.text);
END;
