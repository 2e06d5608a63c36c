-- Prompt templates per tenant, with numbered versions; `latest` is the
-- newest version's number (the next one is latest + 1).
CREATE TABLE IF NOT EXISTS prompts (
    id         TEXT PRIMARY KEY NOT NULL,
    tenant     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    name       TEXT,
    metadata   TEXT NOT NULL,
    latest     INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS prompts_by_tenant ON prompts (tenant, created_at);

CREATE TABLE IF NOT EXISTS prompt_versions (
    prompt_id  TEXT NOT NULL REFERENCES prompts (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    -- The template (instructions and input items) as JSON.
    template   TEXT NOT NULL,
    PRIMARY KEY (prompt_id, version)
) WITHOUT ROWID;
