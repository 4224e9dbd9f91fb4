import { describe, expect, it } from "vitest";

import { ApiError, errorMessage, flattenErrors, readCookie } from "./client";

describe("errorMessage", () => {
  it("prefers the server's detail", () => {
    expect(errorMessage(400, { detail: "invalid username or password" })).toBe("invalid username or password");
  });

  it("joins field errors", () => {
    expect(errorMessage(400, { username: ["This field is required."], start: "must be before end" })).toBe(
      "username: This field is required.; start: must be before end",
    );
  });

  it("names nested fields by their path and leaves whole-request errors unnamed", () => {
    expect(errorMessage(400, { non_field_errors: ["not now"], matchers: [{ name: ["unknown label"] }] })).toBe(
      "not now; matchers.0.name: unknown label",
    );
  });

  it("falls back to the status for bodies it cannot read", () => {
    expect(errorMessage(502, null)).toBe("the server answered HTTP 502");
    expect(errorMessage(500, "x".repeat(400))).toBe("the server answered HTTP 500");
    expect(errorMessage(404, {})).toBe("the server answered HTTP 404");
  });

  it("shows a short plain-text body", () => {
    expect(errorMessage(503, "maintenance\n")).toBe("maintenance");
  });
});

describe("readCookie", () => {
  it("finds a cookie among others", () => {
    expect(readCookie("sessionid=abc; csrftoken=t%2Bk=n", "csrftoken")).toBe("t+k=n");
    expect(readCookie("xcsrftoken=1", "csrftoken")).toBeNull();
    expect(readCookie("", "csrftoken")).toBeNull();
  });
});

describe("ApiError", () => {
  it("treats 401 and 403 as a lost session", () => {
    expect(new ApiError(403, "no").isUnauthenticated).toBe(true);
    expect(new ApiError(401, "no").isUnauthenticated).toBe(true);
    expect(new ApiError(400, "no").isUnauthenticated).toBe(false);
  });
});

describe("ApiError.fieldErrors", () => {
  it("reads a 400 body field by field, the request's own complaint under the empty path", () => {
    const error = new ApiError(400, "x", { name: ["too long", "taken"], expires_at: "in the past", detail: "d" });
    expect(error.fieldErrors).toEqual({ name: "too long taken", expires_at: "in the past", "": "d" });
  });

  it("is empty for other statuses and odd bodies", () => {
    expect(new ApiError(403, "x", { name: ["no"] }).fieldErrors).toEqual({});
    expect(new ApiError(400, "x", "plain text").fieldErrors).toEqual({});
    expect(new ApiError(400, "x", [1, 2]).fieldErrors).toEqual({});
  });
});

describe("flattenErrors", () => {
  it("flattens nested errors to field paths", () => {
    expect(
      flattenErrors({
        tests: [{ spec: { duration_s: ["must be at most 300"] } }, {}],
        members: [{}, { agent: ['Object with name="x" does not exist.'] }],
        name: ["mesh with this name already exists."],
      }),
    ).toEqual({
      "tests.0.spec.duration_s": "must be at most 300",
      "members.1.agent": 'Object with name="x" does not exist.',
      name: "mesh with this name already exists.",
    });
  });

  it("keeps a list of messages on the field itself", () => {
    expect(flattenErrors({ tests: ["overbooks dca: 130 % of its time", "and dcb"] })).toEqual({
      tests: "overbooks dca: 130 % of its time and dcb",
    });
  });

  it("puts whole-object errors on the object's path", () => {
    expect(flattenErrors({ tests: [{ non_field_errors: ["bad"] }], detail: "nope", targets: { 1: ["not a host"] } })).toEqual({
      "tests.0": "bad",
      "": "nope",
      "targets.1": "not a host",
    });
    expect(flattenErrors("Server Error")).toEqual({ "": "Server Error" });
  });
});
