-- Responses that have not ended (queued or in progress), with the replica
-- running each and its lease; the final save of a response deletes its row
-- in the same statement. `body` is the resource JSON as it stands; `resume`
-- what the server needs to start the run again (NULL: not resumable).
CREATE TABLE IF NOT EXISTS live_runs (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    replica     TEXT NOT NULL,
    lease_until INTEGER NOT NULL,
    body        TEXT NOT NULL,
    resume      TEXT
);

CREATE INDEX IF NOT EXISTS live_runs_by_lease ON live_runs (lease_until);
CREATE INDEX IF NOT EXISTS live_runs_by_replica ON live_runs (replica);

-- Stream events of resumable responses, deleted with the response.
CREATE TABLE IF NOT EXISTS response_events (
    response_id     TEXT NOT NULL,
    sequence_number INTEGER NOT NULL,
    tenant          TEXT NOT NULL,
    body            TEXT NOT NULL,
    PRIMARY KEY (response_id, sequence_number)
) WITHOUT ROWID;
