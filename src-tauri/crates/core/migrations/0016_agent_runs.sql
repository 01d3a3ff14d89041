-- The run tree of agents (issue 15, point 4): one row per agent working on a task, with the
-- node that delegated to it (`parent`, NULL for the root), the run whose state the tree shares,
-- the conversation its calls belong to, its provider and model, and what it spent. A row is
-- written when the agent starts (status `running`) and finished when its turn ends; a row still
-- `running` after a restart was cut off (the app marks it). Usage columns are named usage_* (no
-- column may look like it holds a credential: store/conversations/tests/schema.rs).
CREATE TABLE IF NOT EXISTS agent_runs (
    node          TEXT PRIMARY KEY,
    run           TEXT NOT NULL,
    parent        TEXT,
    conversation  TEXT NOT NULL,
    agent         TEXT NOT NULL,
    task          TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    status        TEXT NOT NULL,
    reason        TEXT,
    usage_input   INTEGER NOT NULL DEFAULT 0,
    usage_output  INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL,
    tool_calls    INTEGER NOT NULL DEFAULT 0,
    started_ms    INTEGER NOT NULL,
    ended_ms      INTEGER
) STRICT;

CREATE INDEX IF NOT EXISTS agent_runs_by_run ON agent_runs (run, started_ms);
