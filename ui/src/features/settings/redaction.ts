// The Settings page's redaction section (issue 16, point 5): whether what goes to a cloud
// model has secrets and personal data replaced by placeholders, and the person's own
// patterns (one regular expression a line; group 1 is redacted when there is one). Saved by
// its own button, through Rust, which refuses a pattern that does not compile and saves
// nothing then. The per-conversation switch lives in the chat; models on this machine are
// exempt whatever is set here.
import { h } from "../../app/dom";
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { RedactionSettingsDto } from "../../ipc/bindings";

/** The patterns typed, one a line, blank lines dropped. */
export function patternsOf(text: string): string[] {
  return text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
}

/** A pattern the browser cannot compile, with why, or `null` (Rust checks again, in its own dialect). */
export function badPattern(patterns: string[]): string | null {
  for (const p of patterns) {
    try {
      new RegExp(p);
    } catch (e) {
      return `${p}: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  return null;
}

export function redactionSection(): { el: HTMLElement; load(): Promise<void> } {
  const enabled = h("input", { type: "checkbox", class: "settings-redaction-enabled" });
  const patterns = h("textarea", { class: "settings-redaction-patterns", rows: "4", spellcheck: "false", placeholder: "PROJECT-[A-Z]+-\\d+", "aria-label": "Your own patterns, one a line" });
  const save = h("button", { type: "button", class: "settings-redaction-save" }, "Save redaction settings");
  const status = h("p", { class: "settings-status settings-redaction-status", role: "status" });
  const say = (text: string, kind: "" | "error" | "notice") => {
    status.textContent = text;
    status.className = `settings-status settings-redaction-status ${kind}`.trim();
  };
  const show = (s: RedactionSettingsDto) => {
    enabled.checked = s.enabled;
    patterns.value = s.patterns.join("\n");
  };

  async function load(): Promise<void> {
    const r = await attempt(ipc.getRedactionSettings());
    if (r instanceof IpcFailure) return say(`The redaction settings could not be read: ${r.message}`, "error");
    show(r);
  }

  save.addEventListener("click", async () => {
    const list = patternsOf(patterns.value);
    const bad = badPattern(list);
    if (bad !== null) return say(`Not saved: the pattern ${bad}`, "error");
    save.disabled = true;
    say("Saving…", "");
    const r = await attempt(ipc.saveRedactionSettings({ enabled: enabled.checked, patterns: list })).finally(() => (save.disabled = false));
    if (r instanceof IpcFailure) return say(`Not saved: ${r.message}`, "error");
    show(r);
    say("Saved.", "notice");
  });

  const el = h("section", { class: "settings-section settings-redaction", "aria-labelledby": "settings-redaction" },
    h("h2", { id: "settings-redaction" }, "Redaction"),
    h("label", { class: "settings-choice" }, enabled, " Replace secrets and personal data with placeholders before they go to a cloud model"),
    h("p", { class: "hint" }, "API keys and tokens, JWTs, private keys, passwords in URLs, e-mail addresses, card numbers and phone numbers in your messages, attachments, tool results and servers' sampling requests become placeholders such as [REDACTED_EMAIL_1]. When the model uses one in a tool call, the real value is put back on this machine before the call runs, and the approval prompt shows both. Models on this machine (Ollama, LM Studio, vLLM) get the real text: nothing leaves it. Each conversation can switch it off at the top of the chat."),
    h("label", { class: "settings-field" }, h("span", { class: "settings-label" }, "Your own patterns (regular expressions, one a line; group 1 is redacted when there is one)"), patterns),
    h("div", { class: "actions" }, save),
    status);
  return { el, load };
}
