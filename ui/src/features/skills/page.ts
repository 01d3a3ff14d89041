// The Skills page: every skill the running servers offer (io.modelcontextprotocol/skills), with
// its state, files and what changed since it was approved; held skills are approved in place.
// Nothing of a skill is read here: its files are fetched only when it is attached to a message.
import { h } from "../../app/dom";
import { skillsSection } from "./skill-picker";

export function mountSkills(root: HTMLElement): () => void {
  const body = h("div", { class: "skills-page" }, skillsSection());
  const reload = h("button", { type: "button", class: "skills-reload" }, "Reload");
  reload.addEventListener("click", () => body.replaceChildren(skillsSection()));
  root.replaceChildren(
    h("header", { class: "bar" }, h("h1", {}, "Skills"), reload),
    h("p", { class: "hint" }, "Skills are instructions and files a server offers for a conversation. Attach one from the chat composer; a skill is read, and checked against its manifest, only then."),
    body,
  );
  return () => {};
}
