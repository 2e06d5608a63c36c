-- A response's execution trace is kept in its own row: a save then writes
-- the response table's pages only, not a second table and its index (a
-- fifth of the WAL frames of a single-turn save). Traces saved before stay
-- in response_traces, are read from there, and go with their response.
ALTER TABLE responses ADD COLUMN trace TEXT;
