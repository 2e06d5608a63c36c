-- Governance counters shared by every replica (rate limits per key and per
-- key and tool, per-response budgets): one row per counter, a level refilled
-- at `rate` per second up to its capacity (rate 0: a total). `expires_at` is
-- when the row no longer matters (full again, or an idle total forgotten):
-- a row past it counts as full and may be deleted. Times are seconds since
-- the epoch on the database's clock, so replicas with skewed clocks agree.
CREATE TABLE governance_counters (
    key        TEXT PRIMARY KEY,
    level      DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX governance_counters_expiry ON governance_counters (expires_at);

-- Takes amounts[i] from counter keys[i] (capacity caps[i], refill rates[i]
-- per second, idles[i] seconds kept when rate is 0), all or nothing, in one
-- call: one round trip per check. Returns (0, 0) when every amount was
-- taken, else the 1-based index of the first that did not fit and what it
-- had left (nothing is changed). Keys are distinct. Rows are created full
-- and locked in key order, so concurrent replicas never deadlock.
CREATE FUNCTION windlass_counter_take(
    keys TEXT[], amounts FLOAT8[], caps FLOAT8[], rates FLOAT8[], idles FLOAT8[]
) RETURNS TABLE (refused INT, remaining FLOAT8)
LANGUAGE plpgsql AS $$
DECLARE
    n INT := coalesce(array_length(keys, 1), 0);
    now_s FLOAT8;
    levels FLOAT8[] := '{}';
    lv FLOAT8;
    left_over FLOAT8;
BEGIN
    INSERT INTO governance_counters (key, level, updated_at, expires_at)
    SELECT k, 0, 0, 0 FROM unnest(keys) AS t (k) ORDER BY k
    ON CONFLICT DO NOTHING;
    PERFORM 1 FROM governance_counters WHERE key = ANY (keys) ORDER BY key FOR UPDATE;
    -- Read after the locks: the time the decision is made at.
    now_s := extract(epoch FROM clock_timestamp());
    FOR i IN 1..n LOOP
        SELECT CASE WHEN c.expires_at <= now_s THEN caps[i]
                    ELSE least(caps[i], c.level + greatest(now_s - c.updated_at, 0) * rates[i])
               END
          INTO lv FROM governance_counters c WHERE c.key = keys[i];
        IF lv < amounts[i] THEN
            refused := i;
            remaining := lv;
            RETURN NEXT;
            RETURN;
        END IF;
        levels[i] := lv;
    END LOOP;
    FOR i IN 1..n LOOP
        left_over := levels[i] - amounts[i];
        UPDATE governance_counters SET
            level = left_over,
            updated_at = now_s,
            expires_at = CASE WHEN rates[i] > 0
                              THEN now_s + greatest(caps[i] - left_over, 0) / rates[i]
                              ELSE now_s + idles[i] END
         WHERE key = keys[i];
    END LOOP;
    -- Now and then, drop a few rows that no longer matter.
    IF random() < 0.01 THEN
        DELETE FROM governance_counters WHERE key IN (
            SELECT key FROM governance_counters WHERE expires_at < now_s
             ORDER BY expires_at LIMIT 64 FOR UPDATE SKIP LOCKED);
    END IF;
    refused := 0;
    remaining := 0;
    RETURN NEXT;
END
$$;
