// The public surface of the registry: its page (boundaries.test.ts keeps other folders out of
// its files).
export { mountRegistry } from "./page";
