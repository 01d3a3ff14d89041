-- Servers start when they are needed (issue 14): the person may keep one "always on"; the tools a
-- server offered when it last ran are kept so the catalog can show them, marked as such, until
-- it starts again. Both rows go with their server.
CREATE TABLE IF NOT EXISTS server_run_prefs (
    server_id  TEXT PRIMARY KEY REFERENCES servers(id) ON DELETE CASCADE,
    always_on  INTEGER NOT NULL CHECK (always_on IN (0, 1))
) STRICT;

CREATE TABLE IF NOT EXISTS server_last_tools (
    server_id   TEXT PRIMARY KEY REFERENCES servers(id) ON DELETE CASCADE,
    -- JSON array of the tool definitions as the server listed them.
    tools       TEXT NOT NULL,
    seen_at_ms  INTEGER NOT NULL
) STRICT;
