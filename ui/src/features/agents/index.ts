// The public surface of agents: its page (boundaries.test.ts keeps other folders out of its files).
export { mountAgents } from "./page";
