-- Request and token budgets shared by every replica: one token bucket per
-- subject ("tenant:acme", "key:alice") and kind (0 = requests, 1 = tokens).
-- `level` may go negative (token debt); `updated_at` is when it was last
-- refilled, in seconds since the epoch (the database's clock, so replicas
-- with skewed clocks agree).
CREATE TABLE quota_buckets (
    subject    TEXT NOT NULL,
    kind       SMALLINT NOT NULL CHECK (kind IN (0, 1)),
    level      DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (subject, kind)
);
