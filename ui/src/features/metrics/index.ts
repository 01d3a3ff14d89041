// The public surface of metrics: its page, and the sparklines of the server cards. Other
// features import from here, never from a file of this folder (boundaries.test.ts).
export { mountMetrics } from "./page";
export { sparklines } from "./sparkline";
