// Signing in to a remote server (issue 12): a dialog with the sign-in's timeline, one row per
// step (discovery, metadata, registration, browser, token, first call), each started, done or
// failed in the core's words, with the failure's stable code as `data-code`. Before the browser
// opens the dialog names the authorization server's domain (and the checker's warnings) and
// waits for Continue; Cancel, there or at any later step, ends the sign-in as "cancelled". The
// authorization URL itself never reaches the web view: the domain is what a person can judge.
import { Channel } from "@tauri-apps/api/core";
import { generated, IpcFailure, outcome as resultOf } from "../../ipc/client";
import type { LooseResult } from "../../ipc/client";
import type {
  SignedInDto_Serialize as SignedIn,
  SignInEventDto,
  SignInEventDto_Serialize as SignInEvent,
  SignInStepDto as Step,
} from "../../ipc/bindings";
import { h } from "../../app/dom";
import { modal } from "../../app/modal";
import "./credentials.css";

/** What the dialog needs from Rust; tests pass fakes. */
export interface SignInDeps {
  start: (server: string, clientId: string | null, onEvent: (e: SignInEvent) => void) => Promise<LooseResult<SignedIn>>;
  answer: (ticket: string, yes: boolean) => Promise<unknown>;
}

export const ipcSignInDeps: SignInDeps = {
  start: (server, clientId, onEvent) => {
    const channel = new Channel<SignInEventDto>();
    channel.onmessage = (e) => onEvent(e as SignInEvent);
    return generated.signIn(server, clientId, channel);
  },
  answer: (ticket, yes) => generated.signInContinue(ticket, yes),
};

/** The steps in order, with what each row says. */
export const STEPS: [Step, string][] = [
  ["discovery", "Find how this server signs in"],
  ["metadata", "Check the authorization server"],
  ["registration", "Register Switchboard"],
  ["browser", "Sign in in the browser"],
  ["token", "Get the token"],
  ["first_call", "First call with the new sign-in"],
];

/** The sign-in dialog for `server`; `done` hears whether it succeeded once it is over. */
export function signInDialog(
  server: string,
  done: (ok: boolean) => void,
  opts: { clientId?: string | null; deps?: SignInDeps } = {},
): HTMLDialogElement {
  const deps = opts.deps ?? ipcSignInDeps;
  let ticket: string | null = null;
  let over = false;
  const rows = new Map<Step, { li: HTMLLIElement; detail: HTMLElement }>();
  const timeline = h("ol", { class: "signin-timeline", "aria-label": "Sign-in steps" },
    ...STEPS.map(([step, label]) => {
      const detail = h("span", { class: "signin-detail" });
      const li = h("li", { class: "signin-step", "data-step": step, "data-state": "pending" },
        h("span", { class: "signin-mark", "aria-hidden": "true" }),
        h("span", { class: "signin-label" }, label),
        detail);
      rows.set(step, { li, detail });
      return li;
    }));
  const domain = h("b", { class: "signin-domain" });
  const host = h("span", { class: "signin-host" });
  const warnings = h("ul", { class: "warnings signin-warnings", hidden: true });
  const go = h("button", { class: "primary signin-continue" }, "Continue in the browser");
  const no = h("button", { class: "signin-cancel" }, "Cancel");
  const confirm = h("section", { class: "signin-confirm", hidden: true, "aria-live": "assertive" },
    h("p", {}, "You are about to sign in at ", domain, host, ". Continue only if this is who you expect to sign in with for ", h("b", {}, server), "."),
    warnings,
    h("div", { class: "actions" }, no, go));
  const outcome = h("p", { class: "signin-outcome", role: "status", hidden: true });
  const stop = h("button", { class: "signin-stop" }, "Cancel sign-in");
  const close = h("button", { class: "signin-close", hidden: true }, "Close");
  const m = modal("signin-dialog", `Sign in to ${server}`, [
    h("h2", {}, `Sign in to ${server}`),
    timeline,
    confirm,
    outcome,
    h("div", { class: "actions" }, stop, close),
  ]);

  const cancel = () => {
    confirm.hidden = true;
    if (ticket && !over) void deps.answer(ticket, false);
  };
  go.addEventListener("click", () => {
    confirm.hidden = true;
    if (ticket) void deps.answer(ticket, true);
  });
  no.addEventListener("click", cancel);
  stop.addEventListener("click", cancel);
  close.addEventListener("click", m.close);
  // Escape or closing the dialog mid-way cancels the sign-in too.
  m.dialog.addEventListener("cancel", cancel);

  const onEvent = (e: SignInEvent) => {
    switch (e.kind) {
      case "started":
        ticket = e.ticket;
        break;
      case "confirm":
        ticket = e.ticket;
        domain.textContent = e.domain;
        host.textContent = e.host === e.domain ? "" : ` (${e.host})`;
        warnings.replaceChildren(...e.warnings.map((w) => h("li", {}, w)));
        warnings.hidden = e.warnings.length === 0;
        confirm.hidden = false;
        go.focus();
        break;
      case "step": {
        const row = rows.get(e.step);
        if (!row) break;
        row.li.dataset.state = e.state;
        if (e.code) row.li.dataset.code = e.code;
        row.detail.textContent = e.detail ?? (e.state === "started" ? "…" : "");
        break;
      }
    }
  };

  const finish = (result: LooseResult<SignedIn>) => {
    const r = resultOf(result);

    over = true;
    confirm.hidden = true;
    stop.hidden = true;
    close.hidden = false;
    outcome.hidden = false;
    if (!(r instanceof IpcFailure)) {
      outcome.className = "signin-outcome ok";
      outcome.textContent = `Signed in${r.issuer ? ` at ${r.issuer}` : ""}.`;
    } else {
      // A step left running when the sign-in ended failed with it.
      for (const { li, detail } of rows.values()) {
        if (li.dataset.state !== "started") continue;
        li.dataset.state = "failed";
        li.dataset.code = r.code;
        detail.textContent = r.message;
      }
      outcome.className = "signin-outcome bad";
      outcome.dataset.code = r.code;
      outcome.textContent = r.message;
    }
    close.focus();
    done(!(r instanceof IpcFailure));
  };
  // A start that throws (no IPC at all) ends the dialog with its error like any failure.
  const failed = (err: unknown) => finish({ status: "error", error: { code: "internal", message: String(err) } });
  try {
    void deps.start(server, opts.clientId ?? null, onEvent).then(finish, failed);
  } catch (err) {
    queueMicrotask(() => failed(err));
  }
  return m.dialog;
}
