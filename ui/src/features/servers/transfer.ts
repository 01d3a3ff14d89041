// Import from and export to other hosts' config files. The import shows a preview first:
// which servers would be added (under which names), which values move to the keyring, and
// what is dropped; nothing is stored until the user confirms, and nothing starts or connects
// afterwards (every server, local or remote, waits for the trust dialog).
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { FormatDto, ImportPreviewDto, NoteDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { confirmReplace } from "./confirm-replace";
import { modal } from "../../app/modal";

const FORMATS: [FormatDto | "", string][] = [
  ["", "Detect automatically"],
  ["claude", "Claude Desktop (claude_desktop_config.json)"],
  ["vscode", "VS Code (.vscode/mcp.json)"],
  ["cursor", "Cursor (mcp.json)"],
];

const formatName = (f: FormatDto) => ({ claude: "Claude Desktop", vscode: "VS Code", cursor: "Cursor" })[f];

function formatSelect(withAuto: boolean): HTMLSelectElement {
  return h("select", { class: "format" },
    ...FORMATS.filter(([v]) => withAuto || v !== "").map(([v, label]) => h("option", { value: v }, label)));
}

function notesList(notes: NoteDto[]): HTMLElement | null {
  if (notes.length === 0) return null;
  return h("ul", { class: "import-notes" }, ...notes.map((n) => h("li", { class: `note ${n.kind}` }, n.message)));
}

/** Renders a preview: one row per server with the secrets that go to the keyring. */
export function previewView(p: ImportPreviewDto): HTMLElement {
  if (p.servers.length === 0) {
    return h("div", { class: "preview" }, h("p", {}, "No servers to import in this file."), notesList(p.notes));
  }
  return h("div", { class: "preview" },
    h("p", {}, `${p.servers.length} server${p.servers.length === 1 ? "" : "s"} will be added (read as a ${formatName(p.format)} file); none will start or connect until you approve it.`),
    h("table", { class: "preview-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Kind"), h("th", {}, "Runs / connects to"), h("th", {}, "To the keyring"))),
      h("tbody", {}, ...p.servers.map((s) =>
        h("tr", { "data-name": s.name },
          h("td", {}, s.name),
          h("td", {}, s.sandboxed == null ? s.kind : `${s.kind} · ${s.sandboxed ? "sandboxed" : "not sandboxed"}`),
          h("td", {}, h("code", {}, s.summary)),
          h("td", {}, s.secrets.length > 0 ? s.secrets.join(", ") : "—"),
        ))),
    ),
    notesList(p.notes),
  );
}

/** The import dialog: pick a file or paste JSON, see the preview, confirm. */
export function importDialog(onImported: (message: string) => void): HTMLDialogElement {
  const file = h("input", { type: "file", accept: ".json,.jsonc,application/json", class: "import-file" });
  const text = h("textarea", { class: "import-text", rows: "8", placeholder: "…or paste the JSON here", spellcheck: "false" });
  const format = formatSelect(true);
  const preview = h("div", { class: "preview-area", "aria-live": "polite" });
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  const confirm = h("button", { class: "primary", disabled: true }, "Import");
  const cancel = h("button", { autofocus: true }, "Cancel");
  const m = modal("import-dialog", "Import servers", [
    h("h2", {}, "Import servers"),
    h("p", { class: "hint" }, "From Claude Desktop, VS Code or Cursor. Values that look like credentials move to the OS keyring; nothing starts."),
    h("label", {}, "Config file ", file),
    text,
    h("label", {}, "Format ", format),
    failure,
    preview,
    h("div", { class: "actions" }, cancel, confirm),
  ]);

  const chosen = (): FormatDto | null => (format.value === "" ? null : (format.value as FormatDto));
  let seq = 0;
  const update = async () => {
    const mine = ++seq;
    confirm.disabled = true;
    failure.hidden = true;
    if (text.value.trim() === "") return preview.replaceChildren();
    const r = await attempt(ipc.importPreview(text.value, chosen()));
    if (mine !== seq) return;
    if (r instanceof IpcFailure) {
      preview.replaceChildren();
      failure.textContent = r.message;
      failure.hidden = false;
      return;
    }
    preview.replaceChildren(previewView(r));
    confirm.disabled = r.servers.length === 0;
    confirm.textContent = `Import ${r.servers.length} server${r.servers.length === 1 ? "" : "s"}`;
  };
  let timer: number | undefined;
  text.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void update(), 250);
  });
  format.addEventListener("change", () => void update());
  file.addEventListener("change", async () => {
    const f = file.files?.[0];
    if (!f) return;
    if (f.size > 4 * 1024 * 1024) {
      failure.textContent = `${f.name} is ${Math.round(f.size / 1024)} KiB; a config file is at most 4 MiB.`;
      failure.hidden = false;
      return;
    }
    text.value = await f.text();
    await update();
  });
  cancel.addEventListener("click", m.close);
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    let r = await attempt(ipc.importConfig(text.value, chosen(), false));
    if (r instanceof IpcFailure && r.code === "secret_exists" && (await confirmReplace(r.message))) {
      r = await attempt(ipc.importConfig(text.value, chosen(), true));
    }
    if (r instanceof IpcFailure) {
      failure.textContent = r.message;
      failure.hidden = false;
      confirm.disabled = false;
      return;
    }
    text.value = "";
    m.close();
    const secrets = r.secrets_stored.length;
    onImported(`Imported ${r.added.join(", ")}${secrets > 0 ? `; ${secrets} secret${secrets === 1 ? "" : "s"} stored in the keyring` : ""}. Nothing starts or connects before you approve it: review each server.`);
  });
  return m.dialog;
}

/** The export dialog: the servers in another host's format, secrets as references only. */
export function exportDialog(): HTMLDialogElement {
  const format = formatSelect(false);
  const out = h("textarea", { class: "export-text", rows: "14", readonly: true, spellcheck: "false" });
  const notes = h("ul", { class: "import-notes" });
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  const copy = h("button", {}, "Copy");
  const close = h("button", { autofocus: true }, "Close");
  const m = modal("export-dialog", "Export servers", [
    h("h2", {}, "Export servers"),
    h("label", {}, "Format ", format),
    h("p", { class: "hint" }, "Secrets are written as references, never their values."),
    out, notes, failure,
    h("div", { class: "actions" }, close, copy),
  ]);
  const load = async () => {
    const r = await attempt(ipc.exportConfig(format.value as FormatDto));
    if (r instanceof IpcFailure) {
      failure.textContent = r.message;
      failure.hidden = false;
      return;
    }
    failure.hidden = true;
    out.value = r.text;
    notes.replaceChildren(...r.notes.map((n) => h("li", {}, n)));
  };
  format.addEventListener("change", () => void load());
  close.addEventListener("click", m.close);
  copy.addEventListener("click", async () => {
    out.select();
    try {
      await navigator.clipboard.writeText(out.value);
      copy.textContent = "Copied";
    } catch {
      copy.textContent = "Selected: press Ctrl+C";
    }
  });
  void load();
  return m.dialog;
}
