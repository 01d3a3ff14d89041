import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ credentials: vi.fn(), signOut: vi.fn(), setClientSecret: vi.fn(), setAllowInsecure: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({
  commands: { credentials: m.credentials, signOut: m.signOut, setClientSecret: m.setClientSecret, setAllowInsecure: m.setAllowInsecure },
  events: { hostChanged: { listen: vi.fn(() => Promise.resolve(() => {})) } },
}));

import { mountCredentials } from "./page";

const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const NOW = Date.now();
const listing = () => ({
  store: "in the OS keyring",
  providers: [{ provider: "work", profile: "OpenAI", set: true, required: true }],
  servers: [
    { server: "local", remote: false, secrets: [{ field: "API_KEY", source: "secret API_KEY", set: false }], sign_in: null, client_secret_set: false, wants: null, allow_insecure: false },
    {
      server: "remote", remote: true, secrets: [], client_secret_set: true, wants: null, allow_insecure: false,
      sign_in: {
        resource: "https://mcp.example.com/mcp", current: true, issuer: "https://auth.example.com",
        registration: "dynamic", client_id: "client_1", has_token: true, refreshable: true,
        scopes: ["mcp", "offline_access"], expires_at_ms: NOW + 30 * 60_000, signed_in_at_ms: NOW,
      },
    },
  ],
});

let root: HTMLElement;
let unmount: () => void;
beforeEach(() => {
  root = document.createElement("main");
  document.body.append(root);
  m.credentials.mockResolvedValue({ status: "ok", data: listing() });
});
afterEach(() => {
  unmount?.();
  document.body.replaceChildren();
  vi.clearAllMocks();
});

describe("the Credentials page", () => {
  it("holds a redraw while a card's button is pressed, so the click is not lost", async () => {
    unmount = mountCredentials(root);
    await flush();
    const button = root.querySelector('.cred-server[data-name="remote"] .cred-sign-in') as HTMLElement;
    button.dispatchEvent(new MouseEvent("mousedown", { bubbles: true, button: 0 }));
    // The host announces a change while the button is down: the page reads again.
    const listen = (await import("../../ipc/bindings")).events.hostChanged.listen as unknown as ReturnType<typeof vi.fn>;
    vi.useFakeTimers();
    (listen.mock.calls[0][0] as (e: { payload: { kind: string } }) => void)({ payload: { kind: "servers" } });
    vi.advanceTimersByTime(200);
    vi.useRealTimers();
    await flush();
    expect(m.credentials).toHaveBeenCalledTimes(2);
    expect(button.isConnected).toBe(true);
    button.dispatchEvent(new MouseEvent("mouseup", { bubbles: true, button: 0 }));
    await new Promise((r) => setTimeout(r, 0));
    expect(button.isConnected).toBe(false);
    expect(root.querySelector('.cred-server[data-name="remote"] .cred-sign-in')).not.toBeNull();
  });

  it("lists keys, secrets and sign-ins as set / not set, with the sign-in's facts", async () => {
    unmount = mountCredentials(root);
    await flush();
    expect(root.querySelector('.cred-provider[data-name="work"]')?.textContent).toContain("API key set");
    expect(root.querySelector('.cred-server[data-name="local"] .cred-secret')?.textContent).toContain("not set");
    const remote = root.querySelector('.cred-server[data-name="remote"]')!;
    expect(remote.textContent).toContain("Signed in at https://auth.example.com");
    expect(remote.querySelector('[data-fact="access-token"]')?.textContent).toMatch(/^expires in (29|30) min/);
    expect(remote.querySelector('[data-fact="scopes"]')?.textContent).toBe("mcp offline_access");
    expect(remote.querySelector('[data-fact="client"]')?.textContent).toContain("client_1");
    expect(remote.textContent).toContain("Client secret of a registered client: set");
    expect(remote.querySelector(".cred-sign-in")?.textContent).toBe("Sign in again");
  });

  it("revokes only after confirming, and says what the server did", async () => {
    m.signOut.mockResolvedValue({ status: "ok", data: { revocation: "revoked", message: "signed out; the server revoked the tokens" } });
    unmount = mountCredentials(root);
    await flush();
    root.querySelector<HTMLButtonElement>('.cred-server[data-name="remote"] .cred-revoke')!.click();
    expect(m.signOut).not.toHaveBeenCalled();
    root.querySelector<HTMLButtonElement>(".confirm-dialog button.danger")!.click();
    await flush();
    expect(m.signOut).toHaveBeenCalledWith("remote");
    expect(root.querySelector(".notice")?.textContent).toContain("revoked");
  });

  it("stores a typed client secret and clears the field", async () => {
    m.setClientSecret.mockResolvedValue({ status: "ok", data: null });
    unmount = mountCredentials(root);
    await flush();
    const card = root.querySelector('.cred-server[data-name="remote"]')!;
    card.querySelector<HTMLInputElement>(".cred-client-id")!.value = "my-client";
    const secret = card.querySelector<HTMLInputElement>(".cred-client-secret")!;
    secret.value = "s3cret";
    card.querySelector<HTMLButtonElement>(".cred-client button.primary")!.click();
    await flush();
    expect(m.setClientSecret).toHaveBeenCalledWith("remote", "s3cret");
    expect(secret.value).toBe("");
  });

  it("shows each remote server's allow-insecure switch, off, with its warning", async () => {
    unmount = mountCredentials(root);
    await flush();
    const remote = root.querySelector('.cred-server[data-name="remote"]')!;
    const toggle = remote.querySelector<HTMLInputElement>(".cred-insecure-toggle")!;
    expect(toggle.type).toBe("checkbox");
    expect(toggle.checked).toBe(false);
    expect(remote.querySelector(".cred-insecure label")?.textContent?.trim()).toBe("Allow insecure (development)");
    expect(remote.querySelector(".cred-insecure-warning")?.textContent)
      .toBe("Sign-in tokens may cross the network in clear text; turning it on asks for approval again.");
    expect(remote.querySelector(".cred-insecure")?.getAttribute("data-state")).toBe("off");
    expect(root.querySelector('.cred-server[data-name="local"] .cred-insecure')).toBeNull();
  });

  it("reflects allow-insecure when it is on", async () => {
    const d = listing();
    d.servers[1].allow_insecure = true;
    m.credentials.mockResolvedValue({ status: "ok", data: d });
    unmount = mountCredentials(root);
    await flush();
    const remote = root.querySelector('.cred-server[data-name="remote"]')!;
    expect(remote.querySelector<HTMLInputElement>(".cred-insecure-toggle")!.checked).toBe(true);
    expect(remote.querySelector(".cred-insecure")?.getAttribute("data-state")).toBe("on");
    expect(remote.querySelector(".cred-insecure-on")?.textContent).toBe("on");
  });

  it("turns allow-insecure on, says approval is needed again, and re-reads the listing", async () => {
    m.setAllowInsecure.mockResolvedValue({ status: "ok", data: null });
    unmount = mountCredentials(root);
    await flush();
    const toggle = root.querySelector<HTMLInputElement>('.cred-server[data-name="remote"] .cred-insecure-toggle')!;
    const on = listing();
    on.servers[1].allow_insecure = true;
    m.credentials.mockResolvedValue({ status: "ok", data: on });
    toggle.click();
    await flush();
    expect(m.setAllowInsecure).toHaveBeenCalledWith("remote", true);
    expect(root.querySelector(".notice")?.textContent).toContain("Approve it again");
    expect(m.credentials).toHaveBeenCalledTimes(2);
    expect(root.querySelector<HTMLInputElement>('.cred-server[data-name="remote"] .cred-insecure-toggle')!.checked).toBe(true);
  });

  it("puts the switch back and says why when the change fails", async () => {
    m.setAllowInsecure.mockResolvedValue({ status: "error", error: { code: "invalid", message: "local runs on this computer" } });
    unmount = mountCredentials(root);
    await flush();
    const toggle = root.querySelector<HTMLInputElement>('.cred-server[data-name="remote"] .cred-insecure-toggle')!;
    toggle.click();
    await flush();
    expect(m.setAllowInsecure).toHaveBeenCalledWith("remote", true);
    expect(toggle.checked).toBe(false);
    expect(toggle.disabled).toBe(false);
    expect(root.querySelector(".error")?.textContent).toBe("local runs on this computer");
  });

  it("says why when the keyring cannot be read", async () => {
    m.credentials.mockResolvedValue({ status: "error", error: { code: "keyring", message: "the keyring is locked" } });
    unmount = mountCredentials(root);
    await flush();
    expect(root.querySelector(".error")?.textContent).toBe("the keyring is locked");
  });
});
