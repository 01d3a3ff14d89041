-- Shared state of one run (issue 15, point 3): what agents on different providers write for
-- each other, scoped to the root run of a delegation tree. Every write of a key is a new
-- version (history is kept, reads take the newest); notes are an append-only log. Values are
-- JSON text; `written_by` is an agent name or "(person)". Limits are the store's
-- (store/run_state.rs). Column names avoid `key` and `auth`: schema tests refuse names that
-- look like they hold secrets.
CREATE TABLE IF NOT EXISTS run_state (
    scope       TEXT NOT NULL,
    entry       TEXT NOT NULL,
    version     INTEGER NOT NULL,
    value       TEXT NOT NULL,
    written_by  TEXT NOT NULL,
    written_ms  INTEGER NOT NULL,
    PRIMARY KEY (scope, entry, version)
) STRICT;

CREATE TABLE IF NOT EXISTS run_notes (
    scope       TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    written_by  TEXT NOT NULL,
    text        TEXT NOT NULL,
    written_ms  INTEGER NOT NULL,
    PRIMARY KEY (scope, seq)
) STRICT;
