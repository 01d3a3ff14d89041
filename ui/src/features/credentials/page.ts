// The Credentials page (issue 12, SE-05): every secret and token the app holds, never a value.
// Provider API keys and each server's own secrets are "set / not set"; a remote server's
// sign-in shows its issuer, expiry, scopes, whether it refreshes, how the client was registered
// and the client id, with Revoke (sign out: the server revokes where it can, the keyring entry
// is deleted) and Sign in again. A pre-registered client's secret can be stored here; it goes to
// the keyring and no command ever returns it. Each remote server shows its "Allow insecure
// (development)" switch (AU-10) with what turning it on means.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type {
  CredentialsDto_Serialize as Credentials,
  ProviderKeyDto as ProviderKey,
  ServerCredentialsDto_Serialize as ServerCredentials,
} from "../../ipc/bindings";
import { emptyState, h } from "../../app/dom";
import { onHostChange } from "../../app/live";
import { pressGuard } from "../../app/press-guard";
import { confirmDialog } from "../../app/confirm";
import { expiryLabel, registrationLabel } from "./format";
import { signInDialog } from "./signin";
import "./credentials.css";

const setLabel = (set: boolean) => (set ? "set" : "not set");

function providerRow(p: ProviderKey): HTMLElement {
  return h("li", { class: "cred-provider", "data-name": p.provider },
    h("b", {}, p.provider), " ",
    h("span", { class: "cred-muted" }, p.profile), " — API key ",
    h("span", { class: `cred-set ${p.set ? "ok" : p.required ? "bad" : "idle"}` }, setLabel(p.set)),
    !p.set && p.required ? h("span", { class: "cred-muted" }, " (needed; set it on the Chat page's provider settings)") : null);
}

/** A remote server's sign-in facts, or what to do when it has none. */
function signInBlock(c: ServerCredentials, nowMs: number): HTMLElement {
  const s = c.sign_in;
  if (!s) {
    return h("p", { class: "cred-signin none" }, c.wants === "more_permissions" ? "Needs more permissions." : c.wants ? "Needs sign-in." : "Not signed in.");
  }
  const facts: [string, string][] = [
    ["Issuer", s.issuer ?? "not named"],
    ["Access token", expiryLabel(s, nowMs)],
    ["Refreshable", s.refreshable ? "yes: a refresh token is held" : "no"],
    ["Scopes", s.scopes.length > 0 ? s.scopes.join(" ") : "none named"],
    ["Client", `${s.client_id} (${registrationLabel(s.registration)})`],
    ["Signed in", s.signed_in_at_ms == null ? "unknown" : new Date(s.signed_in_at_ms).toLocaleString()],
    ["For", s.current ? s.resource : `${s.resource} (an old URL of this server: not used)`],
  ];
  return h("div", { class: "cred-signin" },
    h("p", { class: "cred-signin-head" }, s.has_token ? `Signed in at ${s.issuer ?? "an unnamed authorization server"}` : "Sign-in started but not finished"),
    h("dl", { class: "cred-facts" }, ...facts.flatMap(([k, v]) => [h("dt", {}, k), h("dd", { "data-fact": k.toLowerCase().replace(/ /g, "-") }, v)])));
}

export function mountCredentials(root: HTMLElement): () => void {
  const intro = h("p", { class: "cred-intro" });
  const notice = h("p", { class: "notice", role: "status", hidden: true });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const providers = h("ul", { class: "cred-providers" });
  const servers = h("div", { class: "cred-servers" });
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Credentials")),
    intro, notice, error,
    h("h2", {}, "Model providers"), providers,
    h("h2", {}, "Servers"), servers,
  );
  const say = (el: HTMLElement, msg: string | null) => {
    el.textContent = msg ?? "";
    el.hidden = msg === null;
  };
  // Forms being typed in survive a refresh: the page re-reads on every host change.
  const clientForms = new Map<string, HTMLDetailsElement>();

  const signIn = (server: string, clientId: string | null = null) =>
    root.append(signInDialog(server, () => void refresh(), { clientId }));

  const revoke = (server: string) =>
    root.append(confirmDialog(`Revoke the sign-in to ${server}?`,
      "Switchboard asks the authorization server to revoke the tokens (where it offers that) and deletes them from the keyring. The server will ask you to sign in again.",
      "Revoke", () => void (async () => {
        const r = await attempt(ipc.signOut(server));
        if (r instanceof IpcFailure) say(error, r.message);
        else say(notice, `${server}: ${r.message}`);
        await refresh();
      })()));

  const clientForm = (c: ServerCredentials): HTMLDetailsElement => {
    const have = clientForms.get(c.server);
    if (have) return have;
    const id = h("input", { class: "cred-client-id", "aria-label": `Client id for ${c.server}`, placeholder: "client id", autocomplete: "off" });
    const secret = h("input", { class: "cred-client-secret", type: "password", "aria-label": `Client secret for ${c.server}`, placeholder: "client secret (optional)", autocomplete: "off" });
    const go = h("button", { class: "primary" }, "Save and sign in");
    go.addEventListener("click", () => void (async () => {
      const clientId = id.value.trim();
      if (!clientId) return say(error, "Enter the client id you registered with the server's authorization server.");
      if (secret.value) {
        const r = await attempt(ipc.setClientSecret(c.server, secret.value));
        secret.value = "";
        if (r instanceof IpcFailure) return say(error, r.message);
      }
      say(error, null);
      signIn(c.server, clientId);
    })());
    const form = h("details", { class: "cred-client" },
      h("summary", {}, "Use a client you registered yourself…"),
      h("p", { class: "cred-muted" }, "For servers that cannot register Switchboard automatically. The secret goes to the keyring and is never shown again."),
      h("div", { class: "cred-client-row" }, id, secret, go));
    clientForms.set(c.server, form);
    return form;
  };

  // AU-10: "allow insecure (development)", visible on every remote server with what it means.
  const insecureToggle = (c: ServerCredentials): HTMLElement => {
    const box = h("input", { type: "checkbox", role: "switch", class: "cred-insecure-toggle", checked: c.allow_insecure });
    box.checked = c.allow_insecure;
    box.addEventListener("change", () => void (async () => {
      const allow = box.checked;
      box.disabled = true;
      const r = await attempt(ipc.setAllowInsecure(c.server, allow));
      box.disabled = false;
      if (r instanceof IpcFailure) {
        box.checked = !allow;
        return say(error, r.message);
      }
      say(error, null);
      say(notice, allow
        ? `${c.server}: insecure connections allowed for development. Approve it again on the Servers page before it connects.`
        : `${c.server}: insecure connections are no longer allowed.`);
      await refresh();
    })());
    return h("div", { class: `cred-insecure${c.allow_insecure ? " on" : ""}`, "data-state": c.allow_insecure ? "on" : "off" },
      h("label", {}, box, " Allow insecure (development)", c.allow_insecure ? h("span", { class: "badge bad cred-insecure-on" }, "on") : null),
      h("p", { class: "cred-insecure-warning" }, "Sign-in tokens may cross the network in clear text; turning it on asks for approval again."));
  };

  const serverCard = (c: ServerCredentials, nowMs: number): HTMLElement => {
    const signedIn = c.sign_in?.has_token ?? false;
    return h("article", { class: "cred-server", "data-name": c.server },
      h("div", { class: "head" }, h("h3", {}, c.server), h("span", { class: "kind" }, c.remote ? "remote" : "local")),
      c.secrets.length > 0
        ? h("ul", { class: "cred-secrets" }, ...c.secrets.map((s) =>
          h("li", { class: "cred-secret", "data-field": s.field },
            h("code", {}, s.field), ` — ${s.source} — `,
            h("span", { class: `cred-set ${s.set ? "ok" : "bad"}` }, setLabel(s.set)))))
        : c.remote ? null : h("p", { class: "cred-muted" }, "No secrets."),
      c.remote ? signInBlock(c, nowMs) : null,
      c.remote ? h("p", { class: "cred-muted cred-client-secret-state" }, `Client secret of a registered client: ${setLabel(c.client_secret_set)}`) : null,
      c.remote
        ? h("div", { class: "actions" },
          c.sign_in ? h("button", { class: "danger cred-revoke", onclick: () => revoke(c.server) }, "Revoke") : null,
          h("button", { class: `${signedIn ? "" : "primary "}cred-sign-in`, onclick: () => signIn(c.server) }, signedIn ? "Sign in again" : "Sign in"))
        : null,
      c.remote ? insecureToggle(c) : null,
      c.remote ? clientForm(c) : null,
    );
  };

  const render = (d: Credentials) => {
    const now = Date.now();
    intro.textContent = `Every secret and sign-in Switchboard keeps for you. Where: ${d.store}. Values are never shown here: only whether each is set, and for sign-ins, what they are for and until when.`;
    providers.replaceChildren(...(d.providers.length > 0 ? d.providers.map(providerRow) : [h("li", { class: "cred-muted" }, "No model providers configured.")]));
    if (d.servers.length === 0) {
      servers.replaceChildren(emptyState("No servers", "Servers you add keep their secrets and sign-ins here."));
      return;
    }
    for (const name of [...clientForms.keys()]) if (!d.servers.some((s) => s.server === name)) clientForms.delete(name);
    servers.replaceChildren(...d.servers.map((c) => serverCard(c, now)));
  };

  // A card rebuilt between a press and its release would lose the click (app/press-guard.ts):
  // the page re-reads on every server change, as a sign-in or a start comes and goes.
  const guard = pressGuard(servers);
  const refresh = async () => {
    const r = await attempt(ipc.credentials());
    if (r instanceof IpcFailure) return say(error, r.message);
    guard.run(() => render(r));
  };
  const stop = onHostChange(["servers", "status"], () => void refresh());
  void refresh();
  return () => {
    guard.dispose();
    stop();
  };
}
