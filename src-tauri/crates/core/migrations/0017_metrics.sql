-- Per-server and per-tool metrics (issue 16, point 3): one raw sample per request that went
-- through the seam, for recent time, folded into hourly rollups as it ages (store/metrics.rs
-- holds the limits). No foreign key to `servers`: a removed server's history stays until it
-- ages out, and a sample written just after its server was removed must not fail the batch.
CREATE TABLE IF NOT EXISTS metric_samples (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    -- When the request ended, in milliseconds since the Unix epoch.
    at_ms        INTEGER NOT NULL,
    server       TEXT NOT NULL,
    -- tool, resource or prompt.
    kind         TEXT NOT NULL,
    -- The tool or prompt name; resource reads are one name per server (URIs may name private
    -- things and are unbounded in number).
    name         TEXT NOT NULL,
    -- ok, tool_error, rpc_error, protocol, transport, timeout, cancelled, denied, other.
    outcome      TEXT NOT NULL,
    duration_us  INTEGER NOT NULL,
    bytes_in     INTEGER NOT NULL,
    bytes_out    INTEGER NOT NULL,
    -- Estimated model tokens of the result (characters / 4); not named "tokens" so that no
    -- column reads like it holds a secret (store schema test).
    est_units    INTEGER NOT NULL
) STRICT;

CREATE INDEX IF NOT EXISTS metric_samples_at ON metric_samples(at_ms);

CREATE TABLE IF NOT EXISTS metric_rollups (
    -- The hour's start, in milliseconds since the Unix epoch.
    hour_ms      INTEGER NOT NULL,
    server       TEXT NOT NULL,
    kind         TEXT NOT NULL,
    name         TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    calls        INTEGER NOT NULL,
    duration_us  INTEGER NOT NULL,
    max_us       INTEGER NOT NULL,
    bytes_in     INTEGER NOT NULL,
    bytes_out    INTEGER NOT NULL,
    est_units    INTEGER NOT NULL,
    -- JSON array of counts per latency bucket (store/metrics.rs `BUCKETS_MS`, then overflow).
    histogram    TEXT NOT NULL,
    PRIMARY KEY (hour_ms, server, kind, name, outcome)
) STRICT;

-- The last sample id exported over OTLP: claimed with a compare-and-swap, so two processes on
-- one database never export the same samples twice.
CREATE TABLE IF NOT EXISTS metric_export (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    last_sample  INTEGER NOT NULL
) STRICT;
