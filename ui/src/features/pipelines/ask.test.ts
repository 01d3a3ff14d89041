import { describe, expect, it, vi } from "vitest";

vi.mock("../../ipc/bindings", () => ({
  commands: { pendingApprovals: vi.fn(), answerApproval: vi.fn() },
  events: { hostChanged: { listen: vi.fn() } },
}));

import { pipelineAsk } from "./ask";
import { approvalDialog } from "../approvals/dialog";
import type { ApprovalDto } from "../../ipc/bindings";

const whole = {
  version: 2,
  inputs: { city: "Chicago" },
  steps: [
    { id: "weather", tool: "everything/get-structured-content", args: {} },
    { id: "sum", tool: "calc/add", args: {} },
  ],
  flows: [
    "step 1 \"weather\" everything/get-structured-content.location <- input city",
    "step 2 \"sum\" calc/add.a <- step 1 \"weather\" (everything/get-structured-content) /temperature",
  ],
};

const req = (over: Partial<ApprovalDto> = {}): ApprovalDto => ({
  nonce: "n1",
  kind: "pipeline",
  server: "everything",
  tool: "weather-sum",
  arguments: JSON.stringify(whole, null, 2),
  origin: "manual",
  conversation: null,
  hints: [],
  reason: "run the pipeline weather-sum",
  warning: null,
  requested_at_ms: 0,
  suggested_constraints: [],
  ...over,
});

describe("a pipeline in the approval dialog", () => {
  it("lists every step and every flow line, as text", () => {
    const el = pipelineAsk(req())!;
    const steps = [...el.querySelectorAll(".pipeline-step")].map((s) => s.textContent);
    expect(steps).toEqual(["everything/get-structured-content (weather)", "calc/add (sum)"]);
    const flows = [...el.querySelectorAll(".pipeline-flow")].map((s) => s.textContent);
    expect(flows).toEqual(whole.flows);
    expect(el.querySelector(".pipeline-version")?.textContent).toContain("weather-sum, version 2");
  });

  it("marks the steps that will ask again when they run, with why", () => {
    const asks = { ...whole, asks_again: [{ step: 2, id: "sum", tool: "calc/add", why: "it may write" }] };
    const el = pipelineAsk(req({ arguments: JSON.stringify(asks) }))!;
    const marked = [...el.querySelectorAll(".pipeline-step")].map((s) => s.querySelector(".asks-again")?.textContent ?? null);
    expect(marked).toEqual([null, "asks again: it may write"]);
    expect(el.querySelector(".pipeline-version")?.textContent).toContain("One step will ask again when it runs");
    const none = pipelineAsk(req({ arguments: JSON.stringify({ ...whole, asks_again: [] }) }))!;
    expect(none.querySelectorAll(".asks-again")).toHaveLength(0);
    expect(none.querySelector(".pipeline-version")?.textContent).toContain("No step is expected to ask again.");
  });

  it("shows nothing for other requests or arguments that are not a pipeline's", () => {
    expect(pipelineAsk(req({ kind: "tool" }))).toBeNull();
    expect(pipelineAsk(req({ arguments: "{\"a\": 1}" }))).toBeNull();
    expect(pipelineAsk(req({ arguments: "not json" }))).toBeNull();
  });

  it("is part of the dialog, which offers no edit and no grant for it", () => {
    const d = approvalDialog(req(), () => null);
    expect(d.querySelector("h2")?.textContent).toBe("Run the pipeline weather-sum?");
    expect(d.querySelectorAll(".pipeline-flow")).toHaveLength(2);
    expect(d.querySelector(".approval-edit")).toBeNull();
    expect(d.querySelector(".approval-pipeline-json .approval-args")?.textContent).toContain("\"flows\"");
    expect(d.querySelector<HTMLElement>(".allow-always")?.hidden).toBe(true);
  });
});
