// The public surface of settings: its page, the saved theme applied at start-up and the
// keyboard shortcuts (boundaries.test.ts keeps other folders out of its files).
export { applySavedTheme, mountSettings } from "./page";
export { installShortcuts } from "./shortcuts";
