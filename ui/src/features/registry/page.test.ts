import { describe, expect, it } from "vitest";
import type { RegistryDetailDto_Serialize as RegistryDetailDto } from "../../ipc/bindings";
import { detailDialog } from "./page";

const detail: RegistryDetailDto = {
  entry: { name: "io.x/a", title: null, version: "1.0.0", description: "d".repeat(100_000), repository: null, installable: true },
  suggested_name: "a",
  options: [
    { index: 0, label: "cargo x 1.0.0", refused: "packages of registry type \"cargo\" are not supported", inputs: [] },
    { index: 1, label: "npm x 1.0.0", refused: null, inputs: [
      { kind: "env", name: "API_KEY", description: "key", required: true, secret: true, default: null, choices: [] },
      { kind: "arg", name: "--mode", description: "", required: false, secret: false, default: "fast", choices: ["fast", "slow"] },
    ] },
  ],
};

describe("detailDialog", () => {
  it("disables refused options, says why, and asks secrets in password fields", () => {
    const d = detailDialog(detail, () => {});
    const radios = [...d.querySelectorAll<HTMLInputElement>("input[type=radio]")];
    expect(radios.map((r) => r.disabled)).toEqual([true, false]);
    expect(radios[1].checked).toBe(true);
    expect(d.textContent).toContain("cannot be used");
    const secret = d.querySelector<HTMLInputElement>("[data-key='env:API_KEY']");
    expect(secret?.type).toBe("password");
    expect(d.querySelector("select[data-key='arg:--mode']")).not.toBeNull();
    expect(d.querySelector(".description")?.textContent?.length).toBeLessThan(2100);
    expect(d.querySelector<HTMLInputElement>(".registry-server-name")?.value).toBe("a");
  });

  it("refuses to install while a required field is empty", () => {
    const d = detailDialog(detail, () => { throw new Error("must not install"); });
    d.querySelector<HTMLButtonElement>(".registry-install")?.click();
    return new Promise<void>((done) => setTimeout(() => {
      expect(d.querySelector(".error")?.textContent).toContain("API_KEY");
      done();
    }, 0));
  });
});

describe("the install dialog and the cost", () => {
  it("says before installing that the tools' cost is unknown until the server first runs", () => {
    const d = detailDialog(detail, () => {});
    expect(d.querySelector(".registry-cost")?.textContent).toContain("unknown until it first runs");
  });
});
