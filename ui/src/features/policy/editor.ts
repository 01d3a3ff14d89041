// "Edit as a file": the user rules as TOML (export_policy), edited in a textarea and saved with
// import_policy. Rust parses and checks the whole text first: on a mistake it answers with the
// error and nothing changes; on success the user rules are replaced and the grants stay.
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import { h } from "../../app/dom";

export interface EditorSection {
  el: HTMLElement;
  /** Fills the editor from the stored policy, unless the user has unsaved edits. */
  load: (force?: boolean) => Promise<void>;
}

/** `onSaved` runs after a successful save (the table re-reads the rules). */
export function editorSection(onSaved: () => Promise<unknown> | void): EditorSection {
  let dirty = false;
  const text = h("textarea", {
    class: "policy-editor", spellcheck: "false", autocomplete: "off", rows: "16",
    "aria-label": "Policy rules (TOML)", "aria-describedby": "policy-editor-help",
  });
  const save = h("button", { type: "button", class: "primary policy-save" }, "Save");
  const revert = h("button", { type: "button", class: "policy-revert" }, "Discard edits");
  const error = h("pre", { class: "policy-error error", role: "alert", hidden: true });
  const status = h("p", { class: "policy-status notice", role: "status", hidden: true });
  const staleNote = h("p", { class: "policy-stale hint", hidden: true },
    "The rules changed since you started editing (a removal or a grant elsewhere). Saving replaces the user rules with this text.");
  const say = (el: HTMLElement, m: string | null) => {
    el.hidden = m === null;
    el.textContent = m ?? "";
  };

  const load = async (force = false) => {
    if (dirty && !force) {
      staleNote.hidden = false;
      return;
    }
    const r = await attempt(ipc.exportPolicy());
    if (r instanceof IpcFailure) return say(error, r.message);
    text.value = r;
    dirty = false;
    staleNote.hidden = true;
    revert.disabled = true;
  };
  text.addEventListener("input", () => {
    dirty = true;
    revert.disabled = false;
    say(status, null);
  });
  revert.addEventListener("click", () => {
    say(error, null);
    void load(true);
  });
  save.addEventListener("click", async () => {
    save.disabled = true;
    say(status, null);
    say(error, null);
    try {
      const r = await attempt(ipc.importPolicy(text.value));
      if (r instanceof IpcFailure) {
        // Rust checked the whole text and kept the policy as it was.
        say(error, r.message);
        return;
      }
      const n = r;
      dirty = false;
      staleNote.hidden = true;
      revert.disabled = true;
      say(status, n === null ? "Rules saved; grants kept." : `${n} ${n === 1 ? "rule" : "rules"} saved; grants kept.`);
      await onSaved();
    } finally {
      save.disabled = false;
    }
  });
  revert.disabled = true;
  const el = h("section", { class: "policy-file", "aria-labelledby": "policy-file-title" },
    h("h2", { id: "policy-file-title" }, "Edit as a file"),
    h("p", { class: "hint", id: "policy-editor-help" },
      "The user rules as TOML. Saving checks the whole text first: on a mistake nothing changes. Grants are not in this file and are kept."),
    text, staleNote, error, status,
    h("div", { class: "actions" }, revert, save),
  );
  return { el, load };
}
