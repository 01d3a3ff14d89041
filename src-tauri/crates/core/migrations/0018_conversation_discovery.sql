-- Progressive discovery (issue 16, point 2), switched per conversation: when on, the model is
-- offered a search over the catalog and the tools it loads instead of every definition. Off by
-- default; the tools loaded are not stored here, they are read back from the conversation's
-- own tool calls.
ALTER TABLE conversations ADD COLUMN discovery INTEGER NOT NULL DEFAULT 0 CHECK (discovery IN (0, 1));
