-- What outbound redaction replaced in each turn (issue 16, point 5), so a conversation opened
-- again still says, at the turn, what was kept from the cloud model: kinds and counts of
-- distinct values per provider, never the values (those are never stored anywhere).
--
-- A turn is keyed by the person's message that started it (a regenerate answers the same
-- message, so it updates the same row); the row goes with the message or the conversation.
-- The audit log records the same fact (AuditEvent::Redacted), append-only and not per turn.
CREATE TABLE IF NOT EXISTS turn_redactions (
    message_id       INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    -- The provider profile the requests went to (`openai`, `anthropic`, ...).
    provider         TEXT NOT NULL,
    -- {"email": 2, "api_key": 1}: distinct values by kind id.
    counts_json      TEXT NOT NULL CHECK (json_valid(counts_json)),
    at               INTEGER NOT NULL,
    PRIMARY KEY (message_id, provider)
) STRICT;

CREATE INDEX IF NOT EXISTS turn_redactions_by_conversation
    ON turn_redactions (conversation_id, message_id);
