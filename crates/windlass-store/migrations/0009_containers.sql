-- Containers of code_interpreter (and a server-run shell) and the files in
-- them. The database is where container files live: a runner's work
-- directory is a copy restored from here, so every process sees the same
-- files. Expiry marks a container `expired` and deletes its files.
CREATE TABLE IF NOT EXISTS containers (
    id              TEXT PRIMARY KEY NOT NULL,
    tenant          TEXT NOT NULL,
    name            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    status          TEXT NOT NULL,
    last_active_at  INTEGER,
    -- Idle minutes after last_active_at (or created_at) before expiry;
    -- NULL: never expires.
    expires_minutes INTEGER,
    memory_limit    TEXT
);

CREATE INDEX IF NOT EXISTS containers_by_tenant ON containers (tenant, created_at, id);
CREATE INDEX IF NOT EXISTS containers_running ON containers (status) WHERE status = 'running';

CREATE TABLE IF NOT EXISTS container_files (
    id           TEXT PRIMARY KEY NOT NULL,
    container_id TEXT NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    path         TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    source       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    content      BLOB NOT NULL,
    UNIQUE (container_id, path)
);

CREATE INDEX IF NOT EXISTS container_files_by_container ON container_files (container_id, created_at, id);
