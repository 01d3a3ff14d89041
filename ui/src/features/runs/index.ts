// The public surface of agent runs: the agent picker and the run panel of the chat. Other
// features import from here, never from a file of this folder (boundaries.test.ts).
export { agentPicker } from "./agent-picker";
export { runPanel } from "./panel";
