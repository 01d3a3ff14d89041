-- Configured model providers. The API key is never here: it lives in the OS keyring under
-- the secret `provider.<name>` (SE-01).
CREATE TABLE providers (
    name TEXT PRIMARY KEY NOT NULL,
    profile TEXT NOT NULL,
    base_url TEXT,
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
