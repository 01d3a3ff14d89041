-- The audit log learns one more actor: `app:<server> <ui:// uri>`, an MCP App acting from its
-- frame (AP-10), so the log names the app rather than the person or the model.
--
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt as in 0011: rows are
-- copied unchanged (ids, hashes and all, so the chain still verifies), the highest id ever
-- issued is carried over, and dropping the old table drops its triggers first.
CREATE TABLE audit_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at            INTEGER NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('proposed', 'decided', 'edited', 'started',
                  'finished', 'elicitation', 'sampling', 'grant', 'policy', 'pin', 'config')),
    server        TEXT,
    tool          TEXT,
    conversation  TEXT,
    call_ref      TEXT,
    actor         TEXT NOT NULL CHECK (actor IN ('user', 'model', 'system', 'policy')
                  OR actor GLOB 'policy:?*' OR actor GLOB 'grant:?*' OR actor GLOB 'model:?*'
                  OR actor GLOB 'app:?*'),
    detail_json   TEXT NOT NULL CHECK (json_valid(detail_json)),
    prev_hash     TEXT NOT NULL CHECK (length(prev_hash) = 64),
    hash          TEXT NOT NULL CHECK (length(hash) = 64)
) STRICT;

INSERT INTO audit_new (id, at, kind, server, tool, conversation, call_ref, actor, detail_json,
                       prev_hash, hash)
SELECT id, at, kind, server, tool, conversation, call_ref, actor, detail_json, prev_hash, hash
FROM audit ORDER BY id;

-- The new table's sequence starts where the old one's was (it may be past the last row).
INSERT INTO sqlite_sequence (name, seq)
SELECT 'audit_new', seq FROM sqlite_sequence WHERE name = 'audit'
  AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'audit_new');
UPDATE sqlite_sequence
SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'audit'), 0))
WHERE name = 'audit_new';

DROP TABLE audit;
ALTER TABLE audit_new RENAME TO audit;

CREATE INDEX audit_by_call ON audit (call_ref) WHERE call_ref IS NOT NULL;

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
