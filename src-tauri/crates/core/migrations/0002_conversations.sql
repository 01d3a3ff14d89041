-- Conversations, their messages, the tool calls those messages asked for, the approval
-- decisions on those calls, and a full-text index over message text (issue 4; ST-01, ST-02).
--
-- Nothing here is a secret: API keys and tokens live in the OS keyring (SE-01). A test keeps
-- column names free of key/token/secret so that stays visible; usage counts are therefore
-- named usage_input/usage_output/usage_cached_input.
--
-- History is kept, never rewritten: edit-and-resend and regenerate mark the replaced messages
-- superseded (superseded_by = the message that replaced them) and append the new branch, so
-- the visible conversation is the messages with superseded_by IS NULL in seq order.

CREATE TABLE conversations (
    -- A random UUID (ConversationId), stable across export and import.
    id                        TEXT PRIMARY KEY NOT NULL,
    title                     TEXT NOT NULL,
    created_at                INTEGER NOT NULL,
    -- Bumped by new messages and by finished answers, not by rename or archive: the list is
    -- ordered by activity.
    updated_at                INTEGER NOT NULL,
    -- The provider and model that answered last (the default for the next turn).
    provider                  TEXT,
    model                     TEXT,
    archived                  INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    -- Where a fork came from; both become NULL when the source goes away.
    forked_from_conversation  TEXT REFERENCES conversations(id) ON DELETE SET NULL,
    forked_from_message       INTEGER REFERENCES messages(id) ON DELETE SET NULL
) STRICT;

-- The conversation list: newest activity first, archived ones apart; id breaks ties for keyset
-- pagination.
CREATE INDEX conversations_by_activity ON conversations (archived, updated_at DESC, id DESC);
-- The SET NULL actions above look rows up by these columns when a source is deleted.
CREATE INDEX conversations_forked_from_conversation ON conversations (forked_from_conversation);
CREATE INDEX conversations_forked_from_message ON conversations (forked_from_message);

CREATE TABLE messages (
    -- Also the full-text index's rowid.
    id                  INTEGER PRIMARY KEY,
    conversation_id     TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    -- Order within the conversation, 1-based, assigned by the repository; never reused.
    seq                 INTEGER NOT NULL,
    role                TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    -- The provider-neutral parts (llm::types::Part) as a JSON array.
    parts_json          TEXT NOT NULL CHECK (json_valid(parts_json)),
    -- The message's Text parts joined (Message::text()): what search indexes and previews show.
    -- Tool arguments, tool results and images are not indexed.
    text                TEXT NOT NULL DEFAULT '',
    -- incomplete: being streamed (checkpointed); interrupted: found incomplete at startup, or
    -- broken off; cancelled: stopped by the user; failed: the provider failed mid-answer.
    status              TEXT NOT NULL
                        CHECK (status IN ('complete', 'incomplete', 'interrupted', 'cancelled', 'failed')),
    provider            TEXT,
    model               TEXT,
    -- Token counts of the call that produced this message (NULL for user messages).
    usage_input         INTEGER,
    usage_output        INTEGER,
    usage_cached_input  INTEGER,
    -- llm::types::StopReason as JSON, when the provider said why it stopped.
    stop_reason_json    TEXT,
    -- What went wrong, for status failed.
    error               TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    -- The message that replaced this one (same conversation, higher seq). Not a foreign key:
    -- rows only ever go away with their whole conversation, and an FK would need another index
    -- on every message row.
    superseded_by       INTEGER,
    -- Set on copies made by a fork: the source message id. Usage totals skip copies (their
    -- tokens were spent, and are counted, in the source).
    copied_from         INTEGER,
    UNIQUE (conversation_id, seq)
) STRICT;

-- UNIQUE (conversation_id, seq) above is the index for loading a conversation in order, for
-- MAX(seq), for the last-message preview and for the cascade from conversations.

-- The startup sweep (incomplete -> interrupted) touches only the few rows it needs.
CREATE INDEX messages_incomplete ON messages (id) WHERE status = 'incomplete';

CREATE TABLE tool_calls (
    id              INTEGER PRIMARY KEY,
    -- The assistant message that asked for the call.
    message_id      INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    -- The vendor's call id, as in the ToolCall/ToolResult parts.
    call_id         TEXT NOT NULL,
    -- The server and the tool exactly as the server names it (not the LLM-facing name).
    server          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments_json  TEXT NOT NULL CHECK (json_valid(arguments_json)),
    -- The full result, uncapped (the model may have seen a capped copy in a ToolResult part).
    result_json     TEXT CHECK (result_json IS NULL OR json_valid(result_json)),
    is_error        INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    status          TEXT NOT NULL
                    CHECK (status IN ('pending', 'running', 'done', 'denied', 'cancelled', 'interrupted')),
    requested_at    INTEGER NOT NULL,
    started_at      INTEGER,
    finished_at     INTEGER
) STRICT;

CREATE INDEX tool_calls_by_message ON tool_calls (message_id);
CREATE INDEX tool_calls_unfinished ON tool_calls (id) WHERE status IN ('pending', 'running');

CREATE TABLE approvals (
    id            INTEGER PRIMARY KEY,
    tool_call_id  INTEGER NOT NULL REFERENCES tool_calls(id) ON DELETE CASCADE,
    decision      TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
    reason        TEXT,
    -- How it was decided: the user in a dialog, the policy, or a standing grant (grant_id).
    decided_by    TEXT NOT NULL CHECK (decided_by IN ('user', 'policy', 'grant')),
    grant_id      TEXT,
    decided_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX approvals_by_tool_call ON approvals (tool_call_id);

-- Full-text search over messages.text: an external-content FTS5 table (the text is stored
-- once, in messages) kept in sync by the triggers below. Messages without text (tool-call
-- turns, tool results, an answer that just began) are not indexed at all; the delete side
-- mirrors that, because an external-content index must be told exactly what it holds.
-- unicode61 with diacritics removed: "cafe" finds "café".
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text,
    content = 'messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, text) SELECT new.id, new.text WHERE new.text <> '';
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text WHERE old.text <> '';
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages
WHEN old.text IS NOT new.text BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text WHERE old.text <> '';
    INSERT INTO messages_fts (rowid, text) SELECT new.id, new.text WHERE new.text <> '';
END;
