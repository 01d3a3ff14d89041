// The public surface of skills: its page, and the picker of the chat composer. Other features
// import from here, never from a file of this folder (boundaries.test.ts).
export { mountSkills } from "./page";
export { skillPicker } from "./skill-picker";
