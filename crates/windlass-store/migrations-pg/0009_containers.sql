-- Containers of code_interpreter (and a server-run shell) and the files in
-- them (the same layout as the SQLite store's). The database is where
-- container files live, so every replica's runner and the Containers API
-- see the same files; a runner's work directory is a copy restored from
-- here. Expiry marks a container `expired` and deletes its files.
CREATE TABLE containers (
    id              TEXT PRIMARY KEY,
    tenant          TEXT NOT NULL,
    name            TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    status          TEXT NOT NULL,
    last_active_at  BIGINT,
    -- Idle minutes after last_active_at (or created_at) before expiry;
    -- NULL: never expires.
    expires_minutes BIGINT,
    memory_limit    TEXT
);

CREATE INDEX containers_by_tenant ON containers (tenant, created_at, id);
CREATE INDEX containers_running ON containers (status) WHERE status = 'running';

CREATE TABLE container_files (
    id           TEXT PRIMARY KEY,
    container_id TEXT NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    path         TEXT NOT NULL,
    bytes        BIGINT NOT NULL,
    source       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    content      BYTEA NOT NULL,
    UNIQUE (container_id, path)
);

CREATE INDEX container_files_by_container ON container_files (container_id, created_at, id);
