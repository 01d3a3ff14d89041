-- The audit log (OB-01): every proposed tool call, decision, edit, start, result, elicitation
-- and sampling answer, grant, policy change and pin event, appended and never changed.
--
-- Rows form a hash chain: `hash` is SHA-256 over a canonical serialization of the row's other
-- columns, `prev_hash` included (see store/audit.rs `chain_hash`), and `prev_hash` is the
-- previous row's `hash` (64 zeros for the first row). `switchboard audit verify` recomputes the
-- chain, so an edited, deleted or reordered row is found even by someone who dropped the
-- triggers below; the triggers only stop accidents and casual edits.
--
-- AUTOINCREMENT (rather than plain rowid reuse) keeps `sqlite_sequence` at the highest id ever
-- issued: appends take ids above it, so rows cut from the end leave a gap the next append or
-- the verifier notices.
CREATE TABLE audit (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    -- ms since the Unix epoch.
    at            INTEGER NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('proposed', 'decided', 'edited', 'started',
                  'finished', 'elicitation', 'sampling', 'grant', 'policy', 'pin')),
    -- NULL when an entry is not about one server or tool (a policy change).
    server        TEXT,
    tool          TEXT,
    conversation  TEXT,
    -- Links the entries of one tool call (proposed, decided, edited, started, finished).
    call_ref      TEXT,
    -- `user`, `model`, `system`, `policy`, or one of them with a detail: `policy:<rule id>`,
    -- `grant:<grant id>`, `model:<name>`.
    actor         TEXT NOT NULL CHECK (actor IN ('user', 'model', 'system', 'policy')
                  OR actor GLOB 'policy:?*' OR actor GLOB 'grant:?*' OR actor GLOB 'model:?*'),
    -- The event's details, secrets redacted and size-capped before they get here.
    detail_json   TEXT NOT NULL CHECK (json_valid(detail_json)),
    prev_hash     TEXT NOT NULL CHECK (length(prev_hash) = 64),
    hash          TEXT NOT NULL CHECK (length(hash) = 64)
) STRICT;

CREATE INDEX audit_by_call ON audit (call_ref) WHERE call_ref IS NOT NULL;

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;
