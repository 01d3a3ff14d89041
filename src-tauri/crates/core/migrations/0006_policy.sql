-- The approval policy as data (issue 5): user rules and grants in order, the calls each
-- limited rule let through (for "at most N per hour / per conversation"), and the tags a
-- person gives servers (trusted: its annotations may relax friction; private-data,
-- untrusted-content, external: the legs of the lethal-trifecta guard).
CREATE TABLE policy_rules (
    id          TEXT PRIMARY KEY NOT NULL,
    position    INTEGER NOT NULL,
    -- The rule as JSON (approval::rules::Rule); grants carry their source in it.
    rule_json   TEXT NOT NULL CHECK (json_valid(rule_json)),
    is_grant    INTEGER NOT NULL DEFAULT 0 CHECK (is_grant IN (0, 1)),
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE rule_hits (
    id            INTEGER PRIMARY KEY,
    rule_id       TEXT NOT NULL,
    -- NULL for calls a person ran by hand.
    conversation  TEXT,
    at            INTEGER NOT NULL
) STRICT;

CREATE INDEX rule_hits_by_rule ON rule_hits (rule_id, at);

CREATE TABLE server_tags (
    server_id  TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
    tag        TEXT NOT NULL
               CHECK (tag IN ('trusted', 'private-data', 'untrusted-content', 'external')),
    PRIMARY KEY (server_id, tag)
) STRICT;
