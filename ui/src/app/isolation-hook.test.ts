// The isolation hook (ui/isolation/hook.js) and its generated allowlist, run as the isolation
// frame runs them: plain scripts in their own global.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";

type Hook = (m: unknown) => unknown;

function load(): { hook: Hook; errors: string[] } {
  const dir = join(__dirname, "../../isolation");
  const errors: string[] = [];
  const g: Record<string, unknown> = { console: { error: (m: string) => errors.push(m) } };
  g.self = g;
  runInNewContext(readFileSync(join(dir, "allowlist.js"), "utf8"), g);
  runInNewContext(readFileSync(join(dir, "hook.js"), "utf8"), g);
  return { hook: g.__TAURI_ISOLATION_HOOK__ as Hook, errors };
}

const msg = (cmd: string, payload: unknown) => ({ cmd, callback: 1, error: 2, payload, options: {} });

describe("isolation hook", () => {
  it("passes the app's commands with the declared argument shapes, unchanged", () => {
    const { hook } = load();
    for (const m of [
      msg("list_servers", {}),
      msg("remove_server", { name: "demo" }),
      msg("set_tool_enabled", { server: "s", tool: "t", enabled: false }),
      msg("import_preview", { text: "{}", format: null }),
      msg("import_preview", { text: "{}", format: "claude" }),
      msg("get_prompt", { server: "s", name: "p", args: { a: "1" } }),
      msg("run_tool", { runId: "r", server: "s", tool: "t", argsJson: "{}", onProgress: "__CHANNEL__:7" }),
      msg("plugin:event|listen", { event: "host-changed", target: { kind: "Any" }, handler: 3 }),
      // Lists are arrays, not objects.
      msg("set_server_tags", { server: "s", tags: ["trusted"] }),
      msg("set_server_roots", { server: "s", folders: ["/home/ada"] }),
      msg("approve_pin_changes", { server: "s", names: null, surface: "x" }),
      msg("approve_pin_changes", { server: "s", names: ["t"], surface: "x" }),
      msg("answer_question", { nonce: "n", reply: { kind: "decline" } }),
    ]) {
      expect(hook(m)).toBe(m);
    }
  });

  it("drops unknown commands and wrong argument names or types", () => {
    const { hook, errors } = load();
    const bad = [
      msg("nope_command", {}),
      msg("plugin:shell|execute", { program: "sh" }),
      msg("remove_server", { name: 5 }),
      msg("remove_server", { name: "demo", extra: 1 }),
      msg("remove_server", {}),
      msg("set_tool_enabled", { server: "s", tool: "t", enabled: "false" }),
      msg("get_prompt", { server: "s", name: "p", args: { a: 1 } }),
      msg("run_tool", { runId: "r", server: "s", tool: "t", argsJson: "{}", onProgress: "javascript:1" }),
      msg("add_server", { request: [] }),
      msg("set_server_tags", { server: "s", tags: { 0: "trusted" } }),
      msg("set_server_tags", { server: "s", tags: [1] }),
      msg("set_server_roots", { server: "s", folders: "/home" }),
      msg("answer_question", { nonce: "n", reply: [] }),
      msg("__proto__", {}),
      { callback: 1, error: 2 },
    ];
    for (const m of bad) expect(() => hook(m), JSON.stringify(m)).toThrow(/dropped by the isolation hook/);
    expect(errors).toHaveLength(bad.length);
  });
});
