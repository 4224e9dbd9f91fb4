import { describe, expect, it } from "vitest";

import { ApiError } from "../api/client";
import { splitErrors } from "./formErrors";

describe("splitErrors", () => {
  it("puts known fields beside their inputs and the rest above the form", () => {
    const error = new ApiError(400, "…", {
      role: ["this is the last active admin: promote another first"],
      non_field_errors: ["not now"],
      colour: ["unknown field"],
    });
    expect(splitErrors(error, ["role", "email"])).toEqual({
      fields: { role: "this is the last active admin: promote another first" },
      general: "not now; colour: unknown field",
    });
  });

  it("keeps the server's sentence for errors without fields", () => {
    expect(splitErrors(new ApiError(403, "You do not have permission."), ["name"])).toEqual({
      fields: {},
      general: "You do not have permission.",
    });
    expect(splitErrors(new ApiError(400, "bad", { detail: "bad" }), ["name"]).general).toBe("bad");
  });

  it("is empty without an error", () => {
    expect(splitErrors(null, ["name"])).toEqual({ fields: {}, general: null });
    expect(splitErrors(new Error("boom"), []).general).toBe("unexpected error");
  });
});
