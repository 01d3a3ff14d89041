-- What a person lets each server see and how its results reach a model.
--
-- `server_roots`: the folders a server may see (MCP roots), in the order the person listed them.
-- A server is told of a change with notifications/roots/list_changed.
-- `server_review`: whether a tool result of the server is held for the person before a model
-- reads it (AP-05). No row means the default: held for servers tagged untrusted-content and for
-- tools that say they reach the open world.
CREATE TABLE server_roots (
    server_id  TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
    uri        TEXT NOT NULL CHECK (uri LIKE 'file://%'),
    name       TEXT,
    position   INTEGER NOT NULL,
    PRIMARY KEY (server_id, uri)
) STRICT;

CREATE TABLE server_review (
    server_id  TEXT PRIMARY KEY NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
    results    TEXT NOT NULL CHECK (results IN ('always', 'never'))
) STRICT;
