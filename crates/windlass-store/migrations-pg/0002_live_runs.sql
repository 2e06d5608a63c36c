-- Responses that have not ended (queued or in progress), with the replica
-- running each and its lease (milliseconds since the epoch); the final save
-- of a response deletes its row in the same statement. `body` is the
-- resource JSON as it stands; `resume` what the server needs to start the
-- run again (NULL: not resumable).
CREATE TABLE live_runs (
    id          TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    replica     TEXT NOT NULL,
    lease_until BIGINT NOT NULL,
    body        TEXT NOT NULL,
    resume      TEXT
);

CREATE INDEX live_runs_by_lease ON live_runs (lease_until);
CREATE INDEX live_runs_by_replica ON live_runs (replica);

-- Stream events of resumable responses, deleted with the response.
CREATE TABLE response_events (
    response_id     TEXT NOT NULL,
    sequence_number BIGINT NOT NULL,
    tenant          TEXT NOT NULL,
    body            TEXT NOT NULL,
    PRIMARY KEY (response_id, sequence_number)
);
