-- Configured MCP servers. The spec is our own validated ServerSpec as JSON; it holds secret
-- references (names), never secret values.
CREATE TABLE servers (
    id          TEXT PRIMARY KEY NOT NULL,
    spec_json   TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

-- The launch plan a user approved, bound to its fingerprint (SP-01, SP-03). A row exists only
-- while the approval stands; a changed plan no longer matches the fingerprint.
CREATE TABLE server_trust (
    server_id    TEXT PRIMARY KEY NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
    fingerprint  TEXT NOT NULL,
    plan_json    TEXT NOT NULL,
    approved_at  INTEGER NOT NULL
) STRICT;

-- Tools the user switched off, per server. Absent means enabled.
CREATE TABLE tool_prefs (
    server_id  TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
    tool       TEXT NOT NULL,
    enabled    INTEGER NOT NULL,
    PRIMARY KEY (server_id, tool)
) STRICT;
