// The one seam between the features and the generated bindings (bindings.ts, which `make
// bindings` writes from the Rust IPC types). A fallible command there resolves to
// `{ status: "ok", data } | { status: "error", error }`; checking that by hand at every call
// site spread the same three lines over a hundred places, each free to forget one. Here it is
// unwrapped once: `ipc.x(...)` resolves to the data and rejects with one typed error,
// `IpcFailure`, which keeps the host's `IpcError` (its code and the message the UI shows). A
// call site that wants the failure as a value rather than a rejection wraps the call in
// `attempt`. Infallible commands (a bare `invoke`) pass through as they are.
//
// The command is looked up on `commands` at call time, not copied at import, so a test that
// mocks the bindings module (`vi.mock(".../ipc/bindings")`) is what every feature calls.
// This file is the only one that reads a result's `status` (ui/src/boundaries.test.ts fails on
// a check of it anywhere else).

import { commands } from "./bindings";
import type { ErrorCode, IpcError } from "./bindings";

type Commands = typeof commands;

/** What a fallible generated command resolves to. */
export type IpcResult<T> = { status: "ok"; data: T } | { status: "error"; error: IpcError };

/** A command that failed on the host's side: its `IpcError`, with its message as the Error's. */
export class IpcFailure extends Error {
  /** What kind of failure (`secret_exists`, `not_found`, ...). */
  readonly code: ErrorCode;
  /** The host's error as it came. */
  readonly error: IpcError;

  constructor(error: IpcError) {
    super(error.message);
    this.name = "IpcFailure";
    this.code = error.code;
    this.error = error;
  }
}

type Unwrapped<F> = F extends (...args: infer A) => Promise<IpcResult<infer T>> ? (...args: A) => Promise<T> : F;

/** Every generated command, fallible ones unwrapped. */
export type Ipc = { [K in keyof Commands]: Unwrapped<Commands[K]> };

type Infallible = { [K in keyof Commands]: Commands[K] extends (...args: never[]) => Promise<IpcResult<unknown>> ? never : K }[keyof Commands];

/** The commands that are a bare `invoke` (no `IpcError`): they pass through untouched. */
const INFALLIBLE_LIST = ["takeLinks", "startupProblem", "windowReady", "openRun", "cancelRun", "pendingApprovals", "providerKinds", "pendingQuestions"] as const satisfies readonly Infallible[];
// A new infallible command in the bindings that is not listed above fails to type-check here.
type Unlisted = Exclude<Infallible, (typeof INFALLIBLE_LIST)[number]>;
const everyInfallibleListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyInfallibleListed;
const INFALLIBLE: ReadonlySet<string> = new Set(INFALLIBLE_LIST);

/** A result of the generated shape whose error is at least a message (a dependency's contract
 *  may ask for no more: tests stand in for it). */
export type LooseResult<T> = { status: "ok"; data: T } | { status: "error"; error: { message: string; code?: string } };

/** A generated result as the data, or the failure it carries. For results that reach a feature
 *  some other way than through `ipc` (a dependency passed in, with the generated shape). */
export function outcome<T>(r: LooseResult<T>): T | IpcFailure;
/** A result whose success carries nothing (a test's `{ status: "ok" }`). */
export function outcome(r: { status: "ok" } | LooseResult<unknown>): unknown;
export function outcome(r: { status: "ok"; data?: unknown } | LooseResult<unknown>): unknown {
  return r.status === "error" ? new IpcFailure(r.error as IpcError) : r.data;
}



/** `r`'s data; throws its `IpcFailure` when it failed. */
export function unwrap<T>(r: IpcResult<T>): T {
  const o = outcome(r);
  if (o instanceof IpcFailure) throw o;
  return o;
}

/** The call's data, or its `IpcFailure` as a value. Anything else it throws still rejects. */
export async function attempt<T>(call: Promise<T>): Promise<T | IpcFailure> {
  try {
    return await call;
  } catch (e) {
    if (e instanceof IpcFailure) return e;
    throw e;
  }
}

/** A call that threw instead (no IPC at all, a test without the command) as a failure of kind
 *  `internal`, for call sites that show both alike: `attempt(ipc.x()).catch(thrown)`. */
export function thrown(e: unknown): IpcFailure {
  return new IpcFailure({ code: "internal", message: e instanceof Error ? e.message : String(e) });
}

/** The message of `r` when it is a failure, else null: what an error line shows. */

export function failureMessage(r: unknown): string | null {
  return r instanceof IpcFailure ? r.message : null;
}

/** Every generated command: fallible ones resolve to their data and reject with `IpcFailure`. */
export const ipc: Ipc = new Proxy({} as Ipc, {
  get(_, name) {
    if (typeof name !== "string") return undefined;
    const command = (commands as Record<string, unknown>)[name];
    if (typeof command !== "function") return command;
    if (INFALLIBLE.has(name)) return command;
    return async (...args: unknown[]) => unwrap(await (command as (...a: unknown[]) => Promise<IpcResult<unknown>>)(...args));
  },
});

/** The generated commands as they are, for a dependency whose contract is the generated result
 *  (a panel's `deps`, which tests stand in for): read what it returns with `outcome`. */
export { commands as generated } from "./bindings";
