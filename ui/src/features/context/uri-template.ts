// RFC 6570 URI templates, the subset MCP resource templates use: simple `{var}`, reserved
// `{+var}`, fragment `{#var}`, path `{/var}`, label `{.var}`, query `{?a,b}` / `{&a}`, with
// comma lists. Values are what the user typed; they are percent-encoded so a value can never
// change the shape of the URI outside its own slot.

type Op = "" | "+" | "#" | "/" | "." | "?" | "&" | ";";
const OPS = new Set(["+", "#", "/", ".", "?", "&", ";"]);

export interface Expression { op: Op; names: string[] }

/** The expressions of a template, in order. Malformed braces are left as literal text. */
export function parseTemplate(t: string): Expression[] {
  const out: Expression[] = [];
  for (const m of t.matchAll(/\{([^{}]*)\}/g)) {
    let body = m[1] ?? "";
    let op: Op = "";
    if (body !== "" && OPS.has(body[0] ?? "")) {
      op = body[0] as Op;
      body = body.slice(1);
    }
    const names = body.split(",").map((n) => n.replace(/\*$/, "").replace(/:\d+$/, "").trim()).filter((n) => n !== "");
    if (names.length > 0) out.push({ op, names });
  }
  return out;
}

/** Every variable name of a template, each once. */
export function templateVariables(t: string): string[] {
  return [...new Set(parseTemplate(t).flatMap((e) => e.names))];
}

function encode(v: string, reserved: boolean): string {
  // encodeURIComponent leaves !'()* alone; RFC 6570 unreserved does not include them.
  const strict = encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  if (!reserved) return strict;
  // Reserved characters (RFC 3986 gen-delims and sub-delims) pass through unencoded.
  return strict.replace(/%(2[1346789ABCF]|3[ABDF]|40|5B|5D)/gi, (pct) => decodeURIComponent(pct));
}

/** Expands `t` with `values`; an undefined or empty variable is left out as RFC 6570 says. */
export function expandTemplate(t: string, values: Record<string, string>): string {
  return t.replace(/\{([^{}]*)\}/g, (whole, raw: string) => {
    let body = raw;
    let op: Op = "";
    if (body !== "" && OPS.has(body[0] ?? "")) {
      op = body[0] as Op;
      body = body.slice(1);
    }
    const names = body.split(",").map((n) => n.replace(/\*$/, "").replace(/:\d+$/, "").trim()).filter((n) => n !== "");
    if (names.length === 0) return whole;
    const reserved = op === "+" || op === "#";
    const parts: string[] = [];
    for (const n of names) {
      const v = values[n];
      if (v === undefined || v === "") continue;
      parts.push(op === "?" || op === "&" || op === ";" ? `${n}=${encode(v, false)}` : encode(v, reserved));
    }
    if (parts.length === 0) return "";
    switch (op) {
      case "": case "+": return parts.join(",");
      case "#": return `#${parts.join(",")}`;
      case "/": return `/${parts.join("/")}`;
      case ".": return `.${parts.join(".")}`;
      case "?": return `?${parts.join("&")}`;
      case "&": return `&${parts.join("&")}`;
      case ";": return `;${parts.join(";")}`;
    }
  });
}
