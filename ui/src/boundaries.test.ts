// Two rules of the UI's layout, checked on every source file (run by `npm test`, so by
// `make ui-test` and `make test`):
//  1. A command's result is read in one place, the IPC seam (src/ipc/client.ts): anywhere else
//     a check of `status` against "ok" or "error", or a value import of the generated
//     `commands`, is an error. Features call `ipc.x()` / `attempt(ipc.x())`.
//  2. A feature's public surface is its folder's index.ts. Code outside features/NAME imports
//     features/NAME (the index), never features/NAME/some-file. Tests may reach into the
//     folder they stand in for, so test files are exempt from this one.
import { readFileSync, readdirSync } from "node:fs";
import { join, posix, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(__dirname);
const SEAM = ["ipc/client.ts", "ipc/bindings.ts"];

/** A check of a result's status against "ok" or "error", in either order and quoting. */
const STATUS_CHECK = /\bstatus\s*[!=]==?\s*(["'`])(ok|error)\1|(["'`])(ok|error)\3\s*[!=]==?\s*[\w$.?]*\bstatus\b/;
/** A value import (not `import type`) that names `commands`, from the generated bindings. */
const COMMANDS_IMPORT = /import\s+(?!type\b)\{[^}]*\bcommands\b[^}]*\}\s*from\s*["'][^"']*ipc\/bindings["']/;
/** The module each import, re-export or dynamic import names. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;

interface Violation {
  file: string;
  line: number;
  rule: "status-outside-seam" | "commands-outside-seam" | "feature-internals";
  text: string;
}

/** What `source` (at `file`, a path relative to src/ with "/" separators) breaks. */
function violations(
file: string, source: string): Violation[] {
  const out: Violation[] = [];
  const lines = source.split("\n");
  const isTest = file.endsWith(".test.ts");
  const lineOf = (index: number) => source.slice(0, index).split("\n").length;
  if (!SEAM.includes(file) && file !== "boundaries.test.ts") {
    lines.forEach((text, i) => {
      if (STATUS_CHECK.test(text)) out.push({ file, line: i + 1, rule: "status-outside-seam", text: text.trim() });
    });
    if (!isTest) {
      for (const m of source.matchAll(new RegExp(COMMANDS_IMPORT, "g"))) {
        out.push({ file, line: lineOf(m.index ?? 0), rule: "commands-outside-seam", text: m[0] });
      }
    }
  }
  if (!isTest) {
    const own = /^features\/([^/]+)\//.exec(file)?.[1] ?? null;
    for (const m of source.matchAll(SPECIFIER)) {
      const spec = m[1];
      if (!spec.startsWith(".")) continue;
      const target = posix.normalize(posix.join(posix.dirname(file), spec));
      const parts = /^features\/([^/]+)\/(.+)$/.exec(target);
      if (parts === null || parts[1] === own || parts[2] === "index" || parts[2] === "index.ts") continue;
      out.push({ file, line: lineOf(m.index ?? 0), rule: "feature-internals", text: `${spec} (use "${posix.relative(posix.dirname(file), `features/${parts[1]}`) || "."}")` });
    }
  }
  return out;
}

function sources(): { file: string; source: string }[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .filter((f) => f.endsWith(".ts"))
    .map((f) => {
      const file = relative(SRC, join(SRC, f)).split("\\").join("/");
      return { file, source: readFileSync(join(SRC, f), "utf8") };
    });
}

describe("the UI's boundaries", () => {
  it("hold in every file under src/", () => {
    const all = sources();
    expect(all.length).toBeGreaterThan(100);
    expect(all.some((s) => s.file === "ipc/client.ts")).toBe(true);
    const found = all.flatMap((s) => violations(s.file, s.source));
    expect(found.map((v) => `${v.file}:${v.line}: ${v.rule}: ${v.text}`)).toEqual([]);
  });

  it("every feature folder has its public index", () => {
    const features = readdirSync(join(SRC, "features"), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(features.length).toBeGreaterThan(10);
    const missing = features.filter((f) => !readdirSync(join(SRC, "features", f)).includes("index.ts"));
    expect(missing).toEqual([]);
  });
});

describe("the boundary check itself", () => {
  const rules = (file: string, source: string) => violations(file, source).map((v) => v.rule);

  it("finds a status check outside the seam, in code and in tests", () => {
    expect(rules("features/servers/page.ts", 'if (r.status === "error") return;')).toEqual(["status-outside-seam"]);
    expect(rules("features/chat/page.ts", "const ok = r.status !== 'ok';")).toEqual(["status-outside-seam"]);
    expect(rules("features/chat/page.ts", 'if ("error" === r.status) return;')).toEqual(["status-outside-seam"]);
    expect(rules("features/chat/page.test.ts", 'expect(r.status === "ok").toBe(true);')).toEqual(["status-outside-seam"]);
    // The seam may; a DTO's own status (a run, a message) is not a result's.
    expect(rules("ipc/client.ts", 'return r.status === "error" ? a : b;')).toEqual([]);
    expect(rules("features/runs/panel.ts", 'n.status === "running" || m.status === "failed"')).toEqual([]);
  });

  it("finds a value import of the generated commands outside the seam", () => {
    expect(rules("features/audit/page.ts", 'import { commands } from "../../ipc/bindings";')).toEqual(["commands-outside-seam"]);
    expect(rules("main.ts", 'import { events, commands } from "./ipc/bindings";')).toEqual(["commands-outside-seam"]);
    expect(rules("features/audit/page.ts", 'import { events } from "../../ipc/bindings";\nimport type { AuditEntryDto } from "../../ipc/bindings";')).toEqual([]);
  });

  it("finds a feature reaching into another feature's files", () => {
    expect(rules("features/chat/page.ts", 'import { runPanel } from "../runs/panel";')).toEqual(["feature-internals"]);
    expect(rules("features/chat/page.ts", 'export { runPanel } from "../runs/panel";')).toEqual(["feature-internals"]);
    expect(rules("features/chat/page.ts", 'const m = await import("../runs/panel");')).toEqual(["feature-internals"]);
    expect(rules("main.ts", 'import { mountChat } from "./features/chat/page";')).toEqual(["feature-internals"]);
    expect(rules("app/live.ts", 'import "../features/chat/chat.css";')).toEqual(["feature-internals"]);
    const v = violations("features/chat/page.ts", 'import { runPanel } from "../runs/panel";')[0];
    expect(v.text).toBe('../runs/panel (use "../runs")');
  });

  it("lets a feature import its own files, another feature's index, and shared code", () => {
    const ok = [
      'import { runPanel } from "../runs";',
      'import { runPanel } from "../runs/index";',
      'import { renderRun } from "./tree";',
      'import { h } from "../../app/dom";',
      'import "./runs.css";',
      'import { Channel } from "@tauri-apps/api/core";',
    ].join("\n");
    expect(rules("features/chat/page.ts", ok)).toEqual([]);
    expect(rules("main.ts", 'import { mountChat } from "./features/chat";')).toEqual([]);
    // Tests may stand in for another feature's file.
    expect(rules("features/chat/messages.test.ts", 'const real = await import("../apps/frame");')).toEqual([]);
  });
});

