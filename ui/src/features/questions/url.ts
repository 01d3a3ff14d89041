// The URL a server asks the person to open (AP-07, URL mode). The whole URL is shown as text with
// the registrable domain in bold, so "login.example.com.evil.test" reads as evil.test; Rust's
// warnings (punycode, bare IP address, this computer) are listed. Nothing here loads the URL: no
// link, no image, no prefetch. The browser opens only when the person's "Open in browser" answer
// reaches Rust, which hands the checked URL to the system browser.
import type { QuestionKindDto_Serialize as QuestionKind } from "../../ipc/bindings";
import { h } from "../../app/dom";

export type UrlQuestion = Extract<QuestionKind, { kind: "url" }>;

/** The URL cut around its host, the host around its registrable domain; null when they do not line up. */
export interface UrlParts {
  before: string;
  sub: string;
  domain: string;
  after: string;
}

/** Splits `url` at its host and the host at `domain`; null when the host is not where a URL puts it. */
export function splitUrl(url: string, host: string, domain: string): UrlParts | null {
  const scheme = url.indexOf("://");
  if (scheme < 0 || host === "") return null;
  const start = scheme + 3;
  // Rust refuses user info, so the host follows the scheme at once.
  if (url.slice(start, start + host.length).toLowerCase() !== host.toLowerCase()) return null;
  const end = start + host.length;
  const hostText = url.slice(start, end);
  const d = domain !== "" && hostText.toLowerCase().endsWith(domain.toLowerCase())
    && (hostText.length === domain.length || hostText[hostText.length - domain.length - 1] === ".")
    ? domain.length : hostText.length;
  return {
    before: url.slice(0, start),
    sub: hostText.slice(0, hostText.length - d),
    domain: hostText.slice(hostText.length - d),
    after: url.slice(end),
  };
}

/** The full URL as text, with the registrable domain in a bold `.url-domain` span. */
export function urlText(q: Pick<UrlQuestion, "url" | "host" | "domain">): HTMLElement {
  const parts = splitUrl(q.url, q.host, q.domain);
  if (parts === null) {
    return h("code", { class: "question-url" }, q.url);
  }
  return h("code", { class: "question-url" },
    parts.before, parts.sub, h("strong", { class: "url-domain" }, parts.domain), parts.after);
}

/** The body of a URL question: the message, the URL, who it leads to, and the warnings. */
export function urlBody(q: UrlQuestion): HTMLElement[] {
  const readsAs = q.host_unicode !== "" && q.host_unicode !== q.host
    ? h("p", { class: "url-reads-as" }, "The host reads as ", h("strong", {}, q.host_unicode), ".")
    : null;
  const parts: (HTMLElement | null)[] = [
    q.message.trim() !== "" ? h("blockquote", { class: "question-message" }, q.message) : null,
    h("p", {}, "It asks you to open this address in your web browser:"),
    urlText(q),
    h("p", { class: "url-site" }, "You would be talking to ", h("strong", { class: "url-site-domain" }, q.domain), "."),
    readsAs,
    q.warnings.length > 0
      ? h("ul", { class: "url-warnings", role: "alert" }, ...q.warnings.map((w) => h("li", { class: "url-warning" }, w)))
      : null,
    h("p", { class: "hint" }, "Switchboard has not loaded it. Only “Open in browser” opens it, in your system browser, never in this window."),
  ];
  return parts.filter((p): p is HTMLElement => p !== null);
}
