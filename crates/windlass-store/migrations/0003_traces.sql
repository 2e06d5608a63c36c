-- The execution trace of a response (a step per model turn, an action per
-- tool call) as JSON, deleted with the response.
-- IF NOT EXISTS: safe to re-run on a file whose version bookkeeping was reset.
CREATE TABLE IF NOT EXISTS response_traces (
    response_id TEXT PRIMARY KEY NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
    body        TEXT NOT NULL
);
