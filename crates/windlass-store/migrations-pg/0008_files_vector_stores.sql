-- Files and vector stores (retrieval), the same layout as the SQLite
-- store's. `seq` keys give list order and integer joins. Embeddings are
-- `real[]` on every server: with pgvector (detected at start, see
-- src/postgres/pgvector.rs) similarity is computed in the database by
-- casting them to `vector`; without it, in the gateway.
CREATE TABLE files (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    tenant     TEXT NOT NULL,
    filename   TEXT NOT NULL,
    purpose    TEXT NOT NULL,
    bytes      BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    content    BYTEA NOT NULL
);
CREATE INDEX files_by_tenant ON files (tenant, seq);

CREATE TABLE vector_stores (
    seq                BIGSERIAL PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,
    tenant             TEXT NOT NULL,
    name               TEXT NOT NULL,
    created_at         BIGINT NOT NULL,
    last_active_at     BIGINT NOT NULL,
    metadata           TEXT NOT NULL,
    expires_after_days BIGINT,
    embedding_model    TEXT
);
CREATE INDEX vector_stores_by_tenant ON vector_stores (tenant, seq);

CREATE TABLE vector_store_batches (
    id              TEXT PRIMARY KEY,
    vector_store_id TEXT NOT NULL REFERENCES vector_stores (id) ON DELETE CASCADE,
    created_at      BIGINT NOT NULL,
    cancelled       BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE vector_store_files (
    seq                  BIGSERIAL PRIMARY KEY,
    vector_store_id      TEXT NOT NULL REFERENCES vector_stores (id) ON DELETE CASCADE,
    file_id              TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    batch_id             TEXT,
    created_at           BIGINT NOT NULL,
    status               TEXT NOT NULL,
    usage_bytes          BIGINT NOT NULL DEFAULT 0,
    last_error           TEXT,
    attributes           TEXT,
    max_chunk_tokens     BIGINT NOT NULL,
    chunk_overlap_tokens BIGINT NOT NULL,
    claimed_by           TEXT,
    claimed_until        BIGINT,
    UNIQUE (vector_store_id, file_id)
);
CREATE INDEX vector_store_files_by_file ON vector_store_files (file_id);
CREATE INDEX vector_store_files_by_batch ON vector_store_files (batch_id);
CREATE INDEX vector_store_files_pending ON vector_store_files (seq) WHERE status = 'in_progress';

CREATE TABLE vector_store_chunks (
    id         BIGSERIAL PRIMARY KEY,
    attachment BIGINT NOT NULL REFERENCES vector_store_files (seq) ON DELETE CASCADE,
    position   BIGINT NOT NULL,
    text       TEXT NOT NULL,
    tokens     BIGINT NOT NULL,
    embedding  REAL[],
    tsv        TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE INDEX vector_store_chunks_by_attachment ON vector_store_chunks (attachment, position);
CREATE INDEX vector_store_chunks_tsv ON vector_store_chunks USING GIN (tsv);
