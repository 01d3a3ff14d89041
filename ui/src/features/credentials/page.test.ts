import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const m = vi.hoisted(() => ({ credentials: vi.fn(), signOut: vi.fn(), setClientSecret: vi.fn() }));
vi.mock("../../ipc/bindings", () => ({
  commands: { credentials: m.credentials, signOut: m.signOut, setClientSecret: m.setClientSecret },
  events: { hostChanged: { listen: vi.fn(() => Promise.resolve(() => {})) } },
}));

import { mountCredentials } from "./page";

const flush = async () => { for (let i = 0; i < 20; i++) await Promise.resolve(); };
const NOW = Date.now();
const listing = () => ({
  store: "in the OS keyring",
  providers: [{ provider: "work", profile: "OpenAI", set: true, required: true }],
  servers: [
    { server: "local", remote: false, secrets: [{ field: "API_KEY", source: "secret API_KEY", set: false }], sign_in: null, client_secret_set: false, wants: null },
    {
      server: "remote", remote: true, secrets: [], client_secret_set: true, wants: null,
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

  it("says why when the keyring cannot be read", async () => {
    m.credentials.mockResolvedValue({ status: "error", error: { code: "keyring", message: "the keyring is locked" } });
    unmount = mountCredentials(root);
    await flush();
    expect(root.querySelector(".error")?.textContent).toBe("the keyring is locked");
  });
});
