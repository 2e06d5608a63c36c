-- Prompt templates per tenant, with numbered versions (the same layout as
-- the SQLite store's). Adding a version bumps `latest` on the prompt's row,
-- which serializes concurrent additions to one prompt.
CREATE TABLE prompts (
    id         TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    name       TEXT,
    metadata   TEXT NOT NULL,
    latest     BIGINT NOT NULL
);

CREATE INDEX prompts_by_tenant ON prompts (tenant, created_at);

CREATE TABLE prompt_versions (
    prompt_id  TEXT NOT NULL REFERENCES prompts (id) ON DELETE CASCADE,
    version    BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    template   TEXT NOT NULL,
    PRIMARY KEY (prompt_id, version)
);
