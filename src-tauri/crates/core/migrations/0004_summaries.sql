-- Context compaction: when a conversation nears the model's context window, the older part of
-- the visible branch is summarized and the summary stands in for it in later requests. Nothing
-- is deleted: the messages stay in `messages`; a summary only records which message it covers
-- through. A summary whose `through_message` was superseded (an edit before it) no longer
-- describes the branch and is ignored.
CREATE TABLE summaries (
    id               INTEGER PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    -- The last message it covers (every visible message up to and including this one).
    through_message  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    -- How many messages it replaced in the request, for display.
    messages         INTEGER NOT NULL CHECK (messages >= 0),
    text             TEXT NOT NULL,
    provider         TEXT,
    model            TEXT,
    created_at       INTEGER NOT NULL
) STRICT;

CREATE INDEX summaries_by_conversation ON summaries (conversation_id, id);

-- A provider's context window in tokens when the user sets one; NULL means "known from the
-- model name" (see llm::limits).
ALTER TABLE providers ADD COLUMN context_window INTEGER CHECK (context_window IS NULL OR context_window > 0);
