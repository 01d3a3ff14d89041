import { describe, expect, it } from "vitest";
import { expiryLabel, registrationLabel, signInLine } from "./format";

const NOW = 1_700_000_000_000;
const signIn = (over: Record<string, unknown> = {}) => ({
  resource: "https://mcp.example.com/mcp",
  current: true,
  issuer: "https://auth.example.com",
  registration: "dynamic" as const,
  client_id: "client_1",
  has_token: true,
  refreshable: true,
  scopes: ["mcp"],
  expires_at_ms: NOW + 59 * 60_000 + 5_000,
  signed_in_at_ms: NOW - 1000,
  ...over,
});
const creds = (over: Record<string, unknown> = {}) => ({
  server: "remote",
  remote: true,
  secrets: [],
  sign_in: null,
  client_secret_set: false,
  wants: null,
  allow_insecure: false,
  ...over,
});

describe("expiryLabel", () => {
  it("reads like the CLI's status", () => {
    expect(expiryLabel(signIn(), NOW)).toMatch(/^expires in 59 min/);
    expect(expiryLabel(signIn({ expires_at_ms: NOW - 1 }), NOW)).toBe("expired; it refreshes on the next call");
    expect(expiryLabel(signIn({ expires_at_ms: NOW - 1, refreshable: false }), NOW)).toBe("expired; sign in again");
    expect(expiryLabel(signIn({ expires_at_ms: null }), NOW)).toBe("no expiry given");
    expect(expiryLabel(signIn({ has_token: false }), NOW)).toBe("no token held; sign in again");
  });
});

describe("registrationLabel", () => {
  it("names every registration kind", () => {
    for (const r of ["pre_registered", "metadata_document", "dynamic", "client_credentials"] as const) {
      expect(registrationLabel(r).length).toBeGreaterThan(5);
    }
  });
});

describe("signInLine", () => {
  it("says what the server asks for first: 401 sign-in, 403 more permissions", () => {
    expect(signInLine(true, undefined)).toEqual({ kind: "needs", text: "Needs sign-in" });
    expect(signInLine(true, creds({ wants: "more_permissions", sign_in: signIn() }))?.text).toBe("Needs more permissions");
    expect(signInLine(false, creds({ wants: "sign_in" }))?.text).toBe("Needs sign-in");
  });

  it("names the issuer of a sign-in in use, and nothing for one that is not", () => {
    expect(signInLine(false, creds({ sign_in: signIn() }))).toEqual({ kind: "signed_in", text: "Signed in at https://auth.example.com" });
    expect(signInLine(false, creds({ sign_in: signIn({ current: false }) }))).toBeNull();
    expect(signInLine(false, creds({ sign_in: signIn({ has_token: false }) }))).toBeNull();
    expect(signInLine(false, creds())).toBeNull();
  });
});
