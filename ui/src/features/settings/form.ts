// The Settings page's form logic, kept apart from the DOM so it can be tested: the idle-stop
// time as the person types it (minutes, 0 = never) and the checks that give a clear sentence
// before Rust is asked (Rust checks again and has the last word).
import type { SettingsDto_Deserialize as SettingsDto } from "../../ipc/bindings";

/** The bounds the core accepts (switchboard_core::settings). */
export const IDLE_MIN_SECS = 30;
export const IDLE_MAX_SECS = 7 * 24 * 3600;

/** Seconds as minutes for the field, without a trailing ".0". */
export function secsToMinutes(secs: number): string {
  const m = secs / 60;
  return Number.isInteger(m) ? String(m) : m.toFixed(1);
}

/** The field's minutes as seconds, or why not. */
export function minutesToSecs(text: string): { ok: true; secs: number } | { ok: false; why: string } {
  const t = text.trim();
  if (t === "") return { ok: false, why: "Say after how many minutes an unused server stops (0 for never)." };
  const m = Number(t);
  if (!Number.isFinite(m) || m < 0) return { ok: false, why: "The idle time must be a number of minutes, 0 or more." };
  const secs = Math.round(m * 60);
  if (secs !== 0 && (secs < IDLE_MIN_SECS || secs > IDLE_MAX_SECS)) {
    return { ok: false, why: "The idle time must be 0 (never stop) or between half a minute and 7 days (10080 minutes)." };
  }
  return { ok: true, secs };
}

/** Why a registry URL will be refused, or null. */
export function registryProblem(url: string): string | null {
  const u = url.trim();
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    return "The registry URL must be a full URL, like https://registry.modelcontextprotocol.io";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "The registry URL must start with https:// (or http://).";
  if (parsed.username || parsed.password) return "The registry URL must not carry a user name or password.";
  return null;
}

/** The raw field values of the form. */
export interface FormValues {
  theme: SettingsDto["theme"];
  provider: string;
  model: string;
  registry: string;
  logLevel: SettingsDto["log_level"];
  idleMinutes: string;
  /** The share of a model's context the tool definitions may take before the chat warns. */
  warnPercent: string;
}

/** The field's percent as a whole number 0-100 (0 = never warn), or why not. */
export function warnPercent(text: string): { ok: true; percent: number } | { ok: false; why: string } {
  const t = text.trim();
  const n = Number(t);
  if (t === "" || !Number.isInteger(n) || n < 0 || n > 100) {
    return { ok: false, why: "The tools warning must be a whole percent between 0 (never warn) and 100." };
  }
  return { ok: true, percent: n };
}

/** The settings to save, or the first reason not to. */
export function toSettings(v: FormValues): { ok: true; settings: SettingsDto } | { ok: false; why: string } {
  const idle = minutesToSecs(v.idleMinutes);
  if (!idle.ok) return idle;
  const warn = warnPercent(v.warnPercent);
  if (!warn.ok) return warn;
  const reg = registryProblem(v.registry);
  if (reg) return { ok: false, why: reg };
  return {
    ok: true,
    settings: {
      theme: v.theme,
      default_provider: v.provider.trim() || null,
      default_model: v.model.trim() || null,
      registry_url: v.registry.trim(),
      log_level: v.logLevel,
      idle_stop_secs: idle.secs,
      tools_warn_percent: warn.percent,
    },
  };
}
