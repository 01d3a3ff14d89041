// The public surface of links: the dialog of a received switchboard:// link (boundaries.test.ts
// keeps other folders out of its files).
export { mountLinks } from "./dialog";
