// The public surface of credentials: its page, and the sign-in dialog and line the server
// cards show. Other features import from here, never from a file of this folder
// (boundaries.test.ts).
export { mountCredentials } from "./page";
export { signInDialog } from "./signin";
export { signInLine } from "./format";
