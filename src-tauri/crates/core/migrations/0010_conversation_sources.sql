-- What a person brought into a conversation from a server by hand: a resource attached to a
-- message, a prompt run as a slash command. It reaches the model like a tool's result does, so
-- it counts in the conversation's data flow for the lethal-trifecta guard (AP-04): the tags of
-- these servers are read with those of the servers whose tools returned something.
-- Written when the message carrying it is sent (only then does the model see it).
CREATE TABLE conversation_sources (
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    server_id        TEXT NOT NULL,
    first_at_ms      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, server_id)
) STRICT, WITHOUT ROWID;
