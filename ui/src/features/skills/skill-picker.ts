// Skills (io.modelcontextprotocol/skills) of the running servers: the "Attach skill" picker of
// the chat composer, and the list the catalog shows. Listing reads manifests only; a skill's
// SKILL.md is read (and verified by the host: size, digest, frontmatter) only when the person
// attaches it. A skill never approved, or changed since, shows what it lists (and what changed)
// with an "Approve" button naming the fingerprint shown, so an approval covers exactly what was
// seen. Every server string goes in as text.
import { attempt, ipc, IpcFailure, thrown } from "../../ipc/client";
import type { SkillDto } from "../../ipc/bindings";
import { h, matchesQuery } from "../../app/dom";
import { modal } from "../../app/modal";
import "./skills.css";

/** Text the host accepts in one message (512 KB); an attachment may not push past it. */
export const MAX_TEXT = 512 * 1024;

/** Where an attached skill goes: the composer of a conversation. */
export interface SkillTarget {
  text(): string;
  setText(text: string): void;
  /** The conversation the message goes into ("" for one not started yet). */
  conversation(): string;
  /** Notes that the message now carries something from `server`. */
  from(server: string): void;
}


/** A fenced block headed by the skill, that no backtick run inside `text` can close early. */
export function skillBlock(name: string, uri: string, text: string): string {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `Attached skill ${name} (${uri}):\n${fence}\n${text.replace(/\n$/, "")}\n${fence}`;
}

/** Appends a skill's text to the composer; returns why it could not be, or null. */
export function attachSkill(name: string, uri: string, text: string, target: SkillTarget): string | null {
  const block = skillBlock(name, uri, text);
  const current = target.text().replace(/\s+$/, "");
  const next = current === "" ? block : `${current}\n\n${block}`;
  if (next.length > MAX_TEXT) return `The skill ${name} is too long to attach: a message holds at most 512 KB of text.`;
  target.setText(next);
  return null;
}

const STATE: Record<string, string> = { approved: "approved", new: "new: held for review", changed: "changed: held for review" };

/** One skill: its name, server, state and description, its files, what changed, and actions. */
export function skillRow(s: SkillDto, actions: { attach?: () => void; approved: (s: SkillDto) => void; report: (m: string | null) => void }): HTMLElement {
  const state = s.invalid !== null ? "invalid" : s.state;
  const details = h("details", { class: "skill-details" },
    h("summary", {}, `${s.files.length === 0 && s.dynamic ? "dynamic" : `${s.files.length} file${s.files.length === 1 ? "" : "s"}`}`),
    h("ul", { class: "skill-files" }, ...s.files.map((f) => h("li", {}, h("code", {}, f.uri), ` ${f.size} bytes`))));
  const row = h("li", { class: `skill-row skill-${state}`, "data-server": s.server, "data-skill": s.name },
    h("strong", {}, s.name), " ", h("span", { class: "hint" }, s.server), " ",
    h("span", { class: "skill-state chip" }, s.invalid !== null ? "invalid" : (STATE[s.state] ?? s.state)),
    h("p", { class: "skill-description" }, s.description),
    details);
  if (s.invalid !== null) row.append(h("p", { class: "error" }, s.invalid));
  if (s.changes.length > 0) row.append(h("ul", { class: "skill-changes", "aria-label": "What changed" }, ...s.changes.map((c) => h("li", {}, c))));
  if (s.invalid !== null) return row;
  if (s.state !== "approved") {
    const approve = h("button", { type: "button", class: "skill-approve" }, "Approve");
    approve.addEventListener("click", async () => {
      approve.disabled = true;
      const r = await attempt(ipc.approveSkill(s.server, s.name, s.fingerprint)).catch(thrown);
      approve.disabled = false;
      if (r instanceof IpcFailure) return actions.report(r.message);
      actions.report(null);
      actions.approved(r);
    });
    row.append(approve);
  } else if (actions.attach !== undefined) {
    const attach = h("button", { type: "button", class: "skill-attach" }, "Attach");
    attach.addEventListener("click", () => actions.attach?.());
    row.append(attach);
  }
  return row;
}

/** Loads the skills of the running servers into `list`, with `status` saying how it went. */
async function load(list: HTMLElement, status: HTMLElement, row: (s: SkillDto, rerender: () => void) => HTMLElement, filter?: HTMLInputElement): Promise<void> {
  const r = await attempt(
ipc.listSkills()).catch(thrown);
  if (r instanceof IpcFailure) {
    status.textContent = r.message;
    status.classList.add("error");
    return;
  }
  const skills = r.flatMap((s) => s.skills);
  const problems = r.filter((s) => s.error !== null).map((s) => `${s.server}: ${s.error}`);
  const render = () => {
    const q = filter?.value.trim().toLowerCase() ?? "";
    const shown = skills.filter((s) => matchesQuery(q, s.server, s.name, s.description, s.uri));
    list.replaceChildren(...shown.map((s) => row(s, () => void load(list, status, row, filter))));
    status.textContent = [skills.length === 0 ? "The running servers offer no skills." : shown.length === 0 ? "No skill matches." : "", ...problems].filter((x) => x !== "").join(" ");
  };
  if (filter !== undefined) filter.oninput = render;
  render();
}

/** The catalog's skills section: every skill of the running servers, approvable in place. */
export function skillsSection(): HTMLElement {
  const status = h("p", { class: "skills-status hint", role: "status" }, "Loading skills…");
  const list = h("ul", { class: "skill-list", "aria-label": "Skills" });
  const report = (m: string | null) => {
    status.textContent = m ?? "";
    status.classList.toggle("error", m !== null);
  };
  const row = (s: SkillDto, rerender: () => void) => skillRow(s, { approved: rerender, report });
  void load(list, status, row);
  return h("section", { class: "skills" }, h("h2", {}, "Skills"), status, list);
}

/** The "Attach skill" button. `report` shows a problem in the page (null clears it). */
export function skillPicker(target: SkillTarget, report: (message: string | null) => void): HTMLButtonElement {
  const button = h("button", { type: "button", class: "attach-skill" }, "Attach skill");
  button.addEventListener("click", () => {
    const filter = h("input", { type: "search", class: "skill-filter", placeholder: "Filter skills", "aria-label": "Filter skills", autocomplete: "off" });
    const list = h("ul", { class: "skill-list", "aria-label": "Skills" });
    const status = h("p", { class: "skill-picker-status hint", role: "status" }, "Loading the skills of the running servers…");
    const { dialog, close } = modal("add-dialog skill-picker", "Attach a skill", [
      h("h2", {}, "Attach a skill"),
      filter, status, list,
      h("div", { class: "actions" }, h("button", { type: "button", class: "skill-picker-close", onclick: () => close() }, "Cancel")),
    ]);
    const say = (m: string | null) => {
      status.textContent = m ?? "";
      status.classList.toggle("error", m !== null);
    };
    let reading = false;
    const choose = async (s: SkillDto) => {
      if (reading) return;
      reading = true;
      say(null);
      status.textContent = `Reading ${s.name}…`;
      const r = await attempt(ipc.readSkill(s.server, s.name, target.conversation())).catch(thrown);
      reading = false;
      if (r instanceof IpcFailure) return say(r.message);
      const why = attachSkill(s.name, r.uri, r.text, target);
      if (why !== null) return say(why);
      target.from(s.server);
      report(null);
      close();
      button.focus();
    };
    const row = (s: SkillDto, rerender: () => void) => skillRow(s, { attach: () => void choose(s), approved: rerender, report: say });
    void load(list, status, row, filter);
    document.body.append(dialog);
    queueMicrotask(() => filter.focus());
  });
  return button;
}
