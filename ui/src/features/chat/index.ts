// The public surface of the chat: its page. Other features import from here, never from a file
// of this folder (boundaries.test.ts).
export { mountChat } from "./page";
