// Images attached to the next message: an "Attach image" button over a file input (PNG, JPEG,
// GIF, WebP; at most MAX_IMAGES), pasted images, and images a resource brought in. Each is read
// locally as base64, checked against the same allowlist as every shown image (type and
// well-formed base64, size-capped; RN-03) and shown as a removable chip with its thumbnail.
import { h } from "../../app/dom";
import type { ImageDto } from "../../ipc/bindings";
import { IMAGE_TYPES, checkBase64, formatBytes, mimeOf } from "../catalog";

/** Images one message may carry (the host refuses more). */
export const MAX_IMAGES = 8;
/** A bigger image file is refused before it is read (base64 grows it by a third). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

interface Attached extends ImageDto {
  name: string;
}

export interface Attachments {
  /** The "Attach image" button, with its hidden file input inside. */
  picker: HTMLElement;
  /** The chips of the attached images. */
  chips: HTMLElement;
  images(): ImageDto[];
  /** Attaches an image; returns why not, or null. */
  add(img: ImageDto, name: string): string | null;
  /** Reads image files (a file input or a paste) and attaches the good ones. */
  addFiles(files: Iterable<File>): Promise<void>;
  clear(): void;
  restore(images: ImageDto[]): void;
  setDisabled(disabled: boolean): void;
}

/** Checks an image before it is attached; returns why it cannot be, or null. */
export function checkImage(mime: string, data: string): string | null {
  const m = mimeOf(mime);
  if (!IMAGE_TYPES.includes(m)) return `${m || "this type"} is not an image type that can be attached (PNG, JPEG, GIF or WebP)`;
  const b = checkBase64(data);
  return b.ok ? null : b.why;
}

/** A file's contents as base64, read locally. */
export function readBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.onload = () => {
      const url = String(reader.result ?? "");
      const comma = url.indexOf(",");
      resolve(comma >= 0 ? url.slice(comma + 1) : "");
    };
    reader.readAsDataURL(file);
  });
}

/** `report` shows a problem to the person (null clears it). */
export function imageAttachments(report: (message: string | null) => void): Attachments {
  let list: Attached[] = [];
  const input = h("input", {
    type: "file", class: "attach-image-input", accept: IMAGE_TYPES.join(","), multiple: true, tabindex: "-1", "aria-hidden": "true",
  });
  const button = h("button", { type: "button", class: "attach-image", title: `Attach up to ${MAX_IMAGES} images (PNG, JPEG, GIF, WebP)` }, "Attach image");
  const picker = h("span", { class: "attach-image-picker" }, button, input);
  const chips = h("ul", { class: "attach-chips", "aria-label": "Attached images", hidden: true });

  const render = () => {
    chips.hidden = list.length === 0;
    chips.replaceChildren(...list.map((img, i) => {
      const remove = h("button", { type: "button", class: "attach-remove", "aria-label": `Remove ${img.name}`, title: "Remove" }, "×");
      remove.addEventListener("click", () => {
        list = list.filter((_, j) => j !== i);
        render();
        button.focus();
      });
      // Only images that passed checkImage are in the list, so this data: URL is an allowed raster image.
      return h("li", { class: "attach-chip chip" },
        h("img", { class: "attach-thumb", src: `data:${img.mime_type};base64,${img.data}`, alt: "" }),
        h("span", { class: "attach-name" }, img.name),
        remove);
    }));
  };

  const add = (img: ImageDto, name: string): string | null => {
    if (list.length >= MAX_IMAGES) return `${name} not attached: a message carries at most ${MAX_IMAGES} images.`;
    const why = checkImage(img.mime_type, img.data);
    if (why !== null) return `${name} not attached: ${why}.`;
    const b = checkBase64(img.data);
    list.push({ mime_type: mimeOf(img.mime_type), data: b.ok ? b.b64 : img.data, name });
    render();
    return null;
  };

  const addFiles = async (files: Iterable<File>) => {
    const problems: string[] = [];
    for (const f of files) {
      const name = f.name || "image";
      if (!IMAGE_TYPES.includes(mimeOf(f.type))) {
        problems.push(`${name} not attached: only PNG, JPEG, GIF and WebP images can be attached.`);
        continue;
      }
      if (f.size > MAX_IMAGE_BYTES) {
        problems.push(`${name} not attached: it is ${formatBytes(f.size)}; the limit is ${formatBytes(MAX_IMAGE_BYTES)}.`);
        continue;
      }
      if (list.length >= MAX_IMAGES) {
        problems.push(`${name} not attached: a message carries at most ${MAX_IMAGES} images.`);
        continue;
      }
      try {
        const why = add({ mime_type: f.type, data: await readBase64(f) }, name);
        if (why !== null) problems.push(why);
      } catch (e) {
        problems.push(`${name} not attached: ${e instanceof Error ? e.message : String(e)}.`);
      }
    }
    report(problems.length > 0 ? problems.join(" ") : null);
  };

  button.addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    const files = Array.from(input.files ?? []);
    input.value = "";
    void addFiles(files);
  });

  return {
    picker,
    chips,
    images: () => list.map(({ mime_type, data }) => ({ mime_type, data })),
    add,
    addFiles,
    clear: () => {
      list = [];
      render();
    },
    restore: (images) => {
      list = images.map((img, i) => ({ ...img, name: `image ${i + 1}` }));
      render();
    },
    setDisabled: (d) => {
      button.disabled = d;
      input.disabled = d;
    },
  };
}
