-- A response's history is its predecessor's whole transcript. Instead of
-- copying the predecessor's references into section 0 on every save (2 rows
-- per history item, O(N^2) rows over an N-turn conversation), a response
-- names the response its history continues (`history_parent`) and context
-- loads walk the chain. Section 0 keeps history rows only for histories that
-- no longer have a parent: rows saved before this migration, and rows a
-- successor inherited when its predecessor was deleted.
ALTER TABLE responses ADD COLUMN history_parent TEXT;

-- Deleting a response finds the responses continuing from it.
CREATE INDEX responses_by_history_parent ON responses (history_parent)
    WHERE history_parent IS NOT NULL;
