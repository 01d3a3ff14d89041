// The public surface of policy: its page (boundaries.test.ts keeps other folders out of its
// files).
export { mountPolicy } from "./page";
