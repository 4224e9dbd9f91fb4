// The mesh form checks names by the server's rule before asking it: held here to the OpenAPI
// schema the server publishes, so the two cannot drift apart.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";

import { NAME_MAX, NAME_PATTERN } from "./meshErrors";

interface NameSchema {
  pattern?: string;
  maxLength?: number;
}
interface OpenApi {
  components: { schemas: Record<string, { properties?: Record<string, NameSchema> }> };
}

const openapi = parse(readFileSync(new URL("../../../backend/openapi.yaml", import.meta.url), "utf8")) as OpenApi;

describe("mesh and test names", () => {
  it.each(["MeshRequest", "PatchedMeshRequest", "MeshTestRequest"])("follow %s's name rule", (schema) => {
    const name = openapi.components.schemas[schema]?.properties?.name;
    expect(name).toEqual(expect.objectContaining({ pattern: NAME_PATTERN, maxLength: NAME_MAX }));
  });
});
