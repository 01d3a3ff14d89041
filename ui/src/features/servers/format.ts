// Pure presentation helpers for the servers page: what a status badge says, how a backoff
// countdown reads. Kept free of the DOM so they are unit-tested.
import type {
  ServerRow_Serialize as ServerRow,
  StatusDto_Serialize as StatusDto,
  TrustStateDto,
} from "../../ipc/bindings";

export type Tone = "ok" | "busy" | "warn" | "bad" | "idle";

export function statusBadge(s: StatusDto, nowMs: number): { label: string; tone: Tone } {
  switch (s.kind) {
    case "running":
      return { label: `running · ${s.tools ?? 0} tools`, tone: "ok" };
    case "starting":
      return { label: "starting…", tone: "busy" };
    case "backoff": {
      const secs = s.retry_at_ms == null ? 0 : Math.max(0, Math.ceil((s.retry_at_ms - nowMs) / 1000));
      return { label: `restarting in ${secs}s`, tone: "warn" };
    }
    case "failed":
      return { label: "failed", tone: "bad" };
    case "needs_trust":
      return { label: "needs approval", tone: "warn" };
    case "stopped":
      return { label: "stopped", tone: "idle" };
  }
}

export function trustLabel(t: TrustStateDto): string | null {
  switch (t) {
    case "not_approved":
      return "Review and approve what it runs or where it connects before it can start.";
    case "changed":
      return "What it runs or sends changed since you approved it. Review it again.";
    case "unresolvable":
      return "Its command cannot be found. Run `switchboard doctor` for details.";
    default:
      return null;
  }
}

/** The badge for a row: an unapproved server that has not been started yet still "needs
 * approval", which is what a person has to do next. */
export function rowBadge(row: ServerRow, nowMs: number): { label: string; tone: Tone } {
  const unapproved = row.trust === "not_approved" || row.trust === "changed";
  if (unapproved && row.status.kind === "stopped") return { label: "needs approval", tone: "warn" };
  // Servers start when their tools are needed; a stopped one is waiting, not broken.
  if (row.status.kind === "stopped" && row.enabled && !row.always_on) return { label: "starts when needed", tone: "idle" };
  return statusBadge(row.status, nowMs);
}

/** Servers sorted the way a person scans them: problems first, then by name. */
/** Servers in name order. The order does not follow status: a card that moved whenever a
 * neighbour crash-looped would jump out from under the pointer (badges show the problems). */
export function sortRows(rows: ServerRow[]): ServerRow[] {
  return [...rows].sort((a, b) => a.name.localeCompare(b.name));
}

/** A byte count as people say it: "16 MiB", "256 KiB", "1500 bytes". */
export function bytesLabel(n: number): string {
  const MIB = 1024 * 1024;
  if (n >= MIB && n % MIB === 0) return `${n / MIB} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** What a person can do about why a server is down, when the reason says (the typed reason,
 * never the sentence): a sign-in for credentials, the cap for an oversized message. */
export function reasonAction(s: StatusDto, server = "NAME"): { signIn: boolean; note: string } | null {
  switch (s.reason) {
    case "auth_required":
      return {
        signIn: true,
        note: "It asks you to sign in. Sign in shows you the authorization server's domain, then opens its page in your browser. (A static token can go in an Authorization header instead: use Edit.)",
      };
    case "message_too_large":
      return {
        signIn: false,
        note: `It sent a message over the ${s.cap_bytes == null ? "message" : bytesLabel(s.cap_bytes)} cap, which protects Switchboard's memory. If its answers are really this large, raise the cap: switchboard server limits ${server} --max-message-mb N`,
      };
    default:
      return null;
  }
}

/** The badge of a remote server with "allow insecure (development)" on (AU-10), else `null`. */
export function insecureBadge(s: Pick<ServerRow, "allow_insecure">): { label: string; tone: Tone; title: string } | null {
  if (!s.allow_insecure) return null;
  return {
    label: "insecure (dev)",
    tone: "bad",
    title: "Allow insecure (development) is on: its sign-in tokens may cross the network in clear text. Turn it off on the Credentials page.",
  };
}
