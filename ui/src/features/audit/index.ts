// The public surface of the audit log: its page (boundaries.test.ts keeps other folders out of
// its files).
export { mountAudit } from "./page";
