import { describe, expect, it, vi } from "vitest";
import { runPanel } from "./run-panel";
import type { RunDeps } from "./run-panel";

const tool = (over: Record<string, unknown> = {}) => ({
  name: "echo",
  title: null,
  description: null,
  input_schema: JSON.stringify({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }),
  output_schema: null,
  hints: [],
  enabled: true,
  icon: null,
  findings: [],
  held: null,
  ...over,
});

const flush = () => new Promise((r) => setTimeout(r, 0));

function deps(over: Partial<RunDeps> = {}): RunDeps {
  return {
    openRun: vi.fn(async () => "run-00000000000000000000000000000001"),
    run: vi.fn(async () => ({ status: "ok" as const, data: { content: [{ type: "text" as const, text: "hi back" }], structured_content: null, is_error: false } })),
    cancel: vi.fn(async () => true),
    read: vi.fn(async () => ({ status: "ok" as const, data: [{ type: "resource" as const, uri: "fake://text", mime_type: "text/plain", text: "linked body", blob: null }] })),
    ...over,
  };
}

function fill(panel: HTMLElement, text: string) {
  const input = panel.querySelector("#run-text") as HTMLInputElement;
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

describe("runPanel", () => {
  it("refuses to send invalid arguments and says why", async () => {
    const d = deps();
    const panel = runPanel("s", tool(), d);
    (panel.querySelector("button.run") as HTMLButtonElement).click();
    await flush();
    expect(d.run).not.toHaveBeenCalled();
    expect(panel.querySelector(".problems")?.textContent).toContain("text");
  });

  it("sends exactly the typed arguments, shows progress, then the result", async () => {
    let progress: ((p: { progress: number; total: number | null; message: string | null }) => void) | null = null;
    let finish: (() => void) | null = null;
    type Outcome = Awaited<ReturnType<RunDeps["run"]>>;
    const d = deps({
      run: vi.fn((_id: string, _s: string, _t: string, _a: string, onProgress: (p: { progress: number; total: number | null; message: string | null }) => void) => {
        progress = onProgress;
        return new Promise<Outcome>((resolve) => {
          finish = () => resolve({ status: "ok", data: { content: [{ type: "text", text: "done text" }], structured_content: null, is_error: false } });
        });
      }),
    });
    const panel = runPanel("srv", tool({ name: "echo2" }), d);
    fill(panel, "hello");
    (panel.querySelector("button.run") as HTMLButtonElement).click();
    await flush();
    expect(d.run).toHaveBeenCalledWith(expect.stringMatching(/^run-/), "srv", "echo2", JSON.stringify({ text: "hello" }), expect.any(Function));
    expect(panel.querySelector(".run-status")?.textContent).toContain("approval");
    expect((panel.querySelector("button.cancel-run") as HTMLButtonElement).hidden).toBe(false);
    progress!({ progress: 2, total: 5, message: "step 2" });
    expect(panel.querySelector(".run-progress progress")).not.toBeNull();
    expect(panel.querySelector(".run-progress")?.textContent).toContain("step 2");
    finish!();
    await flush();
    expect(panel.querySelector(".run-output")?.textContent).toContain("done text");
    expect(panel.querySelector(".run-progress progress")).toBeNull();
    expect((panel.querySelector("button.run") as HTMLButtonElement).disabled).toBe(false);
  });

  it("cancel names the running call; a denial says it was not approved", async () => {
    let id = "";
    const d = deps({
      run: vi.fn(async (runId: string) => {
        id = runId;
        return { status: "error" as const, error: { code: "denied", message: "the call to echo on s was denied: the user said no" } };
      }),
    });
    const panel = runPanel("s", tool(), d);
    fill(panel, "x");
    (panel.querySelector("button.run") as HTMLButtonElement).click();
    await Promise.resolve(); // the run id comes from Rust first
    (panel.querySelector("button.cancel-run") as HTMLButtonElement).click();
    await flush();
    expect(d.openRun).toHaveBeenCalledTimes(1);
    expect(id).toBe("run-00000000000000000000000000000001");
    expect(d.cancel).toHaveBeenCalledWith(id);
    expect(panel.querySelector(".run-status")?.textContent).toContain("not approved");
    expect(panel.querySelector(".run-output [role=alert]")?.textContent).toContain("the user said no");
  });

  it("opens a resource link from the result only when asked", async () => {
    const d = deps({
      run: vi.fn(async () => ({ status: "ok" as const, data: { content: [{ type: "resource_link" as const, uri: "fake://text", name: "t", mime_type: null }], structured_content: null, is_error: false } })),
    });
    const panel = runPanel("s", tool(), d);
    fill(panel, "x");
    (panel.querySelector("button.run") as HTMLButtonElement).click();
    await flush();
    expect(d.read).not.toHaveBeenCalled();
    const open = Array.from(panel.querySelectorAll(".run-output button")).find((b) => b.textContent === "Open") as HTMLButtonElement;
    open.click();
    await flush();
    expect(d.read).toHaveBeenCalledWith("s", "fake://text");
    expect(panel.querySelector(".run-linked")?.textContent).toContain("linked body");
  });

  it("a switched-off tool cannot be run", () => {
    const panel = runPanel("s", tool({ enabled: false }), deps());
    expect((panel.querySelector("button.run") as HTMLButtonElement).disabled).toBe(true);
  });
});
