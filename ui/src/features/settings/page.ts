// The Settings page (issue 14, point 7): where the data lives (shown; moved only by starting
// the app with SWITCHBOARD_DATA_DIR, the CLI's --data-dir), the theme (applied as it is
// picked), the provider and model a new chat starts with, a summary of how approvals are
// decided with a way to the Policy page, the MCP Registry URL, the log level (applied at once
// by Rust) and how long an unused server keeps running. Then outbound redaction (its own
// Save: ./redaction.ts) and the keyboard shortcuts.
//
// Everything is saved together by "Save", through Rust, which validates again; a refusal
// keeps the form as typed and says why. A problem reading the settings file is shown at the
// top, as Rust words it (what was reset and where the old file was kept).
import "./settings.css";
import { attempt, ipc, IpcFailure } from "../../ipc/client";
import type { LogLevelDto, ProviderDto, SettingsView_Serialize as SettingsView, ThemeDto } from "../../ipc/bindings";
import { h } from "../../app/dom";
import { applyTheme } from "./theme";
import { secsToMinutes, toSettings } from "./form";
import { shortcutsTable } from "./shortcuts";
import { redactionSection } from "./redaction";

const THEMES: [ThemeDto, string][] = [["system", "System"], ["light", "Light"], ["dark", "Dark"]];
const LEVELS: LogLevelDto[] = ["error", "warn", "info", "debug", "trace"];

function section(title: string, id: string, ...children: (HTMLElement | string | null)[]): HTMLElement {
  return h("section", { class: "settings-section", "aria-labelledby": id }, h("h2", { id }, title), ...children);
}

export function mountSettings(root: HTMLElement): () => void {
  let disposed = false;
  let saved: ThemeDto = "system";
  const status = h("p", { class: "settings-status", role: "status" });
  const warning = h("p", { class: "settings-warning", role: "alert", hidden: true });
  const dataDir = h("input", { class: "settings-data-dir", readonly: true, "aria-label": "Data directory" });
  const dataNote = h("p", { class: "hint settings-data-note" });
  const about = h("p", { class: "settings-version" });
  const themeBoxes = THEMES.map(([value]) => h("input", { type: "radio", name: "settings-theme", value, class: `settings-theme-${value}` }));
  const provider = h("select", { class: "settings-provider", "aria-label": "Default provider" });
  const model = h("input", { class: "settings-model", list: "settings-models", placeholder: "the provider's default", autocomplete: "off", "aria-label": "Default model" });
  const models = h("datalist", { id: "settings-models" });
  const registry = h("input", { type: "url", class: "settings-registry", autocomplete: "off", spellcheck: "false", "aria-label": "Registry URL" });
  const level = h("select", { class: "settings-log-level", "aria-label": "Log level" }, ...LEVELS.map((l) => h("option", { value: l }, l)));
  const levelNote = h("p", { class: "hint settings-log-note" });
  const idle = h("input", { type: "number", min: "0", step: "1", inputmode: "decimal", class: "settings-idle", "aria-label": "Stop an unused server after (minutes)" });
  const warnAt = h("input", { type: "number", min: "0", max: "100", step: "1", class: "settings-tools-warn", "aria-label": "Warn when tool definitions take more of the context than (percent)" });
  const save = h("button", { type: "button", class: "primary settings-save" }, "Save");
  let providers: ProviderDto[] = [];
  const redaction = redactionSection();

  const theme = (): ThemeDto => (themeBoxes.find((b) => b.checked)?.value as ThemeDto | undefined) ?? "system";
  themeBoxes.forEach((b) => b.addEventListener("change", () => applyTheme(theme())));
  const fillModels = () => {
    const p = providers.find((x) => x.name === provider.value);
    models.replaceChildren(...(p?.models ?? []).map((m) => h("option", { value: m })));
  };
  provider.addEventListener("change", fillModels);

  const show = (v: SettingsView) => {
    const s = v.settings;
    saved = s.theme;
    dataDir.value = v.data_dir;
    about.textContent = `Switchboard ${v.version} (commit ${v.commit})`;
    dataNote.textContent = `Your servers, conversations, audit log, logs and these settings live here. To use another folder, start Switchboard with ${v.data_dir_env}=/path/to/folder (the switchboard command line takes --data-dir or the same variable).`;
    warning.hidden = v.warning === null;
    warning.textContent = v.warning ?? "";
    themeBoxes.forEach((b) => (b.checked = b.value === s.theme));
    applyTheme(s.theme);
    const names = providers.map((p) => p.name);
    const chosen = s.default_provider ?? "";
    provider.replaceChildren(
      h("option", { value: "" }, "(the first configured provider)"),
      ...names.map((n) => h("option", { value: n }, n)),
      ...(chosen && !names.includes(chosen) ? [h("option", { value: chosen }, `${chosen} (not configured)`)] : []),
    );
    provider.value = chosen;
    fillModels();
    model.value = s.default_model ?? "";
    registry.value = s.registry_url;
    level.value = s.log_level;
    levelNote.textContent = v.log_env_override
      ? "SWITCHBOARD_LOG or RUST_LOG chose the log filter when the app started; a level saved here replaces it now and is used at the next start only without them."
      : "Applies at once, to the window's log and the log file in the data directory.";
    idle.value = secsToMinutes(s.idle_stop_secs);
    warnAt.value = String(s.tools_warn_percent);
  };

  const load = async () => {
    const [view, list] = await Promise.all([attempt(ipc.getSettings()), attempt(ipc.listProviders())]);
    if (disposed) return;
    if (!(list instanceof IpcFailure)) providers = list;
    if (view instanceof IpcFailure) {
      status.textContent = `The settings could not be read: ${view.message}`;
      status.className = "settings-status error";
      return;
    }
    show(view);
  };

  save.addEventListener("click", async () => {
    const form = toSettings({
      theme: theme(), provider: provider.value, model: model.value, registry: registry.value,
      logLevel: level.value as LogLevelDto, idleMinutes: idle.value, warnPercent: warnAt.value,
    });
    if (!form.ok) {
      status.textContent = form.why;
      status.className = "settings-status error";
      return;
    }
    save.disabled = true;
    status.textContent = "Saving…";
    status.className = "settings-status";
    const r = await attempt(ipc.saveSettings(form.settings)).finally(() => (save.disabled = false));
    if (disposed) return;
    if (r instanceof IpcFailure) {
      status.textContent = `Not saved: ${r.message}`;
      status.className = "settings-status error";
      return;
    }
    show(r);
    status.textContent = "Saved.";
    status.className = "settings-status notice";
  });

  const policyLink = h("button", { type: "button", class: "settings-open-policy", onclick: () => document.getElementById("tab-policy")?.click() }, "Open the Policy page");
  const label = (text: string, field: HTMLElement, ...more: (HTMLElement | null)[]) =>
    h("label", { class: "settings-field" }, h("span", { class: "settings-label" }, text), field, ...more);
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Settings")),
    warning,
    h("form", { class: "settings-form", onsubmit: (e: Event) => e.preventDefault() },
      section("Data", "settings-data", label("Data directory", dataDir), dataNote),
      section("Appearance", "settings-appearance",
        h("fieldset", { class: "settings-themes" }, h("legend", {}, "Theme"),
          ...THEMES.map(([, text], i) => h("label", { class: "settings-choice" }, themeBoxes[i] ?? null, " ", text)))),
      section("Chat", "settings-chat",
        label("Default provider", provider),
        label("Default model", model, models),
        h("p", { class: "hint" }, "A new chat starts with these. Providers are added on the Chat page (Providers…)."),
        label("Warn when tool definitions take more than (% of the model's context, 0 = never)", warnAt),
        h("p", { class: "hint" }, "Every turn sends the definitions of the tools offered; the chat says what they cost before you send.")),
      section("Approvals", "settings-approvals",
        h("p", {}, "Every tool call is checked against your policy: deny wins over ask, ask over allow, and a call that no rule matches asks you. Tool annotations from a server relax nothing unless you tag it trusted."),
        h("p", { class: "hint" }, "When a request waits while Switchboard is in the background, a desktop notification says so, and the window title and the tray icon count what waits."),
        h("div", { class: "actions" }, policyLink)),
      section("Servers", "settings-servers",
        label("Stop an unused server after (minutes, 0 = never)", idle),
        label("MCP Registry URL", registry)),
      section("Logging", "settings-logging", label("Log level", level), levelNote),
      h("div", { class: "actions settings-actions" }, save),
      status,
    ),
    redaction.el,
    section("Keyboard shortcuts", "settings-shortcuts", shortcutsTable()),
    section("About", "settings-about", about,
      h("p", { class: "hint" }, "The command line says the same with switchboard --version; name both in a bug report.")),
  );
  void load();
  void redaction.load().catch(() => undefined);
  return () => {
    disposed = true;
    // Leaving with a theme picked but not saved: back to the saved one.
    applyTheme(saved);
  };
}

/** At start-up: the saved theme, before any page needs it. */
export async function applySavedTheme(): Promise<void> {
  const r = await attempt(ipc.getSettings()).catch(() => null);
  if (r && !(r instanceof IpcFailure)) applyTheme(r.settings.theme);
}
