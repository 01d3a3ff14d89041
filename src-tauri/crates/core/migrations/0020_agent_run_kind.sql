-- What a node of the run tree is (issue 15, point 5): `turn`, an agent answering the person in
-- a conversation (the root of a message's run, or one a conversation was handed over to), whose
-- model calls are stored as the conversation's messages; or `task`, an agent working on a task
-- (delegated to it, or started directly), whose model calls are stored nowhere else. A
-- conversation's cost counts its messages plus its `task` nodes, so nothing is counted twice
-- and nothing a sub-agent spent is left out.
ALTER TABLE agent_runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'task';

-- Rows from before: a root was a conversation's turn (nothing else started a root in the app),
-- and a node below a turn on the same task (the person's message) was a hand-over; a delegated
-- task carries the task its parent wrote for it.
WITH RECURSIVE turns(node, task) AS (
    SELECT node, task FROM agent_runs WHERE parent IS NULL
    UNION
    SELECT a.node, a.task FROM agent_runs a JOIN turns t ON a.parent = t.node AND a.task = t.task
)
UPDATE agent_runs SET kind = 'turn' WHERE node IN (SELECT node FROM turns);

CREATE INDEX IF NOT EXISTS agent_runs_by_conversation ON agent_runs (conversation, kind);
