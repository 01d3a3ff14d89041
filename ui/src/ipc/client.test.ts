import { beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({}) as Record<string, unknown>);
vi.mock("./bindings", () => ({ commands: m }));

import { attempt, failureMessage, generated, ipc, IpcFailure, outcome, thrown, unwrap } from "./client";

const refused = { status: "error" as const, error: { code: "secret_exists" as const, message: "The secret API_KEY is already in the keyring." } };

beforeEach(() => {
  for (const k of Object.keys(m)) delete m[k];
});

describe("the IPC client seam", () => {
  it("resolves a fallible command to its data, with the arguments passed through", async () => {
    const doctor = vi.fn(async (name: string) => ({ status: "ok" as const, data: { server: name, checks: [] } }));
    m.doctor = doctor;
    await expect(ipc.doctor("fs")).resolves.toEqual({ server: "fs", checks: [] });
    expect(doctor).toHaveBeenCalledWith("fs");
  });

  it("rejects with one IpcFailure that keeps the host's error", async () => {
    m.startServer = async () => refused;
    const e = await ipc.startServer("fs").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(IpcFailure);
    expect(e).toBeInstanceOf(Error);
    const f = e as IpcFailure;
    expect(f.message).toBe("The secret API_KEY is already in the keyring.");
    expect(f.code).toBe("secret_exists");
    expect(f.error).toEqual(refused.error);
  });

  it("passes an infallible command's value through untouched", async () => {
    // A value shaped like a result is not unwrapped: take_links is a bare invoke.
    const links = { status: "error", error: "not a result" };
    m.takeLinks = async () => links;
    await expect(ipc.takeLinks()).resolves.toBe(links);
    m.openRun = async () => "run-1";
    await expect(ipc.openRun()).resolves.toBe("run-1");
  });

  it("looks the command up when it is called, not when the module loads", async () => {
    expect(ipc.listServers).toBeUndefined();
    m.listServers = async () => ({ status: "ok", data: ["late"] });
    await expect(ipc.listServers()).resolves.toEqual(["late"]);
    expect(generated).toBe(m);
  });

  it("lets an exception that is not an IPC error through", async () => {
    m.listServers = async () => {
      throw new TypeError("no IPC in this window");
    };
    await expect(attempt(ipc.listServers())).rejects.toThrow(TypeError);
  });

  it("attempt: the data, or the failure as a value", async () => {
    m.catalog = async () => ({ status: "ok", data: [1, 2] });
    m.catalogCosts = async () => refused;
    await expect(attempt(ipc.catalog())).resolves.toEqual([1, 2]);
    const r = await attempt(ipc.catalogCosts());
    expect(r).toBeInstanceOf(IpcFailure);
    expect(failureMessage(r)).toBe(refused.error.message);
  });

  it("outcome and unwrap read a result of the generated shape", () => {
    expect(outcome({ status: "ok", data: "frame-1" })).toBe("frame-1");
    expect(outcome({ status: "ok", data: null })).toBeNull();
    const f = outcome(refused);
    expect(f).toBeInstanceOf(IpcFailure);
    expect((f as IpcFailure).code).toBe("secret_exists");
    // A test's stand-in may give only a message.
    expect((outcome({ status: "error", error: { message: "nope" } }) as IpcFailure).message).toBe("nope");
    expect(unwrap({ status: "ok", data: 3 })).toBe(3);
    expect(() => unwrap(refused)).toThrow(IpcFailure);
  });

  it("failureMessage is null for anything but a failure", () => {
    expect(failureMessage(null)).toBeNull();
    expect(failureMessage("text")).toBeNull();
    expect(failureMessage(new Error("plain"))).toBeNull();
    expect(failureMessage(new IpcFailure({ code: "denied", message: "Denied." }))).toBe("Denied.");
  });

  it("thrown turns an exception into an internal failure with its message", () => {
    const a = thrown(new Error("boom"));
    expect(a).toBeInstanceOf(IpcFailure);
    expect(a.code).toBe("internal");
    expect(a.message).toBe("boom");
    expect(thrown("plain string").message).toBe("plain string");
  });
});
