// The public surface of prompts and resources: their pages (boundaries.test.ts keeps other
// folders out of its files).
export { mountPrompts } from "./prompts";
export { mountResources } from "./resources";
