// The public surface of pipelines: its page, and the approval line of a pipeline step. Other
// features import from here, never from a file of this folder (boundaries.test.ts).
export { mountPipelines } from "./page";
export { pipelineAsk } from "./ask";
