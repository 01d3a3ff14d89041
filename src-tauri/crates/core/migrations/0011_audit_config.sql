-- The audit log learns one more kind of entry: `config`, a change to what governs servers
-- (trust, tags, result review, tool switches, roots, servers added or removed, imports,
-- providers, secrets by name) (AP-09).
--
-- SQLite cannot change a CHECK constraint in place, so the table is rebuilt: rows are copied
-- unchanged (ids, hashes and all, so the chain still verifies), and the highest id ever issued
-- is carried over, so a tail cut before this migration is still seen as a gap. Dropping the old
-- table drops its triggers first, so the append-only triggers do not fire on the copy.
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
                  OR actor GLOB 'policy:?*' OR actor GLOB 'grant:?*' OR actor GLOB 'model:?*'),
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
