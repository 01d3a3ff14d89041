// The public surface of MCP Apps (a ui:// view in its jail): what the catalog and the chat
// mount. Other features import from here, never from a file of this folder (boundaries.test.ts).
export { mountApp, viewOf } from "./frame";
export type { MountOptions } from "./frame";
export { toMcpResult } from "./bridge";
