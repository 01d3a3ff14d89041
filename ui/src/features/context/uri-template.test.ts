import { describe, expect, it } from "vitest";
import { expandTemplate, templateVariables } from "./uri-template";

describe("URI templates", () => {
  it("lists variables once, in order", () => {
    expect(templateVariables("file:///{path}/{name}{?rev,path}")).toEqual(["path", "name", "rev"]);
    expect(templateVariables("test://static/resource/{id}")).toEqual(["id"]);
    expect(templateVariables("no/vars")).toEqual([]);
  });

  it("percent-encodes simple values so they cannot add path segments or queries", () => {
    expect(expandTemplate("test://r/{id}", { id: "a/b?c=d" })).toBe("test://r/a%2Fb%3Fc%3Dd");
    expect(expandTemplate("x://{id}", { id: "it's (1)*" })).toBe("x://it%27s%20%281%29%2A");
  });

  it("handles reserved, path, query and fragment operators", () => {
    expect(expandTemplate("file://{+path}", { path: "/home/me/a b" })).toBe("file:///home/me/a%20b");
    expect(expandTemplate("x://h{/a,b}", { a: "1", b: "2" })).toBe("x://h/1/2");
    expect(expandTemplate("x://h/s{?q,lang}", { q: "cats & dogs", lang: "en" })).toBe("x://h/s?q=cats%20%26%20dogs&lang=en");
    expect(expandTemplate("x://h/s{?q,lang}", { q: "x" })).toBe("x://h/s?q=x");
    expect(expandTemplate("x://h{#frag}", { frag: "a,b" })).toBe("x://h#a,b");
  });

  it("leaves out empty variables and keeps malformed braces literal", () => {
    expect(expandTemplate("x://h/{a}{?b}", {})).toBe("x://h/");
    expect(expandTemplate("x://h/{}", {})).toBe("x://h/{}");
  });
});
