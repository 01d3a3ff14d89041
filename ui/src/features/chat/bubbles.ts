// Message bubbles: the person's (plain text, pre-wrapped, with attached images) and the model's
// (safe Markdown). Images are shown only through result-view's allowlist: PNG, JPEG, GIF or WebP
// with well-formed base64, as data: URLs; anything else becomes a placeholder (RN-01, RN-03).
import { h } from "../../app/dom";
import { renderImage } from "../catalog";

export interface ImagePart {
  mime_type: string;
  data: string;
}

/** The images of one message, each checked before it becomes a data: URL. */
export function messageImages(images: ImagePart[]): HTMLElement {
  return h("div", { class: "msg-images" }, ...images.map((i) => renderImage(i.data, i.mime_type, "Image")));
}

export function userBubble(text: string, images: ImagePart[] = []): HTMLElement {
  return h("div", { class: "msg msg-user" },
    h("div", { class: "bubble" }, text !== "" ? text : null, images.length > 0 ? messageImages(images) : null));
}

export function assistantBubble(): { el: HTMLElement; body: HTMLElement } {
  const body = h("div", { class: "bubble md" });
  return { el: h("div", { class: "msg msg-assistant" }, body), body };
}
