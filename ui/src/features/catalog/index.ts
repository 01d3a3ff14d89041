// The public surface of the catalog: its page, and the pieces other features show too (tool
// results and content, the schema form, costs, scanner findings). Other features import from
// here, never from a file of this folder (boundaries.test.ts).
export { mountCatalog } from "./page";
export { IMAGE_TYPES, checkBase64, formatBytes, mimeOf, renderContent, renderImage, renderProgress, renderToolResult } from "./result-view";
export type { Progress, ToolResultDto } from "./result-view";
export { buildSchemaForm } from "./schema-form";
export type { FormValue } from "./schema-form";
export { cardCostLine, enableCostNote, heldCost, loadCosts, REGISTRY_COST_NOTE } from "./cost";
export { findingsList } from "./findings";
