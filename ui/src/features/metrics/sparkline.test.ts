import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("../../ipc/bindings", () => ({ commands: { metricsReport: vi.fn() } }));

import { SPARK_H, SPARK_W, sparkline, sparklines, sparkPoints, sparkTitle } from "./sparkline";
import { report, series } from "./test-fixture";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });

describe("sparkPoints", () => {
  it("scales the largest value to the top and zero to the bottom, inside a 1 px margin", () => {
    const p = sparkPoints([0, 5, 10], 102, 22);
    expect(p).toEqual([[1, 21], [51, 11], [101, 1]]);
  });

  it("draws all-zero series as a flat line at the bottom", () => {
    expect(sparkPoints([0, 0]).map(([, y]) => y)).toEqual([SPARK_H - 1, SPARK_H - 1]);
    expect(sparkPoints([]).length).toBe(0);
  });
});

describe("sparkline", () => {
  it("draws the calls, marks buckets with errors and says the numbers", () => {
    const el = sparkline("fs", series([0, 4, 6, 0], [0, 1, 2, 0]), 24 * 60_000);
    expect(el.getAttribute("role")).toBe("img");
    expect(el.getAttribute("width")).toBe(String(SPARK_W));
    const title = "fs: 10 calls, 3 errors in the last 24 hours (at most 6 in 24 minutes)";
    expect(el.getAttribute("aria-label")).toBe(title);
    expect(el.querySelector("title")?.textContent).toBe(title);
    expect(el.querySelector("polyline")?.getAttribute("points")?.split(" ").length).toBe(4);
    expect(el.querySelectorAll("circle.spark-error").length).toBe(2);
    expect([el.dataset.calls, el.dataset.errors]).toEqual(["10", "3"]);
  });

  it("says when there were no calls", () => {
    expect(sparkTitle("web", series([0, 0]), 60_000)).toBe("web: no calls in the last 24 hours");
    expect(sparkTitle("web", series([1]), 60_000)).toBe("web: 1 call, 0 errors in the last 24 hours (at most 1 in 1 minutes)");
  });
});

describe("sparklines", () => {
  afterEach(() => { document.body.replaceChildren(); });

  it("fills every card from one report and keeps each slot across card rebuilds", async () => {
    const read = vi.fn(() => ok(report()));
    const s = sparklines(read);
    const fs = s.slot("fs");
    const quiet = s.slot("quiet");
    document.body.append(fs, quiet);
    await Promise.all([s.refresh(), s.refresh()]);
    expect(read).toHaveBeenCalledTimes(1);
    expect(s.slot("fs")).toBe(fs);
    expect(fs.querySelector("svg")?.dataset.calls).toBe("10");
    expect(fs.querySelector("svg")?.dataset.errors).toBe("3");
    expect(quiet.querySelector("svg")?.getAttribute("aria-label")).toBe("quiet: no calls in the last 24 hours");
    // A card created after the report gets its line at once.
    expect(s.slot("web").querySelector("svg")?.dataset.calls).toBe("3");
  });

  it("keeps what it showed when the report fails", async () => {
    let fail = false;
    const read = vi.fn(() => (fail
      ? Promise.resolve({ status: "error" as const, error: { code: "internal" as const, message: "x" } })
      : ok(report())));
    const s = sparklines(read);
    const fs = s.slot("fs");
    await s.refresh();
    fail = true;
    await s.refresh();
    expect(fs.querySelector("svg")?.dataset.calls).toBe("10");
  });
});
