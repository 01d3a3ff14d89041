-- Tool pipelines (issue 15, point 6): named, versioned definitions, and every run with each of
-- its steps, so a run can be shown, audited beside the audit log, and replayed with its inputs.
-- A definition is never changed in place: adding a different one under a name stores the next
-- version, so a run always names exactly what it ran.
CREATE TABLE IF NOT EXISTS pipelines (
    name        TEXT NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 1),
    -- The definition as JSON (pipeline_data::Pipeline).
    definition  TEXT NOT NULL,
    created_ms  INTEGER NOT NULL,
    PRIMARY KEY (name, version)
) STRICT;

CREATE TABLE IF NOT EXISTS pipeline_runs (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    version     INTEGER NOT NULL,
    -- The inputs as given, a JSON object.
    inputs      TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    error       TEXT,
    started_ms  INTEGER NOT NULL,
    ended_ms    INTEGER,
    -- The run this one replays, if it is a replay.
    replay_of   TEXT,
    FOREIGN KEY (name, version) REFERENCES pipelines(name, version) ON DELETE CASCADE
) STRICT;

CREATE INDEX IF NOT EXISTS pipeline_runs_by_name ON pipeline_runs(name, started_ms);

CREATE TABLE IF NOT EXISTS pipeline_steps (
    run_id      TEXT NOT NULL REFERENCES pipeline_runs(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    step_id     TEXT NOT NULL,
    tool        TEXT NOT NULL,
    -- The arguments sent, a JSON object.
    arguments   TEXT NOT NULL,
    -- The tool's result (catalog::ToolResult) as JSON, once it answered.
    result      TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    error       TEXT,
    started_ms  INTEGER NOT NULL,
    ended_ms    INTEGER,
    PRIMARY KEY (run_id, idx)
) STRICT;
