import { describe, expect, it } from "vitest";

import { parseTemplate } from "./psconfigTemplate";

describe("parseTemplate", () => {
  it("takes a JSON object", () => {
    const read = parseTemplate('{"addresses": {}, "groups": {}, "tests": {}, "tasks": {}}', "mesh.json");
    expect(read).toEqual({ ok: true, template: { addresses: {}, groups: {}, tests: {}, tasks: {} } });
  });

  it("says a file that is not JSON is not JSON, naming it", () => {
    const read = parseTemplate("addresses:\n  a: {}\n", "mesh.yaml");
    expect(read.ok).toBe(false);
    expect(read.ok ? "" : read.error).toMatch(/^mesh\.yaml is not JSON \(.+\); a pSConfig template is a JSON file\.$/);
  });

  it("refuses JSON that is not one object", () => {
    for (const text of ["[]", "null", '"template"', "42"]) {
      const read = parseTemplate(text, "x.json");
      expect(read.ok ? "" : read.error).toContain("x.json is JSON but not a pSConfig template");
    }
  });
});

describe("parseTemplate on a long file that is not JSON", () => {
  it("keeps the message short", () => {
    const read = parseTemplate(`x${"y".repeat(100_000)}`, "big.txt");
    expect(read.ok ? "" : read.error.length).toBeLessThan(250);
  });
});
