-- Each server's surface as the person accepted it (TD-02): pinned on first use, diffed on
-- every later catalog. `server_pins` says a pin exists at all (so an empty surface that was
-- pinned differs from a server never seen); `pin_items` holds one row per tool, prompt,
-- resource template and the instructions (name ''), with the SHA-256 of its canonical JSON and
-- that JSON itself, for showing a before/after diff.
CREATE TABLE server_pins (
    server_id   TEXT PRIMARY KEY NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
    pinned_at   INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE pin_items (
    server_id    TEXT NOT NULL REFERENCES server_pins(server_id) ON DELETE CASCADE,
    kind         TEXT NOT NULL
                 CHECK (kind IN ('tool', 'prompt', 'resource_template', 'instructions')),
    name         TEXT NOT NULL,
    digest       TEXT NOT NULL,
    canonical    TEXT NOT NULL CHECK (json_valid(canonical)),
    approved_at  INTEGER NOT NULL,
    PRIMARY KEY (server_id, kind, name)
) STRICT;

-- What the last catalog seen brought that differs from the pin: new or changed items waiting
-- for review, with the definition that was seen. A record for showing the review while the
-- server is not running; what is enforced is always recomputed from the pin and the live
-- catalog, so a stale row here can never let anything through.
CREATE TABLE pin_pending (
    server_id      TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
    kind           TEXT NOT NULL
                   CHECK (kind IN ('tool', 'prompt', 'resource_template', 'instructions')),
    name           TEXT NOT NULL,
    reason         TEXT NOT NULL CHECK (reason IN ('new', 'changed')),
    digest         TEXT NOT NULL,
    canonical      TEXT NOT NULL CHECK (json_valid(canonical)),
    first_seen_at  INTEGER NOT NULL,
    PRIMARY KEY (server_id, kind, name)
) STRICT;
