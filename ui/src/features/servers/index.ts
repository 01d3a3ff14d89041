// The public surface of servers: its page, and the trust dialog the registry opens after an
// install. Other features import from here, never from a file of this folder
// (boundaries.test.ts).
export { mountServers } from "./page";
export { trustDialog } from "./trust";
