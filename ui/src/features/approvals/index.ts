// The public surface of approvals: the dialogs of pending approvals (boundaries.test.ts keeps
// other folders out of its files).
export { mountApprovals } from "./dialog";
