-- Agent profiles (issue 15): one row per agent, the profile as agent_data's JSON so the
-- profile can grow fields without a migration each time; the name is the key other profiles
-- (delegates) and runs refer to.
CREATE TABLE IF NOT EXISTS agent_profiles (
    name        TEXT PRIMARY KEY,
    profile     TEXT NOT NULL,
    created_ms  INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL
) STRICT;
