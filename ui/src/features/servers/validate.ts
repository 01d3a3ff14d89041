// Validation of the add-server form as the user types. It mirrors the Rust checks
// (ServerSpec::validate) so mistakes show before submitting; Rust still validates everything.
import type { AddServerRequest, ValueEntry } from "../../ipc/bindings";

export type Errors = Partial<Record<string, string>>;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function entries(prefix: string, items: ValueEntry[], nameOk: RegExp, what: string, errors: Errors, kept: ReadonlySet<string>) {
  const seen = new Set<string>();
  items.forEach((e, i) => {
    const key = e.name.toLowerCase();
    if (!nameOk.test(e.name)) errors[`${prefix}.${i}.name`] = `not a valid ${what} name`;
    else if (seen.has(key)) errors[`${prefix}.${i}.name`] = `${e.name} is set twice`;
    seen.add(key);
    if (/[\r\n\0]/.test(e.value)) errors[`${prefix}.${i}.value`] = "no line breaks";
    if (e.secret && e.value === "" && !kept.has(e.name)) errors[`${prefix}.${i}.value`] = "enter the secret value";
  });
}

/** `keptSecrets`: names of secrets already stored (edit form), which may be left empty to keep. */
export function validate(req: AddServerRequest, keptSecrets: ReadonlySet<string> = new Set()): Errors {
  const errors: Errors = {};
  if (!NAME.test(req.name)) {
    errors.name = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";
  }
  if (req.kind === "stdio") {
    if (req.command.trim() === "") errors.command = "the command to run, e.g. npx or /usr/local/bin/server";
    else if (req.command.includes("/") && !req.command.startsWith("/")) {
      errors.command = "use a bare name found on PATH or an absolute path";
    }
    if (req.cwd !== "" && !req.cwd.startsWith("/")) errors.cwd = "an absolute directory";
    entries("env", req.env, ENV, "environment variable", errors, keptSecrets);
  } else {
    let url: URL | null = null;
    try {
      url = new URL(req.url);
    } catch {
      errors.url = "a full URL such as https://example.com/mcp";
    }
    if (url && url.protocol !== "https:" && url.protocol !== "http:") errors.url = "only http and https";
    if (url && (url.username || url.password)) errors.url = "no credentials in the URL; use a secret header";
    entries("headers", req.headers, HEADER, "header", errors, keptSecrets);
  }
  return errors;
}
