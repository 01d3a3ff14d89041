-- Every chat turn that starts while no other runs anywhere first asks whether anything is
-- still marked unfinished (host::runners): answers and tool calls have partial indexes for
-- that since 0002; running agent nodes get one here, so the question stays a lookup however
-- many agents have run.
CREATE INDEX IF NOT EXISTS agent_runs_running ON agent_runs (node) WHERE status = 'running';
