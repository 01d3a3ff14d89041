// The public surface of questions: the dialogs of pending elicitations and sampling requests
// (boundaries.test.ts keeps other folders out of its files).
export { mountQuestions } from "./dialog";
