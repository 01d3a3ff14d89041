// Pure presentation helpers for sign-ins and credentials, free of the DOM so they are
// unit-tested: how an expiry reads, how a registration is named, and what a remote server's
// card says about its sign-in.
import type {
  RegistrationDto,
  ServerCredentialsDto_Serialize as ServerCredentials,
  SignInDto_Serialize as SignIn,
} from "../../ipc/bindings";

/** The access token's expiry as the CLI says it (`switchboard auth status`). */
export function expiryLabel(s: Pick<SignIn, "expires_at_ms" | "refreshable" | "has_token">, nowMs: number): string {
  if (!s.has_token) return "no token held; sign in again";
  if (s.expires_at_ms == null) return "no expiry given";
  if (s.expires_at_ms > nowMs) {
    const min = Math.floor((s.expires_at_ms - nowMs) / 60000);
    const when = new Date(s.expires_at_ms).toLocaleString();
    return min >= 1 ? `expires in ${min} min (${when})` : `expires in under a minute (${when})`;
  }
  return s.refreshable ? "expired; it refreshes on the next call" : "expired; sign in again";
}

/** How the client was registered, in words. */
export function registrationLabel(r: RegistrationDto): string {
  switch (r) {
    case "pre_registered":
      return "a client you registered";
    case "metadata_document":
      return "Switchboard's client metadata document";
    case "dynamic":
      return "registered automatically";
    case "client_credentials":
      return "client credentials (no person)";
  }
}

/** A sign-in that is in use: tokens held, for the server's current URL. */
export function signedIn(c: ServerCredentials | undefined): SignIn | null {
  const s = c?.sign_in;
  return s && s.has_token && s.current ? s : null;
}

/** What a remote server's card says about signing in, if anything: the server's own answer
 * (401: needs sign-in, 403: needs more permissions) first, then a sign-in in use. */
export function signInLine(
  reasonIsAuth: boolean,
  c: ServerCredentials | undefined,
): { kind: "needs" | "signed_in"; text: string } | null {
  if (reasonIsAuth || c?.wants) {
    return {
      kind: "needs",
      text: c?.wants === "more_permissions" ? "Needs more permissions" : "Needs sign-in",
    };
  }
  const s = signedIn(c);
  if (s) return { kind: "signed_in", text: `Signed in at ${s.issuer ?? "an unnamed authorization server"}` };
  return null;
}
